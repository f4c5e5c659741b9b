import Foundation
import GRDB
import SavingsCore

/// Forward-only schema migrations. Each migration runs in its own transaction; identifiers
/// are permanent once released.
enum Schema {
    static var migrator: DatabaseMigrator {
        var migrator = DatabaseMigrator()
        migrator.registerMigration("v1-goals") { db in
            try db.execute(sql: """
                CREATE TABLE goal (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    name_key TEXT NOT NULL UNIQUE,
                    currency TEXT NOT NULL,
                    target_amount TEXT NOT NULL,
                    deadline TEXT NOT NULL,
                    start_date TEXT NOT NULL,
                    archived INTEGER NOT NULL DEFAULT 0 CHECK (archived IN (0, 1)),
                    notes TEXT,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL
                );
                CREATE INDEX goal_archived ON goal(archived, name_key);
                CREATE TABLE metadata (
                    key TEXT PRIMARY KEY NOT NULL,
                    value TEXT NOT NULL
                );
                """)
        }
        migrator.registerMigration("v2-funding") { db in
            try db.execute(sql: """
                CREATE TABLE asset (
                    id TEXT PRIMARY KEY NOT NULL,
                    name TEXT NOT NULL,
                    name_key TEXT NOT NULL UNIQUE,
                    currency TEXT NOT NULL,
                    kind TEXT NOT NULL CHECK (kind IN ('crypto', 'fiat')),
                    address TEXT,
                    notes TEXT,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL
                );
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
                CREATE INDEX asset_transaction_by_date ON asset_transaction(asset_id, date);
                CREATE TABLE allocation (
                    asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
                    goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
                    amount TEXT NOT NULL,
                    updated_at TEXT NOT NULL,
                    PRIMARY KEY (asset_id, goal_id)
                );
                CREATE INDEX allocation_by_goal ON allocation(goal_id);
                CREATE TABLE allocation_history (
                    id TEXT PRIMARY KEY NOT NULL,
                    asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
                    goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
                    amount TEXT NOT NULL,
                    timestamp TEXT NOT NULL,
                    created_at TEXT NOT NULL,
                    month_label TEXT NOT NULL
                );
                CREATE INDEX allocation_history_by_pair ON allocation_history(asset_id, goal_id, timestamp, created_at);
                CREATE INDEX allocation_history_by_goal ON allocation_history(goal_id, timestamp);
                CREATE TABLE rate (
                    id INTEGER PRIMARY KEY AUTOINCREMENT,
                    base TEXT NOT NULL,
                    quote TEXT NOT NULL,
                    rate TEXT NOT NULL,
                    as_of TEXT NOT NULL,
                    provider TEXT NOT NULL,
                    fetched_at TEXT NOT NULL
                );
                CREATE INDEX rate_by_pair ON rate(base, quote, as_of);
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
                """)
        }
        migrator.registerMigration("v3-plans") { db in
            try db.execute(sql: """
                CREATE TABLE monthly_plan (
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
                CREATE INDEX monthly_plan_by_month ON monthly_plan(month_label, state);
                """)
        }
        migrator.registerMigration("v4-execution") { db in
            try db.execute(sql: """
                CREATE TABLE execution_record (
                    month_label TEXT PRIMARY KEY NOT NULL,
                    status TEXT NOT NULL CHECK (status IN ('draft', 'executing', 'closed')),
                    started_at TEXT,
                    completed_at TEXT,
                    can_undo_until TEXT,
                    snapshot TEXT,
                    baseline_rows TEXT,
                    completed TEXT,
                    created_at TEXT NOT NULL,
                    updated_at TEXT NOT NULL
                );
                CREATE INDEX allocation_history_by_asset_time ON allocation_history(asset_id, timestamp);
                """)
        }
        migrator.registerMigration("v5-legacy") { db in
            try db.execute(sql: """
                ALTER TABLE allocation ADD COLUMN legacy_percentage TEXT;
                CREATE TABLE legacy_contribution (
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
                CREATE INDEX legacy_contribution_by_goal ON legacy_contribution(goal_id, month_label);
                CREATE TABLE legacy_archive (
                    kind TEXT NOT NULL,
                    legacy_id TEXT NOT NULL,
                    reason TEXT NOT NULL,
                    document TEXT NOT NULL,
                    created_at TEXT NOT NULL,
                    PRIMARY KEY (kind, legacy_id)
                );
                """)
        }
        migrator.registerMigration("v6-balances") { db in
            // Each asset's total, kept exact by triggers (decimal_add is savingsd's exact decimal
            // addition), so figures never sum years of transactions again.
            try db.execute(sql: """
                CREATE TABLE asset_balance (
                    asset_id TEXT PRIMARY KEY NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
                    total TEXT NOT NULL
                );
                CREATE INDEX asset_transaction_by_time ON asset_transaction(date);
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
                """)
            var totals: [String: Decimal] = [:]
            let rows = try Row.fetchCursor(db, sql: "SELECT asset_id, amount FROM asset_transaction")
            while let row = try rows.next() { totals[row["asset_id"] as String, default: 0] += try Amount.parse(row["amount"] as String) }
            for (asset, total) in totals {
                try db.execute(sql: "INSERT INTO asset_balance (asset_id, total) VALUES (?, ?)", arguments: [asset, Amount.plainText(total)])
            }
        }
        migrator.registerMigration("v7-history-order") { db in
            // A pair's newest created_at, read for every allocation change, without a scan.
            try db.execute(sql: "CREATE INDEX allocation_history_by_pair_created ON allocation_history(asset_id, goal_id, created_at)")
        }
        migrator.registerMigration("v8-covering-window") { db in
            // An execution window reads (date, amount) of an asset's transactions in date order:
            // with the amount in the index that is one index range, no lookup into the table per row.
            try db.execute(sql: """
                DROP INDEX asset_transaction_by_date;
                CREATE INDEX asset_transaction_by_asset_date ON asset_transaction(asset_id, date, amount);
                """)
        }
        migrator.registerMigration("v9-no-global-date-index") { db in
            // An index of every transaction by date alone takes a history import's rows all over
            // its pages (each account's years land between every other account's), so each
            // import rewrote most of it: more than half of the import's time at a million rows.
            // What it served reads each account's own (asset_id, date) range instead.
            try db.execute(sql: "DROP INDEX asset_transaction_by_time")
        }
        migrator.registerMigration("v10-stale-drafts") { db in
            // Stale drafts (state 'draft', an earlier month) are counted for every dashboard:
            // by month first, that walked every plan of every past month to look at its state.
            try db.execute(sql: "CREATE INDEX monthly_plan_by_state ON monthly_plan(state, month_label)")
        }
        migrator.registerMigration("v11-onchain-watch") { db in
            // What an asset watches on a chain (SPEC 10) and how its last sync went. The
            // transactions themselves are ordinary rows (source 'onchain', external_id the txid).
            try db.execute(sql: """
                CREATE TABLE asset_watch (
                    asset_id TEXT PRIMARY KEY NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
                    chain TEXT NOT NULL,
                    xpub TEXT,
                    addresses TEXT NOT NULL DEFAULT '',
                    token TEXT,
                    min_confirmations INTEGER NOT NULL DEFAULT 1 CHECK (min_confirmations >= 1),
                    created_at TEXT NOT NULL,
                    provider TEXT,
                    last_sync_at TEXT,
                    last_error TEXT,
                    height INTEGER,
                    pending TEXT NOT NULL DEFAULT '',
                    ignored TEXT NOT NULL DEFAULT '',
                    reported_balance TEXT,
                    reconciled INTEGER,
                    cursor TEXT
                );
                """)
        }
        migrator.registerMigration(CompactTransactions.migration) { db in
            try CompactTransactions.migrate(db)
        }
        migrator.registerMigration(TransactionTable.migration) { db in
            try TransactionTable.migrate(db)
        }
        migrator.registerMigration(HistoryTable.migration) { db in
            try HistoryTable.migrate(db)
        }
        migrator.registerMigration("v15-balance-newest") { db in
            // Each asset's newest transaction date, at least (deletes leave it): the figures
            // at "now" subtract the rows dated after now, and only an asset whose newest row
            // is after now can have any, so the others need no look at their rows. Before,
            // every figure after a write sought into every account's rows.
            try db.execute(sql: """
                ALTER TABLE asset_balance ADD COLUMN newest INTEGER;
                UPDATE asset_balance SET newest = (SELECT MAX(t.date) FROM asset_transaction t
                                                    WHERE t.asset = (SELECT ref FROM asset_ref WHERE id = asset_balance.asset_id));
                DROP TRIGGER asset_balance_after_update;
                """ + TransactionTable.updateTrigger + """
                """)
        }
        migrator.registerMigration(PlanTable.migration) { db in
            try PlanTable.migrate(db)
        }
        migrator.registerMigration(ContributionTable.migration) { db in
            try ContributionTable.migrate(db)
        }
        migrator.registerMigration(TransactionTable.linkedMigration) { db in
            try TransactionTable.migrateLinkedKinds(db)
        }
        return migrator
    }

    /// The SQL functions triggers and migrations call, added to every connection.
    static var functions: [DatabaseFunction] { [decimalAdd] + CompactTransactions.functions + TransactionTable.functions + RefTable.functions }

    /// `decimal_add(a, b)`: exact decimal addition of two decimal texts ("--x" is read as "x",
    /// so the delete trigger can negate by prefixing '-').
    static let decimalAdd = DatabaseFunction("decimal_add", argumentCount: 2, pure: true) { values in
        if let first = String.fromDatabaseValue(values[0]), let second = String.fromDatabaseValue(values[1]),
           let sum = Amount.plainSum(first, second) {
            return sum
        }
        func parse(_ value: DatabaseValue) throws -> Decimal {
            guard var text = String.fromDatabaseValue(value) else { throw StoreError.corrupt("decimal_add of a non-text value") }
            var negate = false
            while text.hasPrefix("-") {
                negate.toggle()
                text.removeFirst()
            }
            let amount = try Amount.parse(text)
            return negate ? -amount : amount
        }
        return Amount.plainText(try parse(values[0]) + parse(values[1]))
    }
}
