import Foundation
import GRDB
import SavingsCore
import Testing
@testable import SavingsStore

/// Goals, assets, allocations and rates are each read again only after a write to their own
/// table, and the snapshot after such a write always shows it.
@Suite struct StructureCacheTests {
    let utc = TimeZone(identifier: "UTC")!
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    let usd = try! CurrencyCode("USD")
    let today = try! CalendarDate(parsing: "2026-11-18", field: "today")

    func setUp() async throws -> SavingsDatabase {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createAsset(try NewAsset(name: "Wallet", currency: "USD", kind: "fiat", address: nil, notes: nil), now: start)
        _ = try await db.createGoal(goal("Trip"), now: start)
        _ = try await db.addTransaction(asset: "Wallet", amount: 10, date: start, note: nil, externalID: nil, now: start, timeZone: utc)
        return db
    }

    func goal(_ name: String) throws -> NewGoal {
        try NewGoal(name: name, currency: "USD", targetAmount: "100", deadline: "2027-06-30", startDate: nil, notes: nil, today: today)
    }

    func portfolio(_ db: SavingsDatabase) async throws -> Portfolio { try await db.portfolio(now: start, pivot: usd) }

    func reads(_ db: SavingsDatabase) -> [Int] { StructureCache.Table.allCases.map { db.structure.reads(of: $0) } }

    @Test func depositsDoNotReadTheStructureAgain() async throws {
        let db = try await setUp()
        _ = try await portfolio(db)
        let before = reads(db)
        for n in 1...5 {
            _ = try await db.addTransaction(asset: "Wallet", amount: 1, date: start, note: nil, externalID: nil, now: start, timeZone: utc)
            #expect(try await portfolio(db).balances.values.first == Decimal(10 + n))
        }
        #expect(reads(db) == before)
    }

    /// A deposit into an account reserved for one goal grows that allocation: allocations are
    /// read again, goals, assets and rates are not.
    @Test func anAutoAllocatedDepositReadsAllocationsAlone() async throws {
        let db = try await setUp()
        _ = try await db.setAllocation(asset: "Wallet", goal: "Trip", amount: 10, now: start, timeZone: utc)
        _ = try await portfolio(db)
        let before = reads(db)
        _ = try await db.addTransaction(asset: "Wallet", amount: 5, date: start, note: nil, externalID: nil, now: start, timeZone: utc)
        #expect(try await portfolio(db).allocations.map(\.amount) == [15])
        #expect(reads(db) == [before[0], before[1], before[2] + 1, before[3], before[4]])
    }

    @Test func everyWriteToTheStructureIsSeenAtOnce() async throws {
        let db = try await setUp()
        _ = try await portfolio(db)
        _ = try await db.createGoal(goal("Bike"), now: start)
        #expect(try await portfolio(db).goals.map(\.name) == ["Bike", "Trip"])
        _ = try await db.updateGoal("Trip", changes: GoalChanges(name: "Journey"), now: start)
        #expect(try await portfolio(db).goals.map(\.name) == ["Bike", "Journey"])
        _ = try await db.setAllocation(asset: "Wallet", goal: "Bike", amount: 4, now: start, timeZone: utc)
        #expect(try await portfolio(db).allocations.map(\.amount) == [4])
        _ = try await db.updateAsset("Wallet", changes: AssetChanges(name: "Purse"), now: start)
        #expect(try await portfolio(db).assets.map(\.name) == ["Purse"])
        _ = try await db.recordRate(ExchangeRate(base: try CurrencyCode("EUR"), quote: usd, rate: 2, asOf: start, provider: "manual", fetchedAt: start))
        #expect(try await portfolio(db).rates.rates.map(\.rate) == [2])
        // The goal's allocation goes with it (a cascade, not a statement of its own).
        _ = try await db.deleteGoal("Bike")
        let after = try await portfolio(db)
        #expect(after.goals.map(\.name) == ["Journey"])
        #expect(after.allocations.isEmpty)
    }

    /// A month's plans are read again only after a write to the plans (a deposit leaves them
    /// kept), and then show it; one month is kept at a time.
    @Test func aMonthsPlansAreReadAgainOnlyAfterAWriteToThem() async throws {
        let db = try await setUp()
        let november = try MonthLabel(parsing: "2026-11"), december = try MonthLabel(parsing: "2026-12")
        let requirement = Requirement(monthsRemaining: 7, requiredMonthly: 12, remaining: 84, status: .onTrack)
        let trip = try await portfolio(db).goals[0].id
        _ = try await db.createPlans(month: november, requirements: [trip: requirement], now: start)
        _ = try await db.createPlans(month: december, requirements: [trip: requirement], now: start)
        func plans(_ month: MonthLabel) async throws -> [Decimal?] { try await db.plans(month: month).map(\.customAmount) }
        #expect(try await plans(november) == [nil])
        let reads = db.structure.reads(of: .monthlyPlan)
        #expect(try await plans(november) == [nil])
        _ = try await db.addTransaction(asset: "Wallet", amount: 1, date: start, note: nil, externalID: nil, now: start, timeZone: utc)
        #expect(try await plans(november) == [nil])
        #expect(db.structure.reads(of: .monthlyPlan) == reads)
        _ = try await db.updatePlan(.goal("Trip", november), now: start) { $0.customAmount = 20 }
        #expect(try await plans(november) == [20])
        #expect(db.structure.reads(of: .monthlyPlan) == reads + 1)
        #expect(try await plans(december) == [nil])
        #expect(try await plans(november) == [20])
        #expect(db.structure.reads(of: .monthlyPlan) == reads + 3)
        // A goal's plans go with it (a cascade).
        _ = try await db.deleteGoal("Trip")
        #expect(try await plans(november).isEmpty)
    }

    /// The version moves at a write's first change to the structure, before it commits: a
    /// reading whose snapshot holds the write never takes the structure kept from before it.
    @Test func theVersionMovesWhileTheWriteIsInProgress() async throws {
        let db = try await setUp()
        _ = try await portfolio(db)
        let before = db.structure.versions
        let during = try await db.writer.write { conn -> [UInt64] in
            try conn.execute(sql: "UPDATE goal SET name = 'Voyage' WHERE name = 'Trip'")
            return db.structure.versions
        }
        #expect(during[0] != before[0])
        #expect(Array(during[1...]) == Array(before[1...]), "the other tables' versions stay")
        #expect(db.structure.versions[0] != during[0], "and again once it has ended")
        // A writer that touches other tables alone leaves them where they were.
        let settled = db.structure.versions
        try await db.writer.write { conn in try conn.execute(sql: "UPDATE asset_transaction SET note = 'x'") }
        #expect(db.structure.versions == settled)
    }

    /// A structure write that ends between the version read and the snapshot: the kept
    /// structure is not used, and what was read is not kept under the old version.
    @Test func aWriteBetweenTheVersionAndTheSnapshotIsNotMissed() async throws {
        let db = try await setUp()
        _ = try await portfolio(db)
        let before = db.structure.versions
        _ = try await db.createGoal(goal("Bike"), now: start)
        let reads = db.structure.reads(of: .goal)
        let names = try await db.writer.read { conn in try db.structure.structure(conn, before: before).goals.map(\.name) }
        #expect(names == ["Bike", "Trip"])
        #expect(db.structure.reads(of: .goal) == reads + 1)
        _ = try await portfolio(db)
        #expect(db.structure.reads(of: .goal) == reads + 2, "not kept under the version from before the write")
        _ = try await portfolio(db)
        _ = try await db.addTransaction(asset: "Wallet", amount: 1, date: start, note: nil, externalID: nil, now: start, timeZone: utc)
        _ = try await portfolio(db)
        #expect(db.structure.reads(of: .goal) == reads + 2)
    }

    /// A write that fails after changing the structure rolls back, and the version still moves.
    @Test func aRolledBackWriteMovesTheVersionToo() async throws {
        let db = try await setUp()
        _ = try await portfolio(db)
        let before = db.structure.versions
        await #expect(throws: (any Error).self) {
            try await db.writer.write { conn in
                try conn.execute(sql: "UPDATE goal SET name = 'Voyage'")
                throw CancellationError()
            }
        }
        #expect(db.structure.versions[0] != before[0])
        #expect(try await portfolio(db).goals.map(\.name) == ["Trip"])
    }
}
