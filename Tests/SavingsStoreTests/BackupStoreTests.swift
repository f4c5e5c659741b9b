import Foundation
import GRDB
import SavingsCore
import Testing
@testable import SavingsStore

@Suite struct BackupStoreTests {
    func scratch() throws -> String {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("store-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        return directory
    }

    /// A database written by the first released schema (committed as SQL) is migrated, after a
    /// backup of it as it was.
    @Test func theFirstReleasedSchemaMigratesAfterABackup() async throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let fixture = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Fixtures/schema-v4-execution.sql")
        let path = directory + "/savings.db"
        let queue = try DatabaseQueue(path: path)
        try await queue.writeWithoutTransaction { db in try db.execute(sql: try String(contentsOf: fixture, encoding: .utf8)) }
        try queue.close()

        let policy = BackupPolicy(directory: directory + "/backups", keep: 5)
        let database = try SavingsDatabase.open(path: path, backups: policy, now: try Timestamp.parse("2026-11-22T08:00:00Z", field: "t"))
        #expect(try await database.schemaVersion() == SavingsDatabase.knownMigrations.count)
        let goal = try await database.goal("Emergency Fund")
        #expect(goal.notes == "first released schema")
        #expect(try await database.check().ok)
        let portfolio = try await database.portfolio(now: Date(), pivot: try CurrencyCode("USD"))
        let allocated = try Amount.parse("0.1")
        #expect(portfolio.allocations.first?.amount == allocated)
        try database.close()

        let backups = SavingsDatabase.automaticBackups(policy)
        #expect(backups.count == 1)
        #expect(backups.first?.contains("before-v5-legacy") == true)
        let backup = try DatabaseQueue(path: policy.directory + "/" + backups[0], configuration: { var c = Configuration(); c.readonly = true; return c }())
        #expect(try await backup.read { db in try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations") }.count == 4,
                "the backup is the database as it was before the migration")
        try backup.close()
        // Opening again migrates nothing and backs up nothing.
        try SavingsDatabase.open(path: path, backups: policy).close()
        #expect(SavingsDatabase.automaticBackups(policy).count == 1)
    }

    @Test func automaticBackupsArePrunedToKeep() async throws {
        let directory = try scratch()
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let database = try SavingsDatabase.open(path: directory + "/savings.db")
        let policy = BackupPolicy(directory: directory + "/backups", keep: 3)
        var names: [String] = []
        for minute in 0..<6 {
            let info = try await database.automaticBackup(reason: "periodic", policy: policy, now: Date(timeIntervalSince1970: 1_800_000_000 + Double(minute) * 60))
            names.append((info.path as NSString).lastPathComponent)
        }
        #expect(SavingsDatabase.automaticBackups(policy) == Array(names.suffix(3)), "the oldest are removed")
        let mode = (try FileManager.default.attributesOfItem(atPath: policy.directory + "/" + names[5])[.posixPermissions] as? Int) ?? 0
        #expect(mode == 0o600)
        try database.close()
    }
}
