import Foundation
import Testing
@testable import SavingsCore

extension SeededGenerator {
    /// A decimal with up to `scale` places in [0, maxUnits).
    mutating func amount(maxUnits: UInt64, scale: Int) -> Decimal {
        Decimal(Int(next() % (maxUnits * UInt64(pow10(scale))))) / Decimal(pow10(scale))
    }

    private func pow10(_ n: Int) -> Int { (0..<n).reduce(1) { result, _ in result * 10 } }
}

@Suite struct FundingCalculatorTests {
    let a = UUID(), b = UUID(), c = UUID()
    func d(_ text: String) -> Decimal { try! Amount.parse(text) }

    @Test func targetsThatFitAreFundedInFull() {
        let split = FundingCalculator.split(balance: d("1.0"), targets: [a: d("0.6"), b: d("0.3")])
        #expect(split.funded == [a: d("0.6"), b: d("0.3")])
        #expect(split.unallocated == d("0.1"))
        #expect(!split.overAllocated)
    }

    @Test func aWithdrawalFundsGoalsProportionally() {
        // 1.0 BTC allocated 0.6/0.4, then 0.5 withdrawn: each goal keeps half its target.
        let split = FundingCalculator.split(balance: d("0.5"), targets: [a: d("0.6"), b: d("0.4")])
        #expect(split.funded == [a: d("0.3"), b: d("0.2")])
        #expect(split.unallocated == 0)
        #expect(split.overAllocated)
    }

    @Test func thirdsStillAddUpToTheBalance() {
        let split = FundingCalculator.split(balance: d("1"), targets: [a: d("1"), b: d("1"), c: d("1")])
        #expect(split.totalFunded == d("1"))
        #expect(split.funded.values.allSatisfy { $0 >= d("0.333333333333333333") && $0 <= d("0.333333333333333334") })
    }

    @Test func negativeBalanceFundsNothing() {
        let split = FundingCalculator.split(balance: d("-2"), targets: [a: d("1")])
        #expect(split.funded[a] == 0)
        #expect(split.unallocated == 0)
    }

    @Test func propertiesHoldForRandomBalancesTargetsAndWithdrawals() {
        var random = SeededGenerator(state: 20261122)
        for _ in 0..<2000 {
            let goals = (0..<Int(random.next() % 5 + 1)).map { _ in UUID() }
            var targets: [UUID: Decimal] = [:]
            for goal in goals { targets[goal] = random.amount(maxUnits: 10, scale: Int(random.next() % 9)) }
            let deposits = random.amount(maxUnits: 30, scale: 8)
            let withdrawals = random.next() % 3 == 0 ? random.amount(maxUnits: 30, scale: 8) : 0
            let balance = deposits - withdrawals
            let split = FundingCalculator.split(balance: balance, targets: targets)
            let sumTargets = targets.values.reduce(0, +)
            #expect(split.totalFunded <= max(balance, 0), "funded never exceeds the balance")
            #expect(split.unallocated + split.totalFunded == max(balance, 0), "unallocated + funded = max(balance, 0)")
            #expect(split.unallocated >= 0)
            if sumTargets <= max(balance, 0) {
                #expect(split.totalFunded == sumTargets, "covered targets are funded in full")
                #expect(split.funded.allSatisfy { $0.value == targets[$0.key] })
            } else {
                #expect(split.funded.allSatisfy { $0.value <= targets[$0.key]! })
            }
        }
    }
}

@Suite struct AllocationRulesTests {
    let goal = UUID(), other = UUID()

    @Test func dedicatedAssetGrowsItsAllocation() {
        #expect(AutoAllocation.goalToGrow(allocations: [goal: 1], balanceBefore: 1, deposit: 1) == goal)
        #expect(AutoAllocation.goalToGrow(allocations: [goal: 2], balanceBefore: 1, deposit: 1) == goal)
        #expect(AutoAllocation.goalToGrow(allocations: [goal: 1, other: 0], balanceBefore: 1, deposit: 1) == goal)
    }

    @Test func sharedOrPartialAssetsStayUnallocated() {
        #expect(AutoAllocation.goalToGrow(allocations: [goal: 0.5], balanceBefore: 1, deposit: 1) == nil)
        #expect(AutoAllocation.goalToGrow(allocations: [goal: 0.5, other: 0.5], balanceBefore: 1, deposit: 1) == nil)
        #expect(AutoAllocation.goalToGrow(allocations: [:], balanceBefore: 0, deposit: 1) == nil)
        #expect(AutoAllocation.goalToGrow(allocations: [goal: 1], balanceBefore: 1, deposit: -1) == nil)
    }

    @Test func backdatedChangesShiftLaterRows() {
        let asset = UUID()
        func row(_ amount: Decimal, _ t: TimeInterval) -> AllocationHistoryEntry {
            AllocationHistoryEntry(id: UUID(), assetID: asset, goalID: goal, amount: amount, timestamp: Date(timeIntervalSince1970: t),
                                   createdAt: Date(timeIntervalSince1970: t), monthLabel: MonthLabel(year: 2026, month: 11))
        }
        let rows = [row(100, 10), row(150, 30)]
        let result = AllocationTimeline.applying(deltas: [(Date(timeIntervalSince1970: 20), 20)], to: rows) { _, amount in row(amount, 20) }
        #expect(result.inserted.map(\.amount) == [120])
        #expect(result.shifted.map(\.amount) == [170])
        #expect(AllocationTimeline.target(at: Date(timeIntervalSince1970: 5), in: rows) == 0)
        #expect(AllocationTimeline.target(at: Date(timeIntervalSince1970: 30), in: rows) == 150)
    }
}

/// SPEC 5.1 applied literally, one change at a time: the new row starts from the target in
/// force at its instant, every later row moves by the change. The batch must equal this.
private func appliedOneByOne(_ deltas: [(at: Date, delta: Decimal)], to rows: [AllocationHistoryEntry],
                             newRow: (Int, Decimal) -> AllocationHistoryEntry) -> [AllocationHistoryEntry] {
    var rows = rows
    for (index, change) in deltas.enumerated() {
        let inserted = newRow(index, AllocationTimeline.target(at: change.at, in: rows) + change.delta)
        for position in rows.indices where rows[position].timestamp > change.at { rows[position].amount += change.delta }
        rows.append(inserted)
    }
    return rows
}

@Suite struct AllocationBatchTests {
    @Test func aBatchEqualsItsChangesAppliedOneByOne() {
        var random = SeededGenerator(state: 5_1)
        let asset = UUID(), goal = UUID(), month = MonthLabel(year: 2026, month: 11)
        for _ in 0..<3000 {
            // Few distinct instants, so changes land on existing rows' instants and on each other's.
            let existing = (0..<Int(random.next() % 6)).map { index in
                AllocationHistoryEntry(id: UUID(), assetID: asset, goalID: goal, amount: random.amount(maxUnits: 100, scale: 2),
                                       timestamp: Date(timeIntervalSince1970: TimeInterval(random.next() % 8)),
                                       createdAt: Date(timeIntervalSince1970: TimeInterval(index)), monthLabel: month)
            }
            let deltas = (0..<Int(random.next() % 6 + 1)).map { _ -> (at: Date, delta: Decimal) in
                let size = random.amount(maxUnits: 50, scale: 3)
                return (Date(timeIntervalSince1970: TimeInterval(random.next() % 9)), random.next() % 4 == 0 ? -size : size)
            }
            let ids = deltas.map { _ in UUID() }
            func newRow(_ index: Int, _ amount: Decimal) -> AllocationHistoryEntry {
                AllocationHistoryEntry(id: ids[index], assetID: asset, goalID: goal, amount: amount, timestamp: deltas[index].at,
                                       createdAt: Date(timeIntervalSince1970: TimeInterval(100 + index)), monthLabel: month)
            }
            let expected = appliedOneByOne(deltas, to: existing, newRow: newRow)
            // The batch gets only what the store reads: the row in force at the earliest change and the later ones.
            let earliest = deltas.map(\.at).min()!
            let inForce = existing.filter { $0.timestamp <= earliest }.max { ($0.timestamp, $0.createdAt) < ($1.timestamp, $1.createdAt) }
            let given = [inForce].compactMap { $0 } + existing.filter { $0.timestamp > earliest }
            let batch = AllocationTimeline.applying(deltas: deltas, to: given, newRow: newRow)
            var result = Dictionary(uniqueKeysWithValues: existing.map { ($0.id, $0) })
            for row in batch.shifted + batch.inserted { result[row.id] = row }
            #expect(batch.inserted.map(\.id) == ids, "new rows come back in the order of the changes")
            #expect(result.count == expected.count)
            for row in expected { #expect(result[row.id] == row, "row at \(row.timestamp) after \(deltas)") }
        }
    }
}

@Suite struct RateTableTests {
    let eur = try! CurrencyCode("EUR"), usd = try! CurrencyCode("USD"), btc = try! CurrencyCode("BTC"), gbp = try! CurrencyCode("GBP")
    let t1 = Date(timeIntervalSince1970: 1000), t2 = Date(timeIntervalSince1970: 2000)

    func rate(_ base: CurrencyCode, _ quote: CurrencyCode, _ value: String, _ at: Date) -> ExchangeRate {
        ExchangeRate(base: base, quote: quote, rate: try! Amount.parse(value), asOf: at, provider: "manual", fetchedAt: at)
    }

    @Test func directInverseAndTriangulated() {
        let table = RateTable(rates: [rate(btc, usd, "60000", t1), rate(eur, usd, "1.25", t2), rate(btc, usd, "50000", t2)], pivot: usd)
        #expect(table.conversion(from: btc, to: usd)?.rate == 50000, "the newest rate wins")
        #expect(table.conversion(from: usd, to: eur)?.rate == Decimal(string: "0.8")!)
        let triangulated = table.conversion(from: btc, to: eur)
        #expect(triangulated?.rate == 40000)
        #expect(triangulated?.path == ["BTC/USD", "EUR/USD^-1"])
        #expect(table.conversion(from: eur, to: eur)?.rate == 1)
        #expect(table.conversion(from: gbp, to: eur) == nil, "a missing rate is not guessed")
    }

    @Test func inverseLegsDivideExactly() {
        let table = RateTable(rates: [rate(btc, usd, "60000", t1), rate(eur, usd, "1.2", t1)], pivot: usd)
        #expect(table.conversion(from: btc, to: eur)?.rate == 50000)
        #expect(table.conversion(from: usd, to: eur)?.rate == Decimal(string: "0.833333333333333333")!, "rounded to 18 places")
    }

    @Test func valuationReportsMissingRatesAndNeverCountsThemAsOne() throws {
        let now = Date(timeIntervalSince1970: 1_800_000_000)
        let goal = Goal(id: UUID(), name: "House", currency: eur, targetAmount: 100_000, deadline: try CalendarDate(parsing: "2030-01-01", field: "d"),
                        startDate: try CalendarDate(parsing: "2026-01-01", field: "d"), archived: false, notes: nil, createdAt: now, updatedAt: now)
        let bitcoin = Asset(id: UUID(), name: "Cold wallet", currency: btc, kind: .crypto, address: nil, notes: nil, createdAt: now, updatedAt: now)
        let account = Asset(id: UUID(), name: "Savings", currency: eur, kind: .fiat, address: nil, notes: nil, createdAt: now, updatedAt: now)
        var portfolio = Portfolio(goals: [goal], assets: [bitcoin, account], balances: [bitcoin.id: 1, account.id: 500],
                                  allocations: [Allocation(assetID: bitcoin.id, goalID: goal.id, amount: Decimal(string: "0.5")!),
                                                Allocation(assetID: account.id, goalID: goal.id, amount: 500)],
                                  rates: RateTable(rates: [], pivot: usd))
        let without = try #require(Valuation(portfolio).goal(goal.id))
        #expect(without.currentTotal == 500)
        #expect(without.missingRates == ["BTC/EUR"])
        portfolio.rates = RateTable(rates: [rate(btc, eur, "40000", t1)], pivot: usd)
        let with = try #require(Valuation(portfolio).goal(goal.id))
        #expect(with.currentTotal == 20500)
        #expect(with.progress == Decimal(string: "0.205")!)
        #expect(with.remaining == 79500)
        #expect(!with.incomplete)
        let dashboard = Valuation(portfolio).dashboard(currency: eur)
        #expect(dashboard.goalsTotal == 20500)
        #expect(dashboard.unallocatedValue == 20000, "the other 0.5 BTC")
    }
}
