import GRDB

/// An empty database as an earlier release left it: the store's own migrations, up to and
/// including `migration`. For what measures or checks an upgrade from there (the benchmark's
/// upgrade figure takes its v11 tables from one), never for the daemon's own file.
public enum EarlierSchema {
    /// The identifier of the last migration of schema v11 (the release before compact keys).
    public static let v11 = "v11-onchain-watch"

    /// One table, index or trigger of the schema: sqlite_master's row.
    public struct Definition: Sendable {
        public var type: String
        public var name: String
        public var table: String
        public var sql: String
    }

    /// Writes a new database at `path`, migrated up to `migration`; returns the SQL that defines
    /// each of its tables, indexes and triggers, in the order they were made.
    @discardableResult
    public static func write(at path: String, upTo migration: String) throws -> [Definition] {
        var configuration = Configuration()
        configuration.prepareDatabase { db in for function in Schema.functions { db.add(function: function) } }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try Schema.migrator.migrate(queue, upTo: migration)
        let definitions = try queue.read { db in
            try Row.fetchAll(db, sql: "SELECT type, name, tbl_name, sql FROM sqlite_master WHERE sql IS NOT NULL ORDER BY rowid")
                .map { Definition(type: $0["type"], name: $0["name"], table: $0["tbl_name"], sql: $0["sql"]) }
        }
        try queue.close()
        return definitions
    }
}
