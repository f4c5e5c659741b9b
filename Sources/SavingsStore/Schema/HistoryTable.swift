import Foundation
import GRDB
import SavingsCore

/// How schema v14 keeps allocation history: by integers, as v12 and v13 keep transactions.
///
/// - `goal_ref` gives every goal a small integer `ref` (a trigger on `goal` adds it; deleting
///   the goal deletes it, and with it the goal's history rows), as `asset_ref` does for assets.
/// - `allocation_history.ref` is the rowid, handed out by `history_counter` (never reused, so
///   an id a client holds never names another row). A row's public id is derived from it
///   (`DerivedID.history`), unless the row has its own 16 bytes in `uuid`: rows written before v14 and
///   rows put back from a document or the earlier app's export keep the ids they had.
/// - `asset` and `goal` are the pair's integer keys; `timestamp` and `created_at` integer
///   milliseconds since 1970 (as `Timestamp` rounds them).
/// - A contribution names its history row by `history_ref`.
enum HistoryTable {
    static let migration = "v14-history-by-integer-keys"

    /// The columns every reader of a history row selects, `h` being the row, `r` its asset's
    /// `asset_ref` row and `g` its goal's `goal_ref` row.
    static let columns = "h.ref, h.uuid, r.id AS asset_id, g.id AS goal_id, h.amount, h.timestamp, h.created_at, h.month_label"
    static let from = "allocation_history h JOIN asset_ref r ON r.ref = h.asset JOIN goal_ref g ON g.ref = h.goal"

    static func migrate(_ db: Database) throws {
        let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM allocation_history") ?? 0
        try db.execute(sql: """
            CREATE TABLE goal_ref (
                ref INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE REFERENCES goal(id) ON DELETE CASCADE
            );
            INSERT INTO goal_ref (id) SELECT id FROM goal ORDER BY created_at, id;
            CREATE TRIGGER goal_ref_after_insert AFTER INSERT ON goal BEGIN
                INSERT INTO goal_ref (id) VALUES (NEW.id);
            END;
            CREATE TABLE history_v14 (
                ref INTEGER PRIMARY KEY,
                asset INTEGER NOT NULL REFERENCES asset_ref(ref) ON DELETE CASCADE,
                goal INTEGER NOT NULL REFERENCES goal_ref(ref) ON DELETE CASCADE,
                amount TEXT NOT NULL,
                timestamp INTEGER NOT NULL,
                created_at INTEGER NOT NULL,
                month_label TEXT NOT NULL,
                uuid BLOB
            );
            INSERT INTO history_v14 (asset, goal, amount, timestamp, created_at, month_label, uuid)
                SELECT r.ref, g.ref, h.amount, stored_milliseconds(h.timestamp), stored_milliseconds(h.created_at), h.month_label,
                       uuid_blob(h.id)
                  FROM allocation_history h JOIN asset_ref r ON r.id = h.asset_id JOIN goal_ref g ON g.id = h.goal_id
                 ORDER BY h.created_at, h.rowid;
            CREATE UNIQUE INDEX history_v14_by_uuid ON history_v14(uuid) WHERE uuid IS NOT NULL;
            CREATE TABLE history_counter (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                last INTEGER NOT NULL
            );
            INSERT INTO history_counter (id, last) VALUES (1, COALESCE((SELECT MAX(ref) FROM history_v14), 0));
            CREATE TABLE contribution_v14 (
                id TEXT PRIMARY KEY NOT NULL,
                goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
                asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
                transaction_ref INTEGER REFERENCES asset_transaction(ref) ON DELETE SET NULL,
                history_ref INTEGER REFERENCES allocation_history(ref) ON DELETE SET NULL,
                amount TEXT NOT NULL,
                date TEXT NOT NULL,
                created_at TEXT NOT NULL,
                undone_at TEXT
            );
            INSERT INTO contribution_v14 (id, goal_id, asset_id, transaction_ref, history_ref, amount, date, created_at, undone_at)
                SELECT c.id, c.goal_id, c.asset_id, c.transaction_ref, h.ref, c.amount, c.date, c.created_at, c.undone_at
                  FROM contribution c LEFT JOIN history_v14 h ON h.uuid = uuid_blob(c.history_id) ORDER BY c.rowid;
            DROP TABLE contribution;
            ALTER TABLE contribution_v14 RENAME TO contribution;
            DROP TABLE allocation_history;
            ALTER TABLE history_v14 RENAME TO allocation_history;
            DROP INDEX history_v14_by_uuid;
            CREATE UNIQUE INDEX allocation_history_by_uuid ON allocation_history(uuid) WHERE uuid IS NOT NULL;
            \(indexes)
            """)
        let after = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM allocation_history") ?? 0
        guard after == before, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM goal WHERE id NOT IN (SELECT id FROM goal_ref)") == 0 else {
            throw StoreError.corrupt("the v14 migration kept \(after) of \(before) allocation history rows")
        }
    }

    /// Each index serves a query (`HistoryTableTests` holds their plans):
    /// - by pair: the row in force at an instant and the rows after it (every allocation
    ///   change), the pair's newest target;
    /// - by pair, created: the pair's newest `created_at` (every allocation change), without
    ///   walking the pair's rows;
    /// - by asset and time: the target changes inside an execution window in their order, the
    ///   first after it;
    /// - by goal: the assets that funded a goal (`tx.list --goal`), `allocation.history --goal`,
    ///   and deleting a goal's rows with it.
    static let indexes = """
        CREATE INDEX allocation_history_by_pair ON allocation_history(asset, goal, timestamp, created_at);
        CREATE INDEX allocation_history_by_pair_created ON allocation_history(asset, goal, created_at);
        CREATE INDEX allocation_history_by_asset_time ON allocation_history(asset, timestamp, created_at);
        CREATE INDEX allocation_history_by_goal ON allocation_history(goal, timestamp);
        """

    /// The id of a row made before `insert` gives it its ref.
    static let unassigned = UUID(uuid: (0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0))

    /// The integer keys of a pair (both must be stored).
    static func pairRefs(assetID: UUID, goalID: UUID, _ db: Database) throws -> (asset: Int64, goal: Int64) {
        (try SavingsDatabase.assetRef(StoreKey.id(assetID), db), try goalRef(StoreKey.id(goalID), db))
    }

    /// The integer key of a stored goal.
    static func goalRef(_ goalID: String, _ db: Database) throws -> Int64 {
        guard let ref = try Int64.fetchOne(db.cachedStatement(sql: "SELECT ref FROM goal_ref WHERE id = ?"), arguments: [goalID]) else {
            throw StoreError.corrupt("goal \(goalID) has no ref")
        }
        return ref
    }

    /// Writes rows of one pair, several rows a statement, then tells the window cache once (at
    /// the earliest timestamp). New rows take the next refs and the ids derived from them; with
    /// `keepIDs` (a document, the earlier app's export) a row keeps its id: at the ref it was
    /// derived from, or in `uuid`. Returns the rows as stored (ids as given them).
    @discardableResult
    static func insert(_ entries: [AllocationHistoryEntry], asset: Int64, goal: Int64, keepIDs: Bool,
                       _ db: Database) throws -> [AllocationHistoryEntry] {
        guard let first = entries.first else { return [] }
        // New rows take their refs in one step.
        var next = keepIDs ? 0 : try RefTable.history.take(entries.count, db)
        var stored = entries
        var values: [(any DatabaseValueConvertible)?] = []
        values.reserveCapacity(min(entries.count, insertRows) * 8)
        try WindowCache.touching(db, assetID: StoreKey.id(first.assetID)) {
            var earliest = Int64.max
            var rows = InsertRuns.rows(stored.count, largest: insertRows), written = 0
            for index in stored.indices {
                let entry = stored[index]
                let ref: Int64, uuid: Data?
                if keepIDs {
                    (ref, uuid, _) = try RefTable.history.place(entry.id, keepID: true, db)
                } else {
                    ref = next
                    next += 1
                    uuid = nil
                    stored[index].id = DerivedID.history.derived(ref: ref)
                }
                let timestamp = Timestamp.milliseconds(entry.timestamp)
                earliest = min(earliest, timestamp)
                values += [ref, asset, goal, Amount.plainText(entry.amount), timestamp, Timestamp.milliseconds(entry.createdAt),
                           entry.monthLabel.description, uuid]
                // A statement per run of rows, not per row (a deposit writes one, an import's
                // allocation thousands).
                if index + 1 - written == rows {
                    try db.cachedStatement(sql: insertSQL[rows]!).execute(arguments: StatementArguments(values))
                    values.removeAll(keepingCapacity: true)
                    written = index + 1
                    rows = InsertRuns.rows(stored.count - written, largest: insertRows)
                }
            }
            return earliest
        }
        return stored
    }

    /// Rows an INSERT of `insert` writes at most.
    private static let insertRows = 64

    /// The INSERTs of `insert` by their rows (`InsertRuns`), eight parameters a row.
    private static let insertSQL = Dictionary(uniqueKeysWithValues: InsertRuns.sizes(upTo: insertRows).map { rows in
        (rows, "INSERT INTO allocation_history (ref, asset, goal, amount, timestamp, created_at, month_label, uuid) VALUES "
            + repeatElement("(?, ?, ?, ?, ?, ?, ?, ?)", count: rows).joined(separator: ", "))
    })

    /// Sets a stored row's amount (a later row shifted by an earlier change).
    static func setAmount(ref: Int64, _ amount: Decimal, _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE allocation_history SET amount = ? WHERE ref = ?").execute(arguments: [Amount.plainText(amount), ref])
    }

    static func delete(ref: Int64, _ db: Database) throws {
        try db.cachedStatement(sql: "DELETE FROM allocation_history WHERE ref = ?").execute(arguments: [ref])
    }
}

/// An allocation-history row as read (`HistoryTable.columns`).
struct HistoryRecord: RefRecord {
    static let table = RefTable.history
    static let alias = "h"
    static let columns = HistoryTable.columns
    static let from = HistoryTable.from
    static let order = "h.timestamp, h.created_at, h.ref"

    var ref: Int64
    var uuid: Data?
    var assetID: String
    var goalID: String
    var amount: String
    /// Milliseconds since 1970, as `timestamp` and `created_at` are stored.
    var timestamp: Int64
    var createdAt: Int64
    var monthLabel: String

    init(row: Row) {
        ref = row["ref"]
        uuid = row["uuid"]
        assetID = row["asset_id"]
        goalID = row["goal_id"]
        amount = row["amount"]
        timestamp = row["timestamp"]
        createdAt = row["created_at"]
        monthLabel = row["month_label"]
    }

    func entry() throws -> AllocationHistoryEntry {
        try StoreKey.decoding("allocation history \(ref)") {
            AllocationHistoryEntry(id: try publicID, assetID: try StoreKey.uuid(assetID), goalID: try StoreKey.uuid(goalID),
                                   amount: try Amount.parse(amount), timestamp: Timestamp.date(milliseconds: timestamp),
                                   createdAt: Timestamp.date(milliseconds: createdAt), monthLabel: try MonthLabel(parsing: monthLabel))
        }
    }

    /// The rows a statement selecting `HistoryTable.columns` gives.
    static func fetchAll(_ statement: Statement, arguments: StatementArguments) throws -> [HistoryRecord] {
        try Row.fetchAll(statement, arguments: arguments).map(HistoryRecord.init(row:))
    }

    static func fetchOne(_ statement: Statement, arguments: StatementArguments) throws -> HistoryRecord? {
        try Row.fetchOne(statement, arguments: arguments).map(HistoryRecord.init(row:))
    }

    static func fetchOne(ref: Int64, _ db: Database) throws -> HistoryRecord? {
        try fetchAll(where: "h.ref = ?", arguments: [ref], db).first
    }
}
