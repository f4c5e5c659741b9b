import GRDB

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
        return migrator
    }
}
