import Foundation
import SavingsCore
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
}
