import Foundation
import GRDB
import SavingsCore

/// How schema v17 keeps `goal.contribute`'s records, a table that grows with every
/// contribution: by integers, as v14 keeps allocation history and v16 plans.
///
/// - `contribution.ref` is the rowid, handed out by `contribution_counter` (never reused); a
///   contribution's public id is derived from it (`DerivedID.contributions`) unless the row has its own
///   16 bytes in `uuid` (written before v17, or put back from a document).
/// - `goal` and `asset` are the `goal_ref` and `asset_ref` keys; the transaction and the history
///   row a contribution made are `transaction_ref` and `history_ref`, as since v12 and v14.
enum ContributionTable {
    static let migration = "v17-contributions-by-integer-keys"

    static func migrate(_ db: Database) throws {
        let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM contribution") ?? 0
        try db.execute(sql: """
            CREATE TABLE contribution_v17 (
                ref INTEGER PRIMARY KEY,
                goal INTEGER NOT NULL REFERENCES goal_ref(ref) ON DELETE CASCADE,
                asset INTEGER NOT NULL REFERENCES asset_ref(ref) ON DELETE CASCADE,
                transaction_ref INTEGER REFERENCES asset_transaction(ref) ON DELETE SET NULL,
                history_ref INTEGER REFERENCES allocation_history(ref) ON DELETE SET NULL,
                amount TEXT NOT NULL,
                date TEXT NOT NULL,
                created_at TEXT NOT NULL,
                undone_at TEXT,
                uuid BLOB
            );
            INSERT INTO contribution_v17 (goal, asset, transaction_ref, history_ref, amount, date, created_at, undone_at, uuid)
                SELECT g.ref, r.ref, c.transaction_ref, c.history_ref, c.amount, c.date, c.created_at, c.undone_at, uuid_blob(c.id)
                  FROM contribution c JOIN goal_ref g ON g.id = c.goal_id JOIN asset_ref r ON r.id = c.asset_id ORDER BY c.rowid;
            CREATE TABLE contribution_counter (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                last INTEGER NOT NULL
            );
            INSERT INTO contribution_counter (id, last) VALUES (1, COALESCE((SELECT MAX(ref) FROM contribution_v17), 0));
            DROP TABLE contribution;
            ALTER TABLE contribution_v17 RENAME TO contribution;
            CREATE UNIQUE INDEX contribution_by_uuid ON contribution(uuid) WHERE uuid IS NOT NULL;
            """)
        let after = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM contribution") ?? 0
        guard after == before else { throw StoreError.corrupt("the v17 migration kept \(after) of \(before) contributions") }
    }

    /// The columns a document holds of a contribution (its goal, asset, transaction and
    /// history row by their public ids).
    static let documentColumns = ["id", "goal_id", "asset_id", "transaction_id", "history_id", "amount", "date", "created_at", "undone_at"]

    /// A contribution as a document holds it.
    static let documentSQL = """
        SELECT \(RefTable.contributions.publicIDSQL("c")) AS id, g.id AS goal_id, r.id AS asset_id,
               \(RefTable.transactions.publicIDSQL("t")) AS transaction_id, \(RefTable.history.publicIDSQL("h")) AS history_id,
               c.amount, c.date, c.created_at, c.undone_at
          FROM contribution c JOIN goal_ref g ON g.ref = c.goal JOIN asset_ref r ON r.ref = c.asset
          LEFT JOIN asset_transaction t ON t.ref = c.transaction_ref LEFT JOIN allocation_history h ON h.ref = c.history_ref
         ORDER BY c.ref
        """

    /// Writes a contribution: a new one under the id its ref derives (not `keepID`), or one
    /// keeping its id. `transaction` and `history` are SQL giving the refs from their arguments.
    /// Returns its id.
    @discardableResult
    static func insert(id: UUID, keepID: Bool, goalID: String, assetID: String, transaction: (sql: String, arguments: [(any DatabaseValueConvertible)?]),
                       history: (sql: String, arguments: [(any DatabaseValueConvertible)?]), amount: String, date: String, createdAt: String,
                       undoneAt: String?, _ db: Database) throws -> UUID {
        let place = try RefTable.contributions.place(id, keepID: keepID, db)
        try db.execute(sql: """
            INSERT INTO contribution (ref, uuid, goal, asset, transaction_ref, history_ref, amount, date, created_at, undone_at)
            VALUES (?, ?, (SELECT ref FROM goal_ref WHERE id = ?), (SELECT ref FROM asset_ref WHERE id = ?), \(transaction.sql), \(history.sql), ?, ?, ?, ?)
            """, arguments: StatementArguments([place.ref, place.uuid, goalID, assetID] + transaction.arguments + history.arguments
                                               + [amount, date, createdAt, undoneAt]))
        return place.id
    }
}

/// A contribution as read.
struct ContributionRecord {
    var ref: Int64
    var goalID: String
    var transactionRef: Int64?
    var historyRef: Int64?
    var amount: String
    var createdAt: String
    var undoneAt: String?

    /// The contribution a public id names: derived from its ref, or its own stored bytes.
    static func fetchOne(publicID: UUID, _ db: Database) throws -> ContributionRecord? {
        let named = RefTable.contributions.condition(publicID, alias: "c")
        let row = try Row.fetchOne(db, sql: """
            SELECT c.ref, g.id AS goal_id, c.transaction_ref, c.history_ref, c.amount, c.created_at, c.undone_at
              FROM contribution c JOIN goal_ref g ON g.ref = c.goal WHERE \(named.sql)
            """, arguments: [named.argument])
        return row.map { row in
            ContributionRecord(ref: row["ref"], goalID: row["goal_id"], transactionRef: row["transaction_ref"], historyRef: row["history_ref"],
                               amount: row["amount"], createdAt: row["created_at"], undoneAt: row["undone_at"])
        }
    }
}
