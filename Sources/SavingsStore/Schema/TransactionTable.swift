import Foundation
import GRDB
import SavingsCore

/// How schema v13 keeps transactions: each account's rows together, in date order, as the
/// table itself (a WITHOUT ROWID table keyed by asset, date and ref), so the execution
/// windows, balances at a date and the newest rows read the table's own order, and no
/// second copy of every row's date and amount is kept in an index.
///
/// - `date` and `created_at` are integer milliseconds since 1970 (as `Timestamp` rounds them).
/// - `ref` is the row's integer key, unique, never reused (`transaction_counter` hands them
///   out); the public id is derived from it unless the row has its own 16 bytes in `uuid`.
/// - `kind` says where the row came from and whether it is keyed by its own content
///   (`TransactionKind`). Such a row (an import row without an external_id) keeps no
///   external key at all: it is found again by its asset, date, amount and note, in the
///   table's order. Rows with an external_id of their own are found by `(asset,
///   external_key)` (`ExternalKeys`), a partial index that holds only them.
enum TransactionTable {
    static let migration = "v13-transactions-by-account"

    /// The columns every reader of a transaction row selects, `t` being the transaction and
    /// `r` its asset's `asset_ref` row.
    static let columns = "t.ref, t.uuid, r.id AS asset_id, t.amount, t.date, t.kind, t.note, t.external_key, t.external_id, t.created_at"
    static let from = "asset_transaction t JOIN asset_ref r ON r.ref = t.asset"
    /// One row: ref, asset, amount, date, kind, note, external_key, external_id, created_at, uuid.
    static let insertOne = """
        INSERT INTO asset_transaction (ref, asset, amount, date, kind, note, external_key, external_id, created_at, uuid)
        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
        """

    static func migrate(_ db: Database) throws {
        let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset_transaction") ?? 0
        try db.execute(sql: createTable("transaction_v13", maxKind: 5) + """
            INSERT INTO transaction_v13 (asset, date, ref, amount, kind, note, created_at, external_key, external_id, uuid)
                SELECT asset, stored_milliseconds(date), ref, amount,
                       transaction_kind(source, external_key IS NOT NULL AND external_id IS NULL), note, stored_milliseconds(created_at),
                       CASE WHEN external_id IS NULL THEN NULL ELSE external_key END, external_id, uuid
                  FROM asset_transaction ORDER BY asset, stored_milliseconds(date), ref;
            CREATE TABLE transaction_counter (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                last INTEGER NOT NULL
            );
            INSERT INTO transaction_counter (id, last) VALUES (1, MAX(
                COALESCE((SELECT seq FROM sqlite_sequence WHERE name = 'asset_transaction'), 0),
                COALESCE((SELECT MAX(ref) FROM transaction_v13), 0)));
            DROP TABLE asset_transaction;
            ALTER TABLE transaction_v13 RENAME TO asset_transaction;
            """ + indexesAndDeleteTrigger + """
            CREATE TRIGGER asset_balance_after_update AFTER UPDATE OF amount, asset ON asset_transaction BEGIN
                UPDATE asset_balance SET total = decimal_add(total, '-' || OLD.amount)
                 WHERE asset_id = (SELECT id FROM asset_ref WHERE ref = OLD.asset);
                INSERT INTO asset_balance (asset_id, total) VALUES ((SELECT id FROM asset_ref WHERE ref = NEW.asset), NEW.amount)
                ON CONFLICT(asset_id) DO UPDATE SET total = decimal_add(total, NEW.amount);
            END;
            """)
        let after = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset_transaction") ?? 0
        guard after == before else { throw StoreError.corrupt("the v13 migration kept \(after) of \(before) transactions") }
    }

    /// The table's definition, kinds up to `maxKind` (v13 had 0-5; v18 added the linked accounts' 6-9).
    static func createTable(_ name: String, maxKind: Int) -> String {
        """
        CREATE TABLE \(name) (
            asset INTEGER NOT NULL REFERENCES asset_ref(ref) ON DELETE CASCADE,
            date INTEGER NOT NULL,
            ref INTEGER NOT NULL,
            amount TEXT NOT NULL,
            kind INTEGER NOT NULL CHECK (kind BETWEEN 0 AND \(maxKind)),
            note TEXT,
            created_at INTEGER NOT NULL,
            external_key INTEGER,
            external_id TEXT,
            uuid BLOB,
            PRIMARY KEY (asset, date, ref)
        ) WITHOUT ROWID;

        """
    }

    static let linkedMigration = "v18-linked-accounts"

    /// The trigger that keeps balances and each asset's newest date on an update (v15's).
    static let updateTrigger = """
        CREATE TRIGGER asset_balance_after_update AFTER UPDATE OF amount, asset, date ON asset_transaction BEGIN
            UPDATE asset_balance SET total = decimal_add(total, '-' || OLD.amount)
             WHERE asset_id = (SELECT id FROM asset_ref WHERE ref = OLD.asset);
            INSERT INTO asset_balance (asset_id, total, newest) VALUES ((SELECT id FROM asset_ref WHERE ref = NEW.asset), NEW.amount, NEW.date)
            ON CONFLICT(asset_id) DO UPDATE SET total = decimal_add(total, NEW.amount), newest = MAX(COALESCE(newest, NEW.date), NEW.date);
        END;

        """

    /// The table's indexes and the trigger that keeps balances on a delete (v13's, unchanged since).
    static let indexesAndDeleteTrigger = """
        CREATE UNIQUE INDEX asset_transaction_by_ref ON asset_transaction(ref);
        CREATE UNIQUE INDEX asset_transaction_by_key ON asset_transaction(asset, external_key) WHERE external_key IS NOT NULL;
        CREATE UNIQUE INDEX asset_transaction_by_uuid ON asset_transaction(uuid) WHERE uuid IS NOT NULL;
        CREATE TRIGGER asset_balance_after_delete AFTER DELETE ON asset_transaction BEGIN
            UPDATE asset_balance SET total = decimal_add(total, '-' || OLD.amount)
             WHERE asset_id = (SELECT id FROM asset_ref WHERE ref = OLD.asset);
        END;

        """

    /// v18: rows of linked accounts (kinds 6-9). SQLite cannot widen a CHECK in place, so the
    /// table is copied once in its own order, with its indexes and the triggers of v15.
    static func migrateLinkedKinds(_ db: Database) throws {
        let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset_transaction") ?? 0
        try db.execute(sql: createTable("transaction_v18", maxKind: 9) + """
            INSERT INTO transaction_v18 SELECT asset, date, ref, amount, kind, note, created_at, external_key, external_id, uuid
              FROM asset_transaction ORDER BY asset, date, ref;
            DROP TABLE asset_transaction;
            ALTER TABLE transaction_v18 RENAME TO asset_transaction;
            """ + indexesAndDeleteTrigger + """
            """ + updateTrigger + """
            CREATE TABLE asset_link (
                asset_id TEXT PRIMARY KEY NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
                service TEXT NOT NULL,
                account TEXT NOT NULL,
                credential TEXT NOT NULL,
                created_at TEXT NOT NULL,
                last_sync_at TEXT,
                last_error TEXT,
                reported_balance TEXT,
                reconciled INTEGER,
                cursor TEXT
            );
            """)
        let after = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset_transaction") ?? 0
        guard after == before else { throw StoreError.corrupt("the v18 migration kept \(after) of \(before) transactions") }
    }

    /// SQL functions of the migration (added to every connection with `decimal_add`).
    static let functions: [DatabaseFunction] = [
        DatabaseFunction("stored_milliseconds", argumentCount: 1, pure: true) { values in
            if let millis = Int64.fromDatabaseValue(values[0]) { return millis }
            guard let text = String.fromDatabaseValue(values[0]) else { throw StoreError.corrupt("a transaction without a date") }
            return Timestamp.milliseconds(try Timestamp.parse(text, field: "date"))
        },
        DatabaseFunction("transaction_kind", argumentCount: 2, pure: true) { values in
            guard let text = String.fromDatabaseValue(values[0]), let source = AssetTransaction.Source(rawValue: text) else {
                throw StoreError.corrupt("a transaction of source \(values[0])")
            }
            return TransactionKind(source: source, contentKeyed: Bool.fromDatabaseValue(values[1]) ?? false).code
        },
    ]
}

/// The `kind` column: a row's source and whether its idempotency key is its own content
/// (`ExternalKeys.contentKey`), in one small integer. An import row keyed by its content, the
/// common one, is 0, which SQLite stores in no bytes at all.
struct TransactionKind: Equatable {
    var source: AssetTransaction.Source
    var contentKeyed: Bool

    init(source: AssetTransaction.Source, contentKeyed: Bool) {
        self.source = source
        self.contentKeyed = contentKeyed
    }

    init?(code: Int64) {
        switch code {
        case 0: self.init(source: .import, contentKeyed: true)
        case 1: self.init(source: .import, contentKeyed: false)
        case 2: self.init(source: .manual, contentKeyed: false)
        case 3: self.init(source: .onchain, contentKeyed: false)
        case 4: self.init(source: .manual, contentKeyed: true)
        case 5: self.init(source: .onchain, contentKeyed: true)
        case 6...9: self.init(source: .init(LinkedService.allCases[Int(code) - 6]), contentKeyed: false)
        default: return nil
        }
    }

    var code: Int64 {
        switch (source, contentKeyed) {
        case (.import, true): 0
        case (.import, false): 1
        case (.manual, false): 2
        case (.onchain, false): 3
        case (.manual, true): 4
        case (.onchain, true): 5
        // A linked account's rows always carry the service's own id.
        case (.kraken, _): 6
        case (.binance, _): 7
        case (.coinbase, _): 8
        case (.simplefin, _): 9
        }
    }

    /// SQL: the row came from the chain.
    static let onchainSQL = "kind IN (3, 5)"
    /// SQL: the row came from a linked account (any service).
    static let linkedSQL = "kind BETWEEN 6 AND 9"
    /// SQL: the row came from outside (a chain or a linked account), not by hand or from a file.
    static let syncedSQL = "kind IN (3, 5, 6, 7, 8, 9)"
    /// SQL: the row is keyed by its own content.
    static let contentKeyedSQL = "kind IN (0, 4, 5)"
}
