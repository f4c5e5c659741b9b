import Foundation
import SavingsCore
import Synchronization
import Testing
@testable import SavingsStore

@Suite struct FigureCacheTests {
    let utc = TimeZone(identifier: "UTC")!
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    let usd = try! CurrencyCode("USD")

    func setUp() async throws -> SavingsDatabase {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createAsset(try NewAsset(name: "Wallet", currency: "BTC", kind: "crypto", address: nil, notes: nil), now: start)
        _ = try await db.addTransaction(asset: "Wallet", amount: 1, date: start, note: nil, externalID: nil, now: start, timeZone: utc)
        return db
    }

    func balance(_ db: SavingsDatabase, at now: Date) async throws -> Decimal? {
        try await db.portfolio(now: now, pivot: usd).balances.values.first
    }

    @Test func everyWriteIsSeenAtOnce() async throws {
        let db = try await setUp()
        #expect(try await balance(db, at: start) == 1)
        for n in 2...20 {
            _ = try await db.addTransaction(asset: "Wallet", amount: 1, date: start, note: nil, externalID: nil, now: start, timeZone: utc)
            #expect(try await balance(db, at: start) == Decimal(n), "never the cached figure after a write")
        }
        _ = try await db.recordRate(ExchangeRate(base: try CurrencyCode("BTC"), quote: usd, rate: 5, asOf: start, provider: "manual", fetchedAt: start))
        #expect(try await db.portfolio(now: start, pivot: usd).rates.rates.count == 1)
    }

    @Test func aTransactionDatedLaterCountsOnceItsTimeComes() async throws {
        let db = try await setUp()
        let later = start.addingTimeInterval(30)
        _ = try await db.addTransaction(asset: "Wallet", amount: 2, date: later, note: nil, externalID: nil, now: later, timeZone: utc)
        #expect(try await balance(db, at: start) == 1)
        #expect(try await balance(db, at: start.addingTimeInterval(10)) == 1, "served from the snapshot")
        #expect(try await balance(db, at: later) == 3, "the snapshot ends when the next transaction's date arrives")
        #expect(try await balance(db, at: start) == 1, "and a clock moved back is not served a later snapshot")
    }

    /// Dated rows of several accounts: the snapshot ends at the earliest of them, whichever
    /// account holds it, and each counts in its own account once its time comes.
    @Test func theEarliestDatedRowOfAnyAccountEndsTheSnapshot() async throws {
        let db = try await setUp()
        _ = try await db.createAsset(try NewAsset(name: "Bank", currency: "BTC", kind: "crypto", address: nil, notes: nil), now: start)
        for (asset, seconds, amount) in [("Wallet", 50.0, Decimal(4)), ("Bank", 20, 8), ("Bank", 70, 16)] {
            let at = start.addingTimeInterval(seconds)
            _ = try await db.addTransaction(asset: asset, amount: amount, date: at, note: nil, externalID: nil, now: at, timeZone: utc)
        }
        func total(at seconds: Double) async throws -> Decimal {
            try await db.portfolio(now: start.addingTimeInterval(seconds), pivot: try CurrencyCode("USD")).balances.values.reduce(0, +)
        }
        #expect(try await total(at: 0) == 1)
        #expect(try await total(at: 19) == 1)
        #expect(try await total(at: 20) == 9)
        #expect(try await total(at: 49) == 9)
        #expect(try await total(at: 50) == 13)
        #expect(try await total(at: 70) == 29)
    }

    @Test func concurrentWritersNeverLeaveAStaleSnapshot() async throws {
        let db = try await setUp()
        try await withThrowingTaskGroup(of: Void.self) { group in
            for _ in 0..<4 {
                group.addTask {
                    for _ in 0..<25 {
                        _ = try await db.addTransaction(asset: "Wallet", amount: 1, date: self.start, note: nil, externalID: nil,
                                                        now: self.start, timeZone: self.utc)
                    }
                }
                group.addTask { for _ in 0..<50 { _ = try await self.balance(db, at: self.start) } }
            }
            try await group.waitForAll()
        }
        #expect(try await balance(db, at: start) == 101)
    }

    /// Callers at once after a write share one load (one snapshot number); a caller whose
    /// clock is past the shared load's next dated transaction reads on its own.
    @Test func concurrentCallersShareOneLoad() async throws {
        let db = try await setUp()
        _ = try await db.addTransaction(asset: "Wallet", amount: 1, date: start, note: nil, externalID: nil, now: start, timeZone: utc)
        let snapshots = try await withThrowingTaskGroup(of: UInt64.self) { group in
            for _ in 0..<8 { group.addTask { try await db.portfolio(now: start, pivot: usd).snapshot } }
            return try await group.reduce(into: Set<UInt64>()) { $0.insert($1) }
        }
        #expect(snapshots.count == 1, "one load for all of them")
        #expect(try await balance(db, at: start) == 2)
    }

    func emptyPortfolio() -> Portfolio {
        Portfolio(goals: [], assets: [], balances: [:], allocations: [], rates: RateTable(rates: [], pivot: usd))
    }

    /// The load handed out is the one under way for the same version and pivot, begun no later
    /// than the caller's clock; another version, pivot or an earlier clock starts a new one, and
    /// a failed load is not handed out again.
    @Test func aLoadIsSharedOnlyWhereItHolds() async throws {
        let cache = FigureCache()
        let starts = Counter()
        let released = Mutex(false)
        let slow = { @Sendable () async throws -> (portfolio: Portfolio, validUntil: Date?) in
            starts.increment()
            while !released.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(1)) }
            return (self.emptyPortfolio(), nil)
        }
        let first = cache.sharedLoad(version: 0, now: start, pivot: usd, start: slow)
        let same = cache.sharedLoad(version: 0, now: start.addingTimeInterval(5), pivot: usd, start: slow)
        #expect(first.at == start && same.at == start)
        let earlier = cache.sharedLoad(version: 0, now: start.addingTimeInterval(-5), pivot: usd, start: slow)
        #expect(earlier.at == start.addingTimeInterval(-5), "not a load begun after the caller's clock")
        let other = cache.sharedLoad(version: 1, now: start.addingTimeInterval(10), pivot: usd, start: slow)
        let euro = cache.sharedLoad(version: 1, now: start.addingTimeInterval(10), pivot: try CurrencyCode("EUR"), start: slow)
        released.withLock { $0 = true }
        for load in [first, same, earlier, other, euro] { _ = try await load.task.value }
        #expect(starts.value == 4, "the first load served the second caller")

        struct Failed: Error {}
        let failing = cache.sharedLoad(version: 2, now: start, pivot: usd) { throw Failed() }
        await #expect(throws: Failed.self) { try await failing.task.value }
        let again = cache.sharedLoad(version: 2, now: start, pivot: usd) { (self.emptyPortfolio(), nil) }
        _ = try await again.task.value
    }
}

final class Counter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
