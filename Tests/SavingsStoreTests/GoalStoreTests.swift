import Foundation
import GRDB
import SavingsCore
import Testing
@testable import SavingsStore

@Suite struct GoalStoreTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000.123)
    let today = try! CalendarDate(parsing: "2026-11-22", field: "today")

    func new(_ name: String, target: String = "5000", currency: String = "EUR") throws -> NewGoal {
        try NewGoal(name: name, currency: currency, targetAmount: target, deadline: "2027-06-30",
                    startDate: nil, notes: nil, today: today)
    }

    @Test func createGetListRoundTrip() async throws {
        let db = try SavingsDatabase.inMemory()
        let created = try await db.createGoal(try new("Emergency", target: "5000.5"), now: now)
        let byName = try await db.goal("emergency")
        let byID = try await db.goal(created.id.uuidString)
        #expect(byName == created)
        #expect(byID == created)
        #expect(Amount.plainText(byName.targetAmount) == "5000.5")
        #expect(Timestamp.format(byName.createdAt) == Timestamp.format(now))
        _ = try await db.createGoal(try new("bike"), now: now)
        #expect(try await db.goals().map(\.name) == ["bike", "Emergency"])
        #expect(try await db.counts()["goals"] == 2)
    }

    @Test func namesAreUniqueCaseInsensitively() async throws {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createGoal(try new("Emergency"), now: now)
        #expect(await kind { _ = try await db.createGoal(try new("EMERGENCY"), now: now) } == .conflict)
        let other = try await db.createGoal(try new("Bike"), now: now)
        #expect(await kind { _ = try await db.updateGoal("Bike", changes: GoalChanges(name: "emergency"), now: now) } == .conflict)
        // Renaming to a different case of its own name is fine.
        let renamed = try await db.updateGoal(other.id.uuidString, changes: GoalChanges(name: "BIKE"), now: now)
        #expect(renamed.name == "BIKE")
    }

    @Test func unknownAndAmbiguousReferences() async throws {
        let db = try SavingsDatabase.inMemory()
        #expect(await kind { _ = try await db.goal("nope") } == .notFound)
        let first = try await db.createGoal(try new("First"), now: now)
        // A goal whose name is another goal's id makes that reference ambiguous.
        _ = try await db.createGoal(try new(first.id.uuidString.lowercased()), now: now)
        #expect(await kind { _ = try await db.goal(first.id.uuidString) } == .ambiguous)
    }

    @Test func updateArchiveDelete() async throws {
        let db = try SavingsDatabase.inMemory()
        let goal = try await db.createGoal(try new("Trip"), now: now)
        let later = now.addingTimeInterval(3600)
        let updated = try await db.updateGoal("trip", changes: GoalChanges(targetAmount: "1200", deadline: "2027-12-31", notes: "Lisbon"), now: later)
        #expect(Amount.plainText(updated.targetAmount) == "1200")
        #expect(updated.notes == "Lisbon")
        #expect(updated.updatedAt > goal.updatedAt)
        #expect(try await db.goal("Trip") == updated)
        // A failed update changes nothing.
        #expect(await kind { _ = try await db.updateGoal("Trip", changes: GoalChanges(name: "X", targetAmount: "-1"), now: later) } == .invalidAmount)
        #expect(try await db.goal("Trip").name == "Trip")

        let archived = try await db.setGoalArchived("Trip", archived: true, now: later)
        #expect(archived.archived)
        #expect(try await db.goals().isEmpty)
        #expect(try await db.goals(includeArchived: true).count == 1)
        _ = try await db.setGoalArchived("Trip", archived: false, now: later)
        #expect(try await db.goals().count == 1)

        let deleted = try await db.deleteGoal("Trip")
        #expect(deleted.id == goal.id)
        #expect(await kind { _ = try await db.goal("Trip") } == .notFound)
    }
}

@Suite struct DatabaseFileTests {
    func temporaryDirectory() throws -> String {
        let path = NSTemporaryDirectory() + "savingsd-store-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: path, withIntermediateDirectories: true)
        return path
    }

    /// A sync's pages commit without waiting for the disk (its last transaction does, for all
    /// of them); the writer is durable again after each page, stored or refused.
    @Test func aSyncPageLeavesTheWriterDurable() async throws {
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try SavingsDatabase.open(path: dir + "/savings.db")
        let now = Date(timeIntervalSince1970: 1_795_000_000), utc = TimeZone(identifier: "UTC")!
        func writerSynchronous() async throws -> Int? { try await db.writer.write { try Int.fetchOne($0, sql: "PRAGMA synchronous") } }
        _ = try await db.createAsset(try NewAsset(name: "K", currency: "BTC", kind: "crypto", address: nil, notes: nil), now: now)
        let (_, link, _) = try await db.link(asset: "K", service: .kraken, account: "XXBT", credential: "key", now: now)
        let row = LinkedRow(id: "L1", date: now.addingTimeInterval(-60), amount: 1, note: "Kraken deposit")
        #expect(try await db.storeLinkedRows(link, [row], cursor: "ofs=50", now: now, timeZone: utc) == 1)
        #expect(try await writerSynchronous() == 2, "synchronous=FULL after a stored page")
        _ = try await db.unlinkAccount(asset: "K")
        await #expect(throws: DomainError.self) { try await db.storeLinkedRows(link, [row], cursor: nil, now: now, timeZone: utc) }
        #expect(try await writerSynchronous() == 2, "synchronous=FULL after a refused page")
        try db.close()
    }

    /// A chain page is stored while its asset is watched, and refused whole once it is not.
    @Test func aChainPageIsRefusedOnceTheAssetStopsWatching() async throws {
        let db = try SavingsDatabase.inMemory()
        let now = Date(timeIntervalSince1970: 1_795_000_000), utc = TimeZone(identifier: "UTC")!
        let asset = try await db.createAsset(try NewAsset(name: "Cold", currency: "BTC", kind: "crypto", address: nil, notes: nil), now: now)
        let target = try WatchTarget(chain: .bitcoin, xpub: nil, addresses: ["bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"], token: nil)
        _ = try await db.watch(asset: "Cold", target: target, now: now)
        func page(_ digit: Character) -> [ChainTransaction] {
            [ChainTransaction(txid: String(repeating: digit, count: 64), amount: 0.5, blockTime: now.addingTimeInterval(-600), confirmations: 3)]
        }
        #expect(try await db.storeChainTransactions(assetID: asset.id, page("a"), cursor: "count=2;page=2", now: now, timeZone: utc) == 1)
        _ = try await db.unwatch(asset: "Cold")
        await #expect(throws: DomainError.self) {
            try await db.storeChainTransactions(assetID: asset.id, page("b"), cursor: nil, now: now, timeZone: utc)
        }
        #expect(try await db.chainTransactions(assetID: asset.id).keys.sorted() == [String(repeating: "a", count: 64)])
    }

    /// An import's page cache is sized by its file while it writes, and given back after: the
    /// writer's cache is SQLite's default again, whether the import was stored or refused.
    @Test func anImportsLargerCacheIsGivenBack() async throws {
        #expect(SavingsDatabase.importCacheBytes(fileBytes: nil) == SavingsDatabase.defaultCacheBytes)
        #expect(SavingsDatabase.importCacheBytes(fileBytes: 1000) == SavingsDatabase.defaultCacheBytes)
        #expect(SavingsDatabase.importCacheBytes(fileBytes: 5 << 20) == 5 << 20)
        #expect(SavingsDatabase.importCacheBytes(fileBytes: 1 << 30) == 12 << 20)
        let dir = try temporaryDirectory()
        defer { try? FileManager.default.removeItem(atPath: dir) }
        let db = try SavingsDatabase.open(path: dir + "/savings.db")
        let now = Date(timeIntervalSince1970: 1_795_000_000), utc = TimeZone(identifier: "UTC")!
        func writerCache() async throws -> Int? { try await db.writer.write { try Int.fetchOne($0, sql: "PRAGMA cache_size") } }
        #expect(try await writerCache() == -2000)
        _ = try await db.createAsset(try NewAsset(name: "Bank", currency: "EUR", kind: "fiat", address: nil, notes: nil), now: now)
        // Over 2 MiB, so the import asks for a larger cache.
        let note = String(repeating: "n", count: 1900)
        var text = "date,amount,note\n"
        for day in 0..<1200 { text += "2025-\(String(format: "%02d", day % 12 + 1))-\(String(format: "%02d", day % 28 + 1)),\(day + 1).00,\(note) \(day)\n" }
        let file = dir + "/big.csv"
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(SavingsDatabase.importCacheBytes(fileBytes: text.utf8.count) > SavingsDatabase.defaultCacheBytes)
        #expect(try await db.importTransactions(asset: "Bank", path: file, partial: false, now: now, timeZone: utc).inserted == 1200)
        #expect(try await writerCache() == -2000, "the default cache after a stored import")
        try (text + "not a date,1.00,x\n").write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try await db.importTransactions(asset: "Bank", path: file, partial: false, now: now, timeZone: utc).refused)
        #expect(try await writerCache() == -2000, "the default cache after a refused import")
        try db.close()
    }

    @Test func fileIsPrivateAndMigrated() async throws {
        let dir = try temporaryDirectory()
        let path = dir + "/savings.db"
        let db = try SavingsDatabase.open(path: path)
        #expect(try await db.schemaVersion() == SavingsDatabase.knownMigrations.count)
        let pragmas = try await db.writer.read { db in
            (try String.fetchOne(db, sql: "PRAGMA journal_mode"), try Int.fetchOne(db, sql: "PRAGMA synchronous"),
             try Int.fetchOne(db, sql: "PRAGMA foreign_keys"))
        }
        #expect(pragmas.0 == "wal")
        #expect(pragmas.1 == 2, "synchronous=FULL")
        #expect(pragmas.2 == 1)
        _ = try await db.createGoal(try NewGoal(name: "G", currency: "EUR", targetAmount: "1", deadline: "2027-01-01",
                                                startDate: nil, notes: nil, today: try CalendarDate(parsing: "2026-11-22", field: "t")),
                                    now: Date())
        try db.close()
        let mode = try FileManager.default.attributesOfItem(atPath: path)[.posixPermissions] as? Int
        #expect(mode == 0o600)
        let walMode = try FileManager.default.attributesOfItem(atPath: path + "-wal")[.posixPermissions] as? Int
        #expect(walMode == 0o600)
        // Reopening an up-to-date database works and keeps the data.
        let again = try SavingsDatabase.open(path: path)
        #expect(try await again.schemaVersion() == SavingsDatabase.knownMigrations.count)
        try again.close()
    }

    @Test func newerSchemaIsRefusedAndLeftUntouched() throws {
        let dir = try temporaryDirectory()
        let path = dir + "/savings.db"
        try SavingsDatabase.open(path: path).close()
        let queue = try DatabaseQueue(path: path)
        try queue.write { db in
            try db.execute(sql: "INSERT INTO grdb_migrations (identifier) VALUES ('v99-from-the-future')")
        }
        try queue.close()
        let before = try Data(contentsOf: URL(fileURLWithPath: path))
        do {
            _ = try SavingsDatabase.open(path: path)
            Issue.record("a database from a newer schema was opened")
        } catch let error as StoreError {
            #expect(error.message.contains("newer savingsd"))
            #expect(error.message.contains("v99-from-the-future"))
        }
        let after = try Data(contentsOf: URL(fileURLWithPath: path))
        #expect(before == after)
    }

    @Test func garbageFileIsAClearError() throws {
        let dir = try temporaryDirectory()
        let path = dir + "/savings.db"
        try Data("this is not a database, just text that is long enough".utf8).write(to: URL(fileURLWithPath: path))
        #expect(throws: StoreError.self) { try SavingsDatabase.open(path: path) }
    }
}

@Suite struct StaleDraftQueryTests {
    /// Every dashboard counts stale drafts: the count and the page read the index by state, then
    /// month, so they touch the drafts alone rather than every plan of every past month.
    @Test func staleDraftsAreFoundThroughTheirIndex() async throws {
        let database = try SavingsDatabase.inMemory()
        let plans = try await database.writer.read { db in
            try StoreTestSupport.queryPlans([
                "SELECT \(PlanRecord.columns) FROM \(PlanRecord.from) WHERE \(SavingsDatabase.staleDraftsSQL) ORDER BY p.month_label, p.created_at, p.ref LIMIT 1",
                "SELECT COUNT(*) FROM monthly_plan p WHERE \(SavingsDatabase.staleDraftsSQL)",
            ], arguments: ["2026-11"], db)
        }
        for plan in plans {
            #expect(plan.contains("USING INDEX monthly_plan_by_state (state=? AND month_label<?)") || plan.contains("USING COVERING INDEX monthly_plan_by_state (state=? AND month_label<?)"), "\(plan)")
        }
    }
}
