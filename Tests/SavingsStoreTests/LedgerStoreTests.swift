import Foundation
import SavingsCore
import Testing
@testable import SavingsStore

@Suite struct LedgerStoreTests {
    let utc = TimeZone(identifier: "UTC")!
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    func d(_ text: String) -> Decimal { try! Amount.parse(text) }

    func setUp() async throws -> SavingsDatabase {
        let db = try SavingsDatabase.inMemory()
        let today = try CalendarDate(parsing: "2026-11-18", field: "t")
        for name in ["A", "B"] {
            _ = try await db.createGoal(try NewGoal(name: name, currency: "EUR", targetAmount: "1000", deadline: "2030-01-01",
                                                    startDate: nil, notes: nil, today: today), now: start)
        }
        _ = try await db.createAsset(try NewAsset(name: "Wallet", currency: "BTC", kind: "crypto", address: nil, notes: nil), now: start)
        return db
    }

    @Test func allocationsAreBoundedByTheBalanceAndLogged() async throws {
        let db = try await setUp()
        _ = try await db.addTransaction(asset: "Wallet", amount: d("1"), date: start, note: nil, externalID: nil, now: start, timeZone: utc)
        _ = try await db.setAllocation(asset: "Wallet", goal: "A", amount: d("0.6"), now: start, timeZone: utc)
        #expect(await kind { _ = try await db.setAllocation(asset: "Wallet", goal: "B", amount: d("0.5"), now: start, timeZone: utc) } == .insufficientBalance)
        _ = try await db.setAllocation(asset: "Wallet", goal: "B", amount: d("0.4"), now: start, timeZone: utc)
        let history = try await db.allocationHistory(asset: "Wallet", goal: nil, from: nil, to: nil)
        #expect(history.map(\.amount) == [d("0.6"), d("0.4")])
        #expect(history.first?.monthLabel.description == "2026-11")
        let portfolio = try await db.portfolio(now: start, pivot: try CurrencyCode("USD"))
        #expect(portfolio.balances.values.first == d("1"))
        #expect(portfolio.allocations.count == 2)
    }

    @Test func autoAllocationOnlyForADedicatedAsset() async throws {
        let db = try await setUp()
        _ = try await db.addTransaction(asset: "Wallet", amount: d("1"), date: start, note: nil, externalID: nil, now: start, timeZone: utc)
        _ = try await db.setAllocation(asset: "Wallet", goal: "A", amount: d("1"), now: start, timeZone: utc)
        let later = start.addingTimeInterval(60)
        let grown = try await db.addTransaction(asset: "Wallet", amount: d("0.5"), date: later, note: nil, externalID: nil, now: later, timeZone: utc)
        #expect(grown.autoAllocatedGoalID == (try await db.goal("A")).id)
        _ = try await db.setAllocation(asset: "Wallet", goal: "A", amount: d("1"), now: later, timeZone: utc)
        _ = try await db.setAllocation(asset: "Wallet", goal: "B", amount: d("0.5"), now: later, timeZone: utc)
        let shared = try await db.addTransaction(asset: "Wallet", amount: d("1"), date: later, note: nil, externalID: nil, now: later, timeZone: utc)
        #expect(shared.autoAllocatedGoalID == nil)
    }

    @Test func contributionAndItsUndoKeepTheTimelineConsistent() async throws {
        let db = try await setUp()
        let now = start.addingTimeInterval(3600)
        let first = try await db.contribute(goal: "A", amount: d("100"), asset: nil, date: now, note: nil, now: now, timeZone: utc)
        #expect(first.assetCreated)
        #expect(first.asset.name == "EUR savings")
        let backdated = try await db.contribute(goal: "A", amount: d("50"), asset: nil, date: start, note: nil, now: now, timeZone: utc)
        #expect(!backdated.assetCreated)
        let rows = try await db.allocationHistory(asset: "EUR savings", goal: "A", from: nil, to: nil)
        #expect(rows.map(\.amount) == [d("50"), d("150")])

        _ = try await db.undoContribution(backdated.id.uuidString, undoWindow: 86_400, now: now)
        #expect(try await db.allocationHistory(asset: "EUR savings", goal: "A", from: nil, to: nil).map(\.amount) == [d("100")])
        let portfolio = try await db.portfolio(now: now, pivot: try CurrencyCode("USD"))
        #expect(portfolio.allocations.map(\.amount) == [d("100")])
        #expect(portfolio.balances.values.reduce(0, +) == d("100"))
        #expect(await kind { _ = try await db.undoContribution(backdated.id.uuidString, undoWindow: 86_400, now: now) } == .invalidState)
        #expect(await kind { _ = try await db.undoContribution(first.id.uuidString, undoWindow: 60, now: now.addingTimeInterval(61)) } == .undoExpired)
    }

    @Test func changesInTheSameMillisecondKeepTheirOrder() async throws {
        let db = try await setUp()
        _ = try await db.addTransaction(asset: "Wallet", amount: d("1"), date: start, note: nil, externalID: nil, now: start, timeZone: utc)
        for amount in ["0.1", "0.7", "0.3", "0.5", "0.2"] {
            _ = try await db.setAllocation(asset: "Wallet", goal: "A", amount: d(amount), now: start, timeZone: utc)
        }
        let rows = try await db.allocationHistory(asset: "Wallet", goal: "A", from: nil, to: nil)
        #expect(rows.map(\.amount) == ["0.1", "0.7", "0.3", "0.5", "0.2"].map(d))
        #expect(try await db.portfolio(now: start, pivot: try CurrencyCode("USD")).allocations.first?.amount == d("0.2"))
    }

    /// An import applies its automatic allocations together; the history must be what `tx.add`
    /// of the same deposits, one after another, writes: backdated rows included. 150 deposits
    /// take INSERTs of every size the history writes (64, 64, 16, 4, 2 rows).
    @Test func importAllocatesAsTheSameDepositsAddedOneByOne() async throws {
        let now = start.addingTimeInterval(400 * 86_400)
        var rows: [(date: Date, amount: String)] = []
        var random = SeededGenerator(state: 2026)
        for _ in 0..<149 {
            let day = Double(random.next() % 380)
            rows.append((start.addingTimeInterval(day * 86_400), "\(random.next() % 1000 + 1).\(random.next() % 100)"))
        }
        rows.append((now.addingTimeInterval(30), "3"))  // seconds ahead of now: allocated, not in the balance yet
        let file = FileManager.default.temporaryDirectory.appendingPathComponent("alloc-\(UUID().uuidString).csv")
        defer { try? FileManager.default.removeItem(at: file) }
        try ("date,amount\n" + rows.map { "\(Timestamp.format($0.date)),\($0.amount)\n" }.joined()).write(to: file, atomically: true, encoding: .utf8)

        func prepared() async throws -> SavingsDatabase {
            let db = try await setUp()
            _ = try await db.addTransaction(asset: "Wallet", amount: d("1"), date: start, note: nil, externalID: nil, now: start, timeZone: utc)
            _ = try await db.setAllocation(asset: "Wallet", goal: "A", amount: d("1"), now: start, timeZone: utc)
            // Later rows the backdated deposits must shift.
            for day in [100.0, 200, 300] {
                let at = start.addingTimeInterval(day * 86_400)
                _ = try await db.addTransaction(asset: "Wallet", amount: d("2"), date: at, note: nil, externalID: nil, now: at, timeZone: utc)
            }
            return db
        }
        let imported = try await prepared(), added = try await prepared()
        let result = try await imported.importTransactions(asset: "Wallet", path: file.path, partial: false, now: now, timeZone: utc)
        for row in rows {
            _ = try await added.addTransaction(asset: "Wallet", amount: d(row.amount), date: row.date, note: nil, externalID: nil, now: now, timeZone: utc)
        }
        #expect(result.autoAllocated == rows.count)
        func timeline(_ db: SavingsDatabase) async throws -> [String] {
            try await db.allocationHistory(asset: "Wallet", goal: "A", from: nil, to: nil).map {
                "\(Timestamp.format($0.timestamp)) \(Timestamp.format($0.createdAt)) \($0.monthLabel) \($0.amount)"
            }
        }
        let expected = try await timeline(added)
        #expect(expected.count == 4 + rows.count)
        #expect(try await timeline(imported) == expected)
        let ids = try await imported.allocationHistory(asset: "Wallet", goal: "A", from: nil, to: nil).map(\.id)
        #expect(Set(ids).count == ids.count)
        let allocation = { (db: SavingsDatabase) in try await db.portfolio(now: now, pivot: try CurrencyCode("USD")).allocations.map(\.amount) }
        #expect(try await allocation(imported) == (try await allocation(added)))
    }

    @Test func externalIDsAreIdempotentPerAsset() async throws {
        let db = try await setUp()
        _ = try await db.addTransaction(asset: "Wallet", amount: d("1"), date: start, note: nil, externalID: "x1", now: start, timeZone: utc)
        #expect(await kind { _ = try await db.addTransaction(asset: "Wallet", amount: d("1"), date: start, note: nil, externalID: "x1", now: start, timeZone: utc) } == .conflict)
        #expect(try await db.transactions(TransactionFilter(asset: "Wallet")).count == 1)
    }

    /// tx.list merges each account's newest rows: the same order, pages and filters as one sort
    /// of every transaction by (date, id), ties on the date included.
    @Test func listingMergesAccountsNewestFirst() async throws {
        let db = try await setUp()
        for name in ["Bank", "Cash", "Old", "Sparse"] {
            _ = try await db.createAsset(try NewAsset(name: name, currency: "EUR", kind: "fiat", address: nil, notes: nil), now: start)
        }
        var random = SeededGenerator(state: 7)
        var added: [(asset: String, date: String, id: String)] = []
        for _ in 0..<150 {
            let asset = ["Wallet", "Bank", "Cash", "Old", "Sparse"][Int(random.next() % 5)]
            // Few distinct dates, so many rows share one; one account's rows all older than the
            // others', one account's rows days apart.
            let day = asset == "Old" ? -40 - Double(random.next() % 5) : asset == "Sparse" ? Double(random.next() % 4) * 4 : Double(random.next() % 12)
            let date = start.addingTimeInterval(day * 86_400)
            let recorded = try await db.addTransaction(asset: asset, amount: d("1"), date: date, note: nil, externalID: nil,
                                                       now: start, timeZone: utc)
            added.append((asset, Timestamp.format(date), StoreKey.id(recorded.transaction.id)))
        }
        _ = try await db.setAllocation(asset: "Bank", goal: "A", amount: d("1"), now: start.addingTimeInterval(20 * 86_400), timeZone: utc)
        let sorted = added.sorted { ($0.date, $0.id) > ($1.date, $1.id) }
        func ids(_ filter: TransactionFilter) async throws -> [String] {
            try await db.transactions(filter).map { StoreKey.id($0.id) }
        }
        #expect(try await ids(TransactionFilter(limit: 1000)) == sorted.map(\.id))
        #expect(try await ids(TransactionFilter(limit: 10)) == sorted.prefix(10).map(\.id))
        #expect(try await ids(TransactionFilter(limit: 0)) == [])
        #expect(try await ids(TransactionFilter(goal: "A", limit: 1000)) == sorted.filter { $0.asset == "Bank" }.map(\.id))
        #expect(try await ids(TransactionFilter(goal: "B", limit: 1000)) == [])
        #expect(try await ids(TransactionFilter(asset: "Cash", limit: 1000)) == sorted.filter { $0.asset == "Cash" }.map(\.id))
        let from = start.addingTimeInterval(3 * 86_400), to = start.addingTimeInterval(8 * 86_400)
        #expect(try await ids(TransactionFilter(from: from, to: to, limit: 1000))
                == sorted.filter { $0.date >= Timestamp.format(from) && $0.date <= Timestamp.format(to) }.map(\.id))
        // Pages of 7 through everything, each continuing after the last row of the one before.
        var paged: [String] = []
        var after: (date: String, id: String)?
        while true {
            let page = try await db.transactions(TransactionFilter(limit: 7, after: after))
            guard let last = page.last else { break }
            paged += page.map { StoreKey.id($0.id) }
            after = (Timestamp.format(last.date), StoreKey.id(last.id))
        }
        #expect(paged == sorted.map(\.id))
    }
}
