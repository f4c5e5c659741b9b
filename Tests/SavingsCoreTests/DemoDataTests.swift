import Foundation
import SavingsCore
import Testing

@Suite struct DemoDataTests {
    static let utc = TimeZone(identifier: "UTC")!

    /// The demo plans cleanly on any day of the year, including the first minute of a month.
    @Test(arguments: ["2026-11-22T07:00:00Z", "2026-03-01T00:00:30Z", "2027-01-31T23:59:00Z"])
    func theExamplePlansWithoutWarnings(_ instant: String) throws {
        let now = try Timestamp.parse(instant, field: "now")
        let demo = DemoData(now: now, timeZone: Self.utc)
        let plan = try LegacyImporter.plan(demo.document, now: now, timeZone: Self.utc, thresholds: PlanningThresholds(),
                                           takenGoalNames: [:], takenAssetNames: [:])
        #expect(plan.warnings.isEmpty)
        #expect(plan.goals.count == 4 && plan.assets.count == 4)
        #expect(plan.months.filter(\.closed).count == DemoData.closedMonths)
        let executing = try #require(plan.months.first { !$0.closed })
        #expect(executing.month == MonthLabel(now, in: Self.utc))
        #expect(executing.startedAt <= now)
        // Closed months record what was put aside: one of them short of the plan, none empty.
        let closed = plan.months.filter(\.closed)
        #expect(closed.allSatisfy { month in month.lines.contains { $0.contributed > 0 } })
        #expect(closed.contains { month in month.lines.contains { $0.contributed < $0.planned } })
        #expect(plan.transactions.allSatisfy { $0.date <= now })
        // Every goal's currency is fiat; the assets mix fiat and crypto.
        #expect(Set(plan.assets.map(\.currency.isFiat)) == [true, false])
    }

    @Test func theSameInstantGivesTheSameExample() throws {
        let now = try Timestamp.parse("2026-11-22T07:00:00Z", field: "now")
        let first = DemoData(now: now, timeZone: Self.utc).document, second = DemoData(now: now, timeZone: Self.utc).document
        #expect(first.plans.map(\.id) == second.plans.map(\.id))
        #expect(first.contributions.map(\.amount) == second.contributions.map(\.amount))
    }
}
