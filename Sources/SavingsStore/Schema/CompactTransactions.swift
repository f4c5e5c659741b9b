import Foundation
import GRDB
import GRDBSQLite
import SavingsCore

/// How schema v12 kept transactions: by integer, not by 36-character text (v13 keeps them in
/// each account's date order: `TransactionTable`).
///
/// - `asset_ref` gives every asset a small integer `ref` (a trigger on `asset` adds it; deleting
///   the asset deletes it, and with it the asset's transactions).
/// - `asset_transaction.ref` is the rowid (AUTOINCREMENT: never reused, so an id a client holds
///   never names another row). A transaction's public id is derived from it
///   (`DerivedID.transactions` in SavingsCore), unless the row has its own 16 bytes in `uuid`: rows written before
///   v12, and rows restored from a document, keep the ids clients already hold.
/// - Idempotency is on `(asset, external_key)`: a 64-bit hash of the external_id with its low 4
///   bits clear, so a collision takes the next free key of its block of 16 (`ExternalKeys`).
///   The text is kept to tell collisions apart, except where it is the row's own content key
///   ("csv-" and the hash of its date, amount and note), which is worked out again when read.
enum CompactTransactions {
    static let migration = "v12-compact-transactions"

    static func migrate(_ db: Database) throws {
        let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset_transaction") ?? 0
        try db.execute(sql: """
            CREATE TABLE asset_ref (
                ref INTEGER PRIMARY KEY,
                id TEXT NOT NULL UNIQUE REFERENCES asset(id) ON DELETE CASCADE
            );
            INSERT INTO asset_ref (id) SELECT id FROM asset ORDER BY created_at, id;
            CREATE TRIGGER asset_ref_after_insert AFTER INSERT ON asset BEGIN
                INSERT INTO asset_ref (id) VALUES (NEW.id);
            END;
            CREATE TABLE transaction_v12 (
                ref INTEGER PRIMARY KEY AUTOINCREMENT,
                asset INTEGER NOT NULL REFERENCES asset_ref(ref) ON DELETE CASCADE,
                amount TEXT NOT NULL,
                date TEXT NOT NULL,
                source TEXT NOT NULL CHECK (source IN ('manual', 'onchain', 'import')),
                note TEXT,
                external_key INTEGER,
                external_id TEXT,
                created_at TEXT NOT NULL,
                uuid BLOB
            );
            INSERT INTO transaction_v12 (asset, amount, date, source, note, external_key, external_id, created_at, uuid)
                SELECT r.ref, t.amount, t.date, t.source, t.note, external_key(t.external_id),
                       CASE WHEN t.external_id = content_key(t.date, t.amount, t.note) THEN NULL ELSE t.external_id END,
                       t.created_at, uuid_blob(t.id)
                  FROM asset_transaction t JOIN asset_ref r ON r.id = t.asset_id ORDER BY t.rowid;
            CREATE UNIQUE INDEX asset_transaction_by_uuid ON transaction_v12(uuid) WHERE uuid IS NOT NULL;
            CREATE TABLE contribution_v12 (
                id TEXT PRIMARY KEY NOT NULL,
                goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
                asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
                transaction_ref INTEGER REFERENCES asset_transaction(ref) ON DELETE SET NULL,
                history_id TEXT REFERENCES allocation_history(id) ON DELETE SET NULL,
                amount TEXT NOT NULL,
                date TEXT NOT NULL,
                created_at TEXT NOT NULL,
                undone_at TEXT
            );
            INSERT INTO contribution_v12 (id, goal_id, asset_id, transaction_ref, history_id, amount, date, created_at, undone_at)
                SELECT c.id, c.goal_id, c.asset_id, t.ref, c.history_id, c.amount, c.date, c.created_at, c.undone_at
                  FROM contribution c LEFT JOIN transaction_v12 t ON t.uuid = uuid_blob(c.transaction_id) ORDER BY c.rowid;
            DROP TABLE contribution;
            ALTER TABLE contribution_v12 RENAME TO contribution;
            DROP TABLE asset_transaction;
            ALTER TABLE transaction_v12 RENAME TO asset_transaction;
            CREATE INDEX asset_transaction_by_asset_date ON asset_transaction(asset, date, amount);
            """)
        // A collision of two external ids of one asset (two in 2^60) moves one of them to the
        // next free key of its block before the key becomes unique.
        do {
            try createKeyIndex(db)
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            let clashes = try Row.fetchAll(db, sql: """
                SELECT asset, external_key FROM asset_transaction WHERE external_key IS NOT NULL
                 GROUP BY asset, external_key HAVING COUNT(*) > 1
                """)
            for clash in clashes {
                let rows = try Int64.fetchAll(db, sql: "SELECT ref FROM asset_transaction WHERE asset = ? AND external_key = ? ORDER BY ref",
                                              arguments: [clash[0], clash[1]])
                for ref in rows.dropFirst() {
                    guard let free = try ExternalKeys.freeKey(asset: clash[0], home: clash[1], db) else {
                        throw StoreError.corrupt("more than 16 external ids of one asset share a key")
                    }
                    try db.execute(sql: "UPDATE asset_transaction SET external_key = ? WHERE ref = ?", arguments: [free, ref])
                }
            }
            try createKeyIndex(db)
        }
        // Every row came across, each with its asset's key (the deferred foreign-key check
        // follows; `db.check` verifies the balances against the rows).
        let after = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset_transaction") ?? 0
        guard after == before, try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset WHERE id NOT IN (SELECT id FROM asset_ref)") == 0 else {
            throw StoreError.corrupt("the v12 migration kept \(after) of \(before) transactions")
        }
        // Balances: inserts add to the total where they are made (`SavingsDatabase.addToBalance`:
        // once per import chunk, not a function call per row); deletes and updates keep triggers.
        try db.execute(sql: """
            CREATE TRIGGER asset_balance_after_delete AFTER DELETE ON asset_transaction BEGIN
                UPDATE asset_balance SET total = decimal_add(total, '-' || OLD.amount)
                 WHERE asset_id = (SELECT id FROM asset_ref WHERE ref = OLD.asset);
            END;
            CREATE TRIGGER asset_balance_after_update AFTER UPDATE OF amount, asset ON asset_transaction BEGIN
                UPDATE asset_balance SET total = decimal_add(total, '-' || OLD.amount)
                 WHERE asset_id = (SELECT id FROM asset_ref WHERE ref = OLD.asset);
                INSERT INTO asset_balance (asset_id, total) VALUES ((SELECT id FROM asset_ref WHERE ref = NEW.asset), NEW.amount)
                ON CONFLICT(asset_id) DO UPDATE SET total = decimal_add(total, NEW.amount);
            END;
            """)
    }

    private static func createKeyIndex(_ db: Database) throws {
        try db.execute(sql: "CREATE UNIQUE INDEX asset_transaction_by_key ON asset_transaction(asset, external_key)")
    }

    /// SQL functions of the migration and of documents (added to every connection with `decimal_add`).
    static let functions: [DatabaseFunction] = [
        DatabaseFunction("uuid_blob", argumentCount: 1, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]), let uuid = StoreKey.parseCanonical(text) ?? UUID(uuidString: text) else { return nil }
            return StoreKey.bytes(uuid)
        },
        DatabaseFunction("external_key", argumentCount: 1, pure: true) { values in
            String.fromDatabaseValue(values[0]).map(ExternalKeys.home)
        },
        DatabaseFunction("content_key", argumentCount: 3, pure: true) { values in
            guard let date = String.fromDatabaseValue(values[0]), let amount = String.fromDatabaseValue(values[1]) else { return nil }
            return ExternalKeys.contentKey(dateText: date, amountText: amount, note: String.fromDatabaseValue(values[2]))
        },
    ]
}

/// Idempotency keys: the external_id's 64-bit hash with its low 4 bits clear is its home; a
/// collision takes the next free key of the block (home ... home + 15).
enum ExternalKeys {
    static func home(_ externalID: String) -> Int64 {
        Int64(bitPattern: StableHash.lanes(externalID).0 & ~0xF)
    }

    /// The length of a content key: "csv-" and 32 hexadecimal digits.
    static let contentKeyLength = 36

    /// Whether a text has the form of a content key (of some row).
    static func looksLikeContentKey(_ text: String) -> Bool {
        text.utf8.count == contentKeyLength && text.hasPrefix("csv-")
    }

    /// The content key of a row without an external_id of its own (the first of identical rows).
    static func contentKey(dateText: String, amountText: String, note: String?) -> String {
        TransactionCSVRow.contentKey(TransactionCSVRow.contentHash(dateText: dateText, amountText: amountText, note: note))
    }

    /// How an external_id is stored: nothing when there is none; no key, the row being keyed
    /// by its content, when it is the row's own content key (worked out again when read);
    /// else the text, under its key. (`dateText` is made only for an id of a content key's form.)
    static func stored(_ externalID: String?, dateText: @autoclosure () -> String, amountText: String, note: String?) -> (text: String?, contentKeyed: Bool) {
        guard let externalID else { return (nil, false) }
        if looksLikeContentKey(externalID), externalID == contentKey(dateText: dateText(), amountText: amountText, note: note) { return (nil, true) }
        return (externalID, false)
    }

    /// The row of `asset` holding `externalID` for a row of this content, if any: a row keyed
    /// by that same content, or one holding the text.
    static func find(_ externalID: String, date: Int64, amountText: String, note: String?, asset: Int64, _ db: Database) throws -> Int64? {
        if stored(externalID, dateText: Timestamp.format(milliseconds: date), amountText: amountText, note: note).contentKeyed,
           let row = try findContent(asset: asset, date: date, amountText: amountText, note: note, db) {
            return row
        }
        return try find(externalID, asset: asset, db)
    }

    /// The row of `asset` holding the external_id of `transaction`, if it has one.
    static func find(_ transaction: AssetTransaction, asset: Int64, _ db: Database) throws -> Int64? {
        guard let externalID = transaction.externalID else { return nil }
        return try find(externalID, date: Timestamp.milliseconds(transaction.date), amountText: Amount.plainText(transaction.amount),
                        note: transaction.note, asset: asset, db)
    }

    /// The row of `asset` keyed by this content (date, amount as stored, note), if any: read
    /// in the table's own order, where the asset's rows of that date are together.
    static func findContent(asset: Int64, date: Int64, amountText: String, note: String?, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: """
            SELECT ref FROM asset_transaction WHERE asset = ? AND date = ? AND amount = ? AND note IS ? AND \(TransactionKind.contentKeyedSQL) LIMIT 1
            """), arguments: [asset, date, amountText, note])
    }

    /// The row of `asset` holding the text `externalID`, if any (it is in the block of its home).
    /// Stored texts are read by their length: an external_id may hold any character, NUL too.
    static func find(_ externalID: String, asset: Int64, _ db: Database) throws -> Int64? {
        let home = home(externalID)
        let statement = try db.cachedStatement(sql: """
            SELECT ref, external_id FROM asset_transaction WHERE asset = ? AND external_key BETWEEN ? AND ?
            """)
        statement.setUncheckedArguments([asset, home, home + 15])
        let raw = statement.sqliteStatement
        defer { sqlite3_reset(raw) }
        while true {
            let code = sqlite3_step(raw)
            if code == SQLITE_DONE { return nil }
            guard code == SQLITE_ROW else { throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(db.sqliteConnection))) }
            guard let bytes = sqlite3_column_text(raw, 1) else { continue }
            let stored = String(decoding: UnsafeBufferPointer(start: bytes, count: Int(sqlite3_column_bytes(raw, 1))), as: UTF8.self)
            if stored == externalID { return sqlite3_column_int64(raw, 0) }
        }
    }

    /// The first key of the block of `home` no row of `asset` holds.
    static func freeKey(asset: Int64, home: Int64, _ db: Database) throws -> Int64? {
        let taken = Set(try Int64.fetchAll(db.cachedStatement(sql: """
            SELECT external_key FROM asset_transaction WHERE asset = ? AND external_key BETWEEN ? AND ?
            """), arguments: [asset, home, home + 15]))
        return (home...home + 15).first { !taken.contains($0) }
    }
}
