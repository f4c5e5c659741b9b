import Foundation
import SavingsCore
import SavingsRPC

// What the benchmark's rows take on disk, and the upgrade of a database as the previous schema
// (v11) kept them.

/// Bytes of a database file with its WAL and shared-memory files.
func databaseBytes(_ path: String) -> Int {
    ["", "-wal", "-shm"].reduce(0) { total, suffix in
        total + ((try? FileManager.default.attributesOfItem(atPath: path + suffix)[.size] as? Int) ?? 0)
    }
}

/// Makes `copy` the benchmark's database as schema v11 kept it: 36-character text ids as the
/// key of every transaction and allocation-history row and of their assets and goals, every
/// external_id and instant as text, balances kept by triggers. The rows are the current database's own, read back with their public ids, so the
/// upgrade savingsd then runs meets what an upgrade from the previous release meets.
func writeV11Copy(of database: String, to copy: String, sqlite3: String, work: String) throws {
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: copy + suffix) }
    // The benchmark records no contribution: the v11 table is made empty.
    guard try run(sqlite3, ["-readonly", database], input: "SELECT COUNT(*) FROM contribution;").trimmingCharacters(in: .whitespacesAndNewlines) == "0" else {
        throw BenchError("the v11 copy does not carry contributions over")
    }
    try run(sqlite3, ["-readonly", database], input: "VACUUM INTO '\(copy)';")
    let fieldSeparator = "\u{1F}", null = "\u{1E}"
    let rows = work + "/v12-rows.txt", staged = work + "/v11-rows.csv"
    try run(sqlite3, ["-readonly", database], input: """
        .mode list
        .separator "\(fieldSeparator)" "\\n"
        .nullvalue "\(null)"
        .output \(rows)
        SELECT t.ref, hex(t.uuid), r.id, t.amount, t.date, t.kind, t.note, t.kind IN (0, 4, 5), t.external_id, t.created_at
          FROM asset_transaction t JOIN asset_ref r ON r.ref = t.asset ORDER BY t.ref;
        """)
    let out = try Writer(path: staged)
    func quoted(_ field: String?) -> String { field.map { "\"" + $0.replacingOccurrences(of: "\"", with: "\"\"") + "\"" } ?? "" }
    for line in try String(contentsOfFile: rows, encoding: .utf8).split(separator: "\n", omittingEmptySubsequences: true) {
        let fields = line.split(separator: Character(fieldSeparator), omittingEmptySubsequences: false).map { $0 == null ? nil : String($0) }
        guard fields.count == 10, let ref = fields[0].flatMap({ Int64($0) }) else { throw BenchError("unreadable stored row: \(line.prefix(200))") }
        let id: String
        if let hex = fields[1], hex.count == 32 {
            let digits = Array(hex.lowercased())
            id = [0..<8, 8..<12, 12..<16, 16..<20, 20..<32].map { String(digits[$0]) }.joined(separator: "-")
        } else {
            id = DerivedID.transactions.derived(ref: ref).uuidString.lowercased()
        }
        // v13 keeps instants as integer milliseconds and the source in `kind` (`TransactionKind`).
        guard let date = fields[4].flatMap({ Int64($0) }).map({ Timestamp.format(milliseconds: $0) }),
              let createdAt = fields[9].flatMap({ Int64($0) }).map({ Timestamp.format(milliseconds: $0) }),
              let kind = fields[5].flatMap({ Int($0) }), (0...5).contains(kind) else { throw BenchError("unreadable stored row: \(line.prefix(200))") }
        let source = ["import", "import", "manual", "onchain", "manual", "onchain"][kind]
        let externalID = fields[8] ?? (fields[7] == "1"
            ? TransactionCSVRow.contentKey(TransactionCSVRow.contentHash(dateText: date, amountText: fields[3] ?? "", note: fields[6]))
            : nil)
        out.write([id, fields[2], fields[3], date, source, fields[6], externalID, createdAt].map(quoted).joined(separator: ",") + "\n")
    }
    try out.close()
    try? FileManager.default.removeItem(atPath: rows)
    // v11's own definitions (schema v2 and v6); its balance triggers call savingsd's decimal
    // addition, so they are made after the rows are in (the totals are already right).
    try run(sqlite3, [copy], input: """
        PRAGMA foreign_keys = OFF;
        BEGIN;
        DROP TABLE asset_transaction;
        DROP TABLE transaction_counter;
        DROP TABLE contribution;
        DROP TABLE contribution_counter;
        DROP TRIGGER asset_ref_after_insert;
        CREATE TABLE history_v11 (
            id TEXT PRIMARY KEY NOT NULL,
            asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
            goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
            amount TEXT NOT NULL,
            timestamp TEXT NOT NULL,
            created_at TEXT NOT NULL,
            month_label TEXT NOT NULL
        );
        INSERT INTO history_v11
            SELECT \(publicIDSQL(tag: 1, ref: "h.ref", uuid: "h.uuid")),
                   r.id, g.id, h.amount,
                   strftime('%Y-%m-%dT%H:%M:%S', h.timestamp / 1000, 'unixepoch') || printf('.%03dZ', h.timestamp % 1000),
                   strftime('%Y-%m-%dT%H:%M:%S', h.created_at / 1000, 'unixepoch') || printf('.%03dZ', h.created_at % 1000),
                   h.month_label
              FROM allocation_history h JOIN asset_ref r ON r.ref = h.asset JOIN goal_ref g ON g.ref = h.goal ORDER BY h.ref;
        CREATE TABLE plan_v11 (
            id TEXT PRIMARY KEY NOT NULL,
            goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
            month_label TEXT NOT NULL,
            currency TEXT NOT NULL,
            required_monthly TEXT NOT NULL,
            remaining_amount TEXT NOT NULL,
            months_remaining INTEGER NOT NULL,
            status TEXT NOT NULL CHECK (status IN ('on_track', 'attention', 'critical', 'completed')),
            state TEXT NOT NULL CHECK (state IN ('draft', 'executing', 'completed')),
            custom_amount TEXT,
            is_protected INTEGER NOT NULL DEFAULT 0,
            is_skipped INTEGER NOT NULL DEFAULT 0,
            needs_review INTEGER NOT NULL DEFAULT 0,
            created_at TEXT NOT NULL,
            updated_at TEXT NOT NULL,
            UNIQUE (goal_id, month_label)
        );
        INSERT INTO plan_v11
            SELECT \(publicIDSQL(tag: 2, ref: "p.ref", uuid: "p.uuid")), g.id, p.month_label, p.currency, p.required_monthly, p.remaining_amount,
                   p.months_remaining, p.status, p.state, p.custom_amount, p.is_protected, p.is_skipped, p.needs_review, p.created_at, p.updated_at
              FROM monthly_plan p JOIN goal_ref g ON g.ref = p.goal ORDER BY p.ref;
        CREATE TABLE legacy_v11 (
            id TEXT PRIMARY KEY NOT NULL,
            goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
            asset_id TEXT REFERENCES asset(id) ON DELETE SET NULL,
            plan_id TEXT REFERENCES monthly_plan(id) ON DELETE SET NULL,
            amount TEXT NOT NULL,
            currency TEXT NOT NULL,
            date TEXT NOT NULL,
            month_label TEXT NOT NULL,
            source_type TEXT,
            created_at TEXT NOT NULL
        );
        INSERT INTO legacy_v11
            SELECT l.id, l.goal_id, l.asset_id, CASE WHEN p.ref IS NULL THEN NULL ELSE \(publicIDSQL(tag: 2, ref: "p.ref", uuid: "p.uuid")) END,
                   l.amount, l.currency, l.date, l.month_label, l.source_type, l.created_at
              FROM legacy_contribution l LEFT JOIN monthly_plan p ON p.ref = l.plan_ref ORDER BY l.rowid;
        DROP TABLE legacy_contribution;
        DROP TABLE monthly_plan;
        DROP TABLE plan_counter;
        ALTER TABLE plan_v11 RENAME TO monthly_plan;
        ALTER TABLE legacy_v11 RENAME TO legacy_contribution;
        CREATE INDEX monthly_plan_by_month ON monthly_plan(month_label, state);
        CREATE INDEX monthly_plan_by_state ON monthly_plan(state, month_label);
        CREATE INDEX legacy_contribution_by_goal ON legacy_contribution(goal_id, month_label);
        DROP TABLE allocation_history;
        DROP TABLE history_counter;
        DROP TRIGGER goal_ref_after_insert;
        DROP TABLE goal_ref;
        ALTER TABLE history_v11 RENAME TO allocation_history;
        CREATE INDEX allocation_history_by_pair ON allocation_history(asset_id, goal_id, timestamp, created_at);
        CREATE INDEX allocation_history_by_goal ON allocation_history(goal_id, timestamp);
        CREATE INDEX allocation_history_by_asset_time ON allocation_history(asset_id, timestamp);
        CREATE INDEX allocation_history_by_pair_created ON allocation_history(asset_id, goal_id, created_at);
        DROP TABLE asset_ref;
        CREATE TABLE asset_transaction (
            id TEXT PRIMARY KEY NOT NULL,
            asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
            amount TEXT NOT NULL,
            date TEXT NOT NULL,
            source TEXT NOT NULL CHECK (source IN ('manual', 'onchain', 'import')),
            note TEXT,
            external_id TEXT,
            created_at TEXT NOT NULL,
            UNIQUE (asset_id, external_id)
        );
        CREATE TABLE contribution (
            id TEXT PRIMARY KEY NOT NULL,
            goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
            asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
            transaction_id TEXT REFERENCES asset_transaction(id) ON DELETE SET NULL,
            history_id TEXT REFERENCES allocation_history(id) ON DELETE SET NULL,
            amount TEXT NOT NULL,
            date TEXT NOT NULL,
            created_at TEXT NOT NULL,
            undone_at TEXT
        );
        CREATE TEMP TABLE staged (id, asset_id, amount, date, source, note, external_id, created_at);
        .import --csv \(staged) staged
        INSERT INTO asset_transaction SELECT id, asset_id, amount, date, source, NULLIF(note, ''), NULLIF(external_id, ''), created_at FROM staged;
        CREATE INDEX asset_transaction_by_asset_date ON asset_transaction(asset_id, date, amount);
        CREATE TRIGGER asset_balance_after_insert AFTER INSERT ON asset_transaction BEGIN
            INSERT INTO asset_balance (asset_id, total) VALUES (NEW.asset_id, NEW.amount)
            ON CONFLICT(asset_id) DO UPDATE SET total = decimal_add(total, NEW.amount);
        END;
        CREATE TRIGGER asset_balance_after_delete AFTER DELETE ON asset_transaction BEGIN
            UPDATE asset_balance SET total = decimal_add(total, '-' || OLD.amount) WHERE asset_id = OLD.asset_id;
        END;
        CREATE TRIGGER asset_balance_after_update AFTER UPDATE OF amount, asset_id ON asset_transaction BEGIN
            UPDATE asset_balance SET total = decimal_add(total, '-' || OLD.amount) WHERE asset_id = OLD.asset_id;
            INSERT INTO asset_balance (asset_id, total) VALUES (NEW.asset_id, NEW.amount)
            ON CONFLICT(asset_id) DO UPDATE SET total = decimal_add(total, NEW.amount);
        END;
        ALTER TABLE asset_balance DROP COLUMN newest;
        DROP TABLE asset_link;
        -- Every migration after v11 is to run again, whatever their number by now.
        DELETE FROM grdb_migrations WHERE rowid > (SELECT rowid FROM grdb_migrations WHERE identifier = 'v11-onchain-watch');
        COMMIT;
        VACUUM;
        """)
    try? FileManager.default.removeItem(atPath: staged)
}

/// SQL for a row's public id (`DerivedID`): its 16 stored bytes as text, or the id its ref
/// derives with the table's tag byte.
func publicIDSQL(tag: Int, ref: String, uuid: String) -> String {
    """
    CASE WHEN \(uuid) IS NULL THEN printf('73617664-00%02x-8000-80%02x-%012x', \(tag), (\(ref) >> 48) & 255, \(ref) & 281474976710655)
         ELSE lower(substr(hex(\(uuid)), 1, 8) || '-' || substr(hex(\(uuid)), 9, 4) || '-' || substr(hex(\(uuid)), 13, 4) || '-'
                    || substr(hex(\(uuid)), 17, 4) || '-' || substr(hex(\(uuid)), 21, 12)) END
    """
}

/// `page_count × page_size` of a database (what its pages take, without the WAL).
func pageBytes(_ path: String, sqlite3: String) throws -> Int {
    let text = try run(sqlite3, ["-readonly", path], input: "SELECT page_count * page_size FROM pragma_page_count(), pragma_page_size();")
    guard let bytes = Int(text.trimmingCharacters(in: .whitespacesAndNewlines)) else { throw BenchError("no page count for \(path): \(text)") }
    return bytes
}

/// For context: what SQLite alone takes to store the imported rows in the table and indexes
/// savingsd keeps them in (its own schema, without triggers, the rows as stored), and what the
/// rows take on disk beside the bare table of the same rows.
func schemaContext(database: String, bareDatabase: String, sqlite3: String, work: String, rows: Int, importRate: Double,
                   bareRate: Double, runs: Int) throws -> (figures: [Figure], notes: [String]) {
    let storedRows = work + "/stored.csv"
    let tableSchema = try run(sqlite3, ["-readonly", database], input: """
        SELECT sql || ';' FROM sqlite_master WHERE tbl_name = 'asset_transaction' AND type IN ('table', 'index') AND sql IS NOT NULL
           AND name NOT IN ('asset_transaction_by_uuid', 'asset_transaction_by_key');
        """)
    // The history's rows: keyed by their content (the file gives no external_id).
    try run(sqlite3, ["-readonly", "-csv", database], input: """
        .output \(storedRows)
        SELECT * FROM asset_transaction WHERE kind = 0 ORDER BY ref;
        """)
    var schemaImport = Samples()
    for attempt in 0..<runs {
        let path = work + "/schema-import-\(attempt).db"
        try schemaImport.time {
            try run(sqlite3, [path], input: "PRAGMA journal_mode=WAL;\n\(tableSchema)\n.import --csv \(storedRows) asset_transaction\n")
        }
        let count = try run(sqlite3, ["-readonly", path], input: "SELECT COUNT(*) FROM asset_transaction;").trimmingCharacters(in: .whitespacesAndNewlines)
        guard Int(count) == rows else { throw BenchError("sqlite3 stored \(count) of savingsd's rows, expected \(rows)") }
        for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: path + suffix) }
    }
    try? FileManager.default.removeItem(atPath: storedRows)
    let schemaRate = Double(rows) / schemaImport.median
    var figures = [Figure(name: "`tx.import` of \(rows) CSV rows, against SQLite alone storing the same rows in savingsd's table",
                          median: rate(importRate), p99: "—",
                          baseline: "`sqlite3 .import` of the stored rows into savingsd's table and indexes: " + rate(schemaRate),
                          ratio: ratio(importRate / schemaRate), target: "—", met: nil)]
    let notes = [String(format: "sqlite3 .import of savingsd's stored rows (keyed by their content, so with no external key) into its asset_transaction table (each account's rows in date order) with its index of refs (not the partial indexes of external keys and of ids kept from before schema v12, which hold none of these rows and which the shell's .import, having no NULL, would fill), without savingsd's work per row, runs at %.2f× the bare-table baseline's rate (savingsd's tx.import: %.2f×)",
                                schemaRate / bareRate, importRate / bareRate)]

    let counted = try run(sqlite3, ["-readonly", database], input: """
        SELECT (SELECT SUM(pgsize) FROM dbstat WHERE name IN (SELECT name FROM sqlite_master WHERE tbl_name = 'asset_transaction')),
               (SELECT COUNT(*) FROM asset_transaction);
        """).trimmingCharacters(in: .whitespacesAndNewlines).split(separator: "|").compactMap { Int($0) }
    guard counted.count == 2, counted[1] > 0 else { throw BenchError("no page sizes from dbstat") }
    let perTransaction = Double(counted[0]) / Double(counted[1])
    let whole = Double(try pageBytes(database, sqlite3: sqlite3)) / Double(counted[1])
    let bare = Double(try pageBytes(bareDatabase, sqlite3: sqlite3)) / Double(rows)
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: bareDatabase + suffix) }
    figures.append(Figure(name: "database bytes per stored transaction (its table and indexes; the whole file, with allocation history and plans, in brackets)",
                          median: String(format: "%.0f B (%.0f B)", perTransaction, whole), p99: "—",
                          baseline: String(format: "the bare table of the same rows (`sqlite3 .import`): %.0f B", bare),
                          ratio: ratio(perTransaction / bare), target: "≤ 2×", met: perTransaction / bare <= 2))
    return (figures, notes)
}

/// The upgrade from schema v11 of the benchmark's database (stopped): start to READY=1 takes
/// the automatic backup and the migration, in one transaction; then `db.check`.
@MainActor
func upgradeFigures(database: String, savingsd: String, sqlite3: String, work: String, transactions: Int) throws -> (figures: [Figure], notes: [String]) {
    let directory = work + "/v11"
    try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
    let copy = directory + "/savings.db"
    try writeV11Copy(of: database, to: copy, sqlite3: sqlite3, work: work)
    let before = try pageBytes(copy, sqlite3: sqlite3), current = try pageBytes(database, sqlite3: sqlite3)
    let upgraded = try DaemonUnderTest(executable: savingsd, directory: directory, database: copy)
    let checkStart = monotonicSeconds()
    let report = try upgraded.client().call("db.check", [:], timeoutMilliseconds: 3_600_000)
    let checkSeconds = monotonicSeconds() - checkStart
    upgraded.stop()
    guard report["ok"]?.boolValue == true else { throw BenchError("db.check after the upgrade: \(JSONSerializer.serialize(report))") }
    // The upgraded copy has every table, index and trigger a database written new has, and has
    // run every migration (a copy that still listed a later migration as applied skipped it).
    let shape = "SELECT group_concat(type || ' ' || name, ', ') FROM (SELECT type, name FROM sqlite_master WHERE name NOT LIKE 'sqlite_%' ORDER BY type, name);"
        + " SELECT group_concat(identifier, ', ') FROM (SELECT identifier FROM grdb_migrations ORDER BY rowid);"
    let upgradedShape = try run(sqlite3, ["-readonly", copy], input: shape), currentShape = try run(sqlite3, ["-readonly", database], input: shape)
    guard upgradedShape == currentShape else {
        throw BenchError("the upgraded copy's schema differs from a new database's:\n\(upgradedShape)\nagainst\n\(currentShape)")
    }
    let migrations = currentShape.split(separator: "\n").last.map { $0.split(separator: ",").count } ?? 0
    let after = try pageBytes(copy, sqlite3: sqlite3)
    try? FileManager.default.removeItem(atPath: directory)
    return ([Figure(name: "upgrade of that database from schema v11 (\(transactions) transactions): start to READY=1: the automatic backup, the migration in one transaction, the file rewritten once",
                    median: String(format: "%.1f s", upgraded.startSeconds), p99: "—", baseline: "—", ratio: "—", target: "≤ 60 s",
                    met: upgraded.startSeconds <= 60)],
            [String(format: "after the upgrade `db.check` (SQLite's integrity check, foreign keys, every invariant, balances against the rows) took %.1f s and found it sound; the file held %@ as v11, %@ upgraded (%@ for this run's database, written with the current schema (v%d) from the start)",
                    checkSeconds, mb(before), mb(after), mb(current), migrations)])
}
