PRAGMA foreign_keys=OFF;
BEGIN TRANSACTION;
CREATE TABLE grdb_migrations (identifier TEXT NOT NULL PRIMARY KEY);
INSERT INTO grdb_migrations VALUES('v1-goals');
INSERT INTO grdb_migrations VALUES('v2-funding');
INSERT INTO grdb_migrations VALUES('v3-plans');
INSERT INTO grdb_migrations VALUES('v4-execution');
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
INSERT INTO goal VALUES('d99ec303-618b-4713-b4b1-c7ff4d6db786','Emergency Fund','emergency fund','EUR','5000','2027-06-30','2026-11-01',0,'first released schema','2026-11-20T10:00:00.000Z','2026-11-20T10:00:00.000Z');
CREATE TABLE metadata (
    key TEXT PRIMARY KEY NOT NULL,
    value TEXT NOT NULL
);
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
INSERT INTO asset VALUES('ff8f2cf9-035b-48d1-9c71-8d35b77b312f','Wallet','wallet','BTC','crypto',NULL,NULL,'2026-11-20T10:00:00.000Z','2026-11-20T10:00:00.000Z');
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
INSERT INTO asset_transaction VALUES('6e62533e-87fd-4262-85f6-b2006cfe9841','ff8f2cf9-035b-48d1-9c71-8d35b77b312f','0.25','2026-11-20T10:00:00.000Z','manual','first','x-1','2026-11-20T10:00:00.000Z');
CREATE TABLE allocation (
    asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
    goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
    amount TEXT NOT NULL,
    updated_at TEXT NOT NULL,
    PRIMARY KEY (asset_id, goal_id)
);
INSERT INTO allocation VALUES('ff8f2cf9-035b-48d1-9c71-8d35b77b312f','d99ec303-618b-4713-b4b1-c7ff4d6db786','0.1','2026-11-20T10:00:00.000Z');
CREATE TABLE allocation_history (
    id TEXT PRIMARY KEY NOT NULL,
    asset_id TEXT NOT NULL REFERENCES asset(id) ON DELETE CASCADE,
    goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
    amount TEXT NOT NULL,
    timestamp TEXT NOT NULL,
    created_at TEXT NOT NULL,
    month_label TEXT NOT NULL
);
INSERT INTO allocation_history VALUES('8fd663d8-79e0-466e-902d-eead2e65278c','ff8f2cf9-035b-48d1-9c71-8d35b77b312f','d99ec303-618b-4713-b4b1-c7ff4d6db786','0.1','2026-11-20T10:00:00.000Z','2026-11-20T10:00:00.000Z','2026-11');
CREATE TABLE rate (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    base TEXT NOT NULL,
    quote TEXT NOT NULL,
    rate TEXT NOT NULL,
    as_of TEXT NOT NULL,
    provider TEXT NOT NULL,
    fetched_at TEXT NOT NULL
);
INSERT INTO rate VALUES(1,'BTC','EUR','50000','2026-11-20T10:00:00.000Z','manual','2026-11-20T10:00:00.000Z');
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
DELETE FROM sqlite_sequence;
INSERT INTO sqlite_sequence VALUES('rate',1);
CREATE INDEX goal_archived ON goal(archived, name_key);
CREATE INDEX asset_transaction_by_date ON asset_transaction(asset_id, date);
CREATE INDEX allocation_by_goal ON allocation(goal_id);
CREATE INDEX allocation_history_by_pair ON allocation_history(asset_id, goal_id, timestamp, created_at);
CREATE INDEX allocation_history_by_goal ON allocation_history(goal_id, timestamp);
CREATE INDEX rate_by_pair ON rate(base, quote, as_of);
CREATE INDEX monthly_plan_by_month ON monthly_plan(month_label, state);
CREATE INDEX allocation_history_by_asset_time ON allocation_history(asset_id, timestamp);
COMMIT;
