import Foundation
import Testing
@testable import SavingsCore

/// A valuation that takes over from an earlier one (its splits, conversions and unchanged goal
/// figures) must give exactly the figures of one worked out from scratch, whatever changed.
@Suite struct ValuationReuseTests {
    let currencies = ["EUR", "USD", "BTC", "GBP"].map { try! CurrencyCode($0) }
    let start = Date(timeIntervalSince1970: 1_800_000_000)

    func rate(_ base: CurrencyCode, _ quote: CurrencyCode, _ value: Decimal, _ at: Date) -> ExchangeRate {
        ExchangeRate(base: base, quote: quote, rate: value, asOf: at, provider: "manual", fetchedAt: at)
    }

    func initialPortfolio(_ random: inout SeededGenerator) -> (Portfolio, [ExchangeRate]) {
        let day = try! CalendarDate(parsing: "2030-01-01", field: "d")
        let goals = (0..<12).map { index in
            Goal(id: UUID(), name: "Goal \(index)", currency: currencies[index % 3], targetAmount: random.amount(maxUnits: 5000, scale: 2) + 1,
                 deadline: day, startDate: day, archived: false, notes: nil, createdAt: start, updatedAt: start)
        }
        let assets = (0..<8).map { index in
            Asset(id: UUID(), name: "Asset \(index)", currency: currencies[index % 4], kind: index % 4 == 2 ? .crypto : .fiat,
                  address: nil, notes: nil, createdAt: start, updatedAt: start)
        }
        var balances: [UUID: Decimal] = [:]
        for asset in assets { balances[asset.id] = random.amount(maxUnits: 3000, scale: 4) }
        var allocations: [Allocation] = []
        for asset in assets {
            for goal in goals where random.next() % 4 == 0 {
                allocations.append(Allocation(assetID: asset.id, goalID: goal.id, amount: random.amount(maxUnits: 800, scale: 2)))
            }
        }
        // GBP has no rate at first: its goals and assets report it missing.
        let rates = [rate(currencies[2], currencies[1], 60000, start), rate(currencies[0], currencies[1], Decimal(string: "1.1")!, start)]
        return (Portfolio(goals: goals, assets: assets, balances: balances, allocations: allocations,
                          rates: RateTable(rates: rates, pivot: currencies[1])), rates)
    }

    @Test func reusedFiguresEqualFiguresWorkedOutAgain() {
        var random = SeededGenerator(state: 20261125)
        var (portfolio, rates) = initialPortfolio(&random)
        var staleBefore = start.addingTimeInterval(-60)
        var earlier = Valuation(portfolio).judged(staleBefore: staleBefore)
        var earlierGoals = earlier.activeGoals()
        for step in 1...400 {
            let now = start.addingTimeInterval(TimeInterval(step * 600))
            switch random.next() % 10 {
            case 0...3:  // a deposit or withdrawal (most writes)
                let asset = portfolio.assets[Int(random.next() % UInt64(portfolio.assets.count))]
                let delta = random.amount(maxUnits: 200, scale: 3)
                portfolio.balances[asset.id, default: 0] += random.next() % 3 == 0 ? -delta : delta
            case 4:
                let index = Int(random.next() % UInt64(portfolio.allocations.count))
                portfolio.allocations[index].amount = random.amount(maxUnits: 800, scale: 2)
            case 5:
                let index = Int(random.next() % UInt64(portfolio.goals.count))
                portfolio.goals[index].targetAmount = random.amount(maxUnits: 5000, scale: 2) + 1
                if random.next() % 4 == 0 { portfolio.goals[index].archived.toggle() }
            case 6:
                let index = Int(random.next() % UInt64(portfolio.assets.count))
                portfolio.assets[index].name = "Renamed \(step)"
            case 7:  // a new rate (GBP appears after a while)
                let base = currencies[[0, 2, 3][Int(random.next() % 3)]]
                rates.append(rate(base, currencies[1], random.amount(maxUnits: 70000, scale: 4) + 1, now))
                portfolio.rates = RateTable(rates: rates, pivot: currencies[1])
            case 8:  // time passes: rates turn stale
                staleBefore = now.addingTimeInterval(-TimeInterval(random.next() % 7200))
            default:  // nothing changed
                break
            }
            let fresh = Valuation(portfolio).judged(staleBefore: staleBefore)
            let reused = Valuation(portfolio, reusing: earlier).judged(staleBefore: staleBefore)
            let currency = currencies[Int(random.next() % 3)]
            let expected = fresh.dashboard(currency: currency)
            let goals = reused.activeGoals(reusing: (earlier, earlierGoals))
            #expect(reused.dashboard(currency: currency, goals: goals) == expected, "step \(step)")
            for asset in portfolio.assets {
                #expect(reused.asset(asset.id, valueCurrency: currency) == fresh.asset(asset.id, valueCurrency: currency), "step \(step)")
            }
            for goal in portfolio.goals { #expect(reused.goal(goal.id) == fresh.goal(goal.id), "step \(step)") }
            earlier = reused
            earlierGoals = goals
        }
    }

    /// After a withdrawal, the goals the asset funds get new figures and every other goal keeps
    /// the figures it had.
    @Test func aDepositChangesOnlyTheGoalsTheAssetFunds() throws {
        var random = SeededGenerator(state: 7)
        var (portfolio, _) = initialPortfolio(&random)
        let before = Valuation(portfolio)
        let dashboard = before.dashboard(currency: currencies[0], goals: before.activeGoals())
        let written = try #require(portfolio.allocations.first).assetID
        portfolio.balances[written] = 0  // everything withdrawn: the goals it funded lose it
        let reused = Valuation(portfolio, reusing: before)
        let after = reused.dashboard(currency: currencies[0], goals: reused.activeGoals(reusing: (before, dashboard.goals)))
        #expect(after == Valuation(portfolio).dashboard(currency: currencies[0]))
        let touched = Set(portfolio.allocations.filter { $0.assetID == written }.map(\.goalID))
        for (old, new) in zip(dashboard.goals, after.goals) where !touched.contains(new.goal.id) { #expect(old == new) }
        #expect(zip(dashboard.goals, after.goals).contains { old, new in touched.contains(new.goal.id) && old != new })
    }
}
