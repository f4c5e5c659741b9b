import Foundation
import GRDB
@testable import SavingsStore

/// What the store's upgrade and document tests share.
enum StoreTestSupport {
    /// A database path in a fresh temporary directory (`label` names it, for a look after a failure).
    static func databasePath(_ label: String) throws -> String {
        let directory = NSTemporaryDirectory() + "savingsd-\(label)-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory + "/savings.db"
    }

    /// Writes a database as an earlier release left it: migrated up to `migration`, then `body`.
    static func writeDatabase(at path: String, upTo migration: String, _ body: (Database) throws -> Void) throws {
        try EarlierSchema.write(at: path, upTo: migration)
        var configuration = Configuration()
        configuration.prepareDatabase { db in for function in Schema.functions { db.add(function: function) } }
        let queue = try DatabaseQueue(path: path, configuration: configuration)
        try queue.write(body)
        try queue.close()
    }

    /// SQLite's plan for each statement, its steps joined by "; ".
    static func queryPlans(_ statements: [String], arguments: StatementArguments = [], _ db: Database) throws -> [String] {
        try statements.map { sql in
            try Row.fetchAll(db, sql: "EXPLAIN QUERY PLAN " + sql, arguments: arguments).map { $0["detail"] as String }.joined(separator: "; ")
        }
    }
}

/// Rows of an export, kept in memory.
final class CollectedRows: TransferSink, @unchecked Sendable {
    var sections: [String: [TransferRow]] = [:]
    func write(_ section: String, _ row: TransferRow) throws { sections[section, default: []].append(row) }
}
