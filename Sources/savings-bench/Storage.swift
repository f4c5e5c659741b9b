import Foundation
import SavingsCore
import SavingsRPC
import SavingsStore

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
    // v11's own definitions, from the store's migrations run up to v11 on an empty file. The
    // balance triggers call savingsd's decimal addition, so they are made after the rows are in
    // (the totals are already right).
    let replaced = ["allocation_history", "monthly_plan", "legacy_contribution", "asset_transaction", "contribution"]
    let v11 = try EarlierSchema.write(at: work + "/v11-template.db", upTo: EarlierSchema.v11)
    for suffix in ["", "-wal", "-shm"] { try? FileManager.default.removeItem(atPath: work + "/v11-template.db" + suffix) }
    func definitions(_ type: String) -> String {
        v11.filter { $0.type == type && replaced.contains($0.table) }.map { $0.sql + ";" }.joined(separator: "\n")
    }
    guard v11.filter({ $0.type == "table" && replaced.contains($0.name) }).count == replaced.count else {
        throw BenchError("schema v11 lacks one of \(replaced.joined(separator: ", "))")
    }
    try run(sqlite3, [copy], input: """
        PRAGMA foreign_keys = OFF;
        BEGIN;
        CREATE TEMP TABLE history_rows AS
            SELECT \(publicIDSQL(tag: 1, ref: "h.ref", uuid: "h.uuid")) AS id,
                   r.id AS asset_id, g.id AS goal_id, h.amount AS amount,
                   strftime('%Y-%m-%dT%H:%M:%S', h.timestamp / 1000, 'unixepoch') || printf('.%03dZ', h.timestamp % 1000) AS timestamp,
                   strftime('%Y-%m-%dT%H:%M:%S', h.created_at / 1000, 'unixepoch') || printf('.%03dZ', h.created_at % 1000) AS created_at,
                   h.month_label AS month_label
              FROM allocation_history h JOIN asset_ref r ON r.ref = h.asset JOIN goal_ref g ON g.ref = h.goal ORDER BY h.ref;
        CREATE TEMP TABLE plan_rows AS
            SELECT \(publicIDSQL(tag: 2, ref: "p.ref", uuid: "p.uuid")) AS id, g.id AS goal_id, p.month_label, p.currency, p.required_monthly,
                   p.remaining_amount, p.months_remaining, p.status, p.state, p.custom_amount, p.is_protected, p.is_skipped, p.needs_review,
                   p.created_at, p.updated_at
              FROM monthly_plan p JOIN goal_ref g ON g.ref = p.goal ORDER BY p.ref;
        CREATE TEMP TABLE legacy_rows AS
            SELECT l.id, l.goal_id, l.asset_id, CASE WHEN p.ref IS NULL THEN NULL ELSE \(publicIDSQL(tag: 2, ref: "p.ref", uuid: "p.uuid")) END AS plan_id,
                   l.amount, l.currency, l.date, l.month_label, l.source_type, l.created_at
              FROM legacy_contribution l LEFT JOIN monthly_plan p ON p.ref = l.plan_ref ORDER BY l.rowid;
        CREATE TEMP TABLE staged (id, asset_id, amount, date, source, note, external_id, created_at);
        .import --csv \(staged) staged
        DROP TABLE asset_transaction;
        DROP TABLE transaction_counter;
        DROP TABLE contribution;
        DROP TABLE contribution_counter;
        DROP TRIGGER asset_ref_after_insert;
        DROP TABLE legacy_contribution;
        DROP TABLE monthly_plan;
        DROP TABLE plan_counter;
        DROP TABLE allocation_history;
        DROP TABLE history_counter;
        DROP TRIGGER goal_ref_after_insert;
        DROP TABLE goal_ref;
        DROP TABLE asset_ref;
        DROP TABLE asset_link;
        \(definitions("table"))
        INSERT INTO allocation_history (id, asset_id, goal_id, amount, timestamp, created_at, month_label)
            SELECT id, asset_id, goal_id, amount, timestamp, created_at, month_label FROM history_rows;
        INSERT INTO monthly_plan (id, goal_id, month_label, currency, required_monthly, remaining_amount, months_remaining, status, state,
                                  custom_amount, is_protected, is_skipped, needs_review, created_at, updated_at)
            SELECT * FROM plan_rows;
        INSERT INTO legacy_contribution (id, goal_id, asset_id, plan_id, amount, currency, date, month_label, source_type, created_at)
            SELECT * FROM legacy_rows;
        INSERT INTO asset_transaction (id, asset_id, amount, date, source, note, external_id, created_at)
            SELECT id, asset_id, amount, date, source, NULLIF(note, ''), NULLIF(external_id, ''), created_at FROM staged;
        \(definitions("index"))
        \(definitions("trigger"))
        ALTER TABLE asset_balance DROP COLUMN newest;
        -- Every migration after v11 is to run again, whatever their number by now.
        DELETE FROM grdb_migrations WHERE rowid > (SELECT rowid FROM grdb_migrations WHERE identifier = '\(EarlierSchema.v11)');
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
