import Foundation
import Testing
@testable import SavingsCore

@Suite struct LegacyImportTests {
    let utc = TimeZone(identifier: "UTC")!
    let now = try! Timestamp.parse("2026-11-15T12:00:00Z", field: "t")
    func code(_ text: String) -> CurrencyCode { try! CurrencyCode(text) }
    func at(_ text: String) -> Date { try! Timestamp.parse(text, field: "t") }
    func day(_ text: String) -> CalendarDate { try! CalendarDate(parsing: text, field: "d") }

    func goal(_ id: String, _ name: String, target: Decimal = 10_000, currency: String = "USD") -> LegacyDocument.Goal {
        .init(id: id, name: name, currency: code(currency), targetAmount: target, deadline: day("2027-12-31"), startDate: day("2026-01-01"),
              createdAt: at("2026-01-01T00:00:00Z"))
    }

    func asset(_ id: String, _ currency: String, balance: Decimal) -> LegacyDocument.Asset {
        .init(id: id, name: "Asset \(id)", currency: code(currency), createdAt: at("2026-02-01T00:00:00Z"), balance: balance, transactions: [])
    }

    func plan(_ document: LegacyDocument) throws -> LegacyImportPlan {
        try LegacyImporter.plan(document, now: now, timeZone: utc, thresholds: PlanningThresholds(), takenGoalNames: [:], takenAssetNames: [:])
    }

    func fixed(_ plan: LegacyImportPlan, goal: String) -> Decimal? {
        plan.allocations.first { $0.goalID == LegacyDocument.uuid(goal, kind: "goal") }?.amount
    }

    /// Seed 002, scenario 1: 1.0 BTC split 50 / 50.
    @Test func scenarioOneSimpleSplit() throws {
        var document = LegacyDocument()
        document.goals = [goal("a", "Goal A"), goal("b", "Goal B")]
        document.assets = [asset("btc", "BTC", balance: 1)]
        document.allocations = [.init(assetID: "btc", goalID: "a", percentage: 0.5), .init(assetID: "btc", goalID: "b", percentage: 0.5)]
        let plan = try plan(document)
        #expect(fixed(plan, goal: "a") == Decimal(string: "0.5"))
        #expect(fixed(plan, goal: "b") == Decimal(string: "0.5"))
        #expect(plan.allocations.allSatisfy { $0.legacyPercentage == Decimal(string: "0.5") }, "the legacy percentage is kept")
        #expect(plan.transactions.count == 1, "a bare balance becomes one opening transaction")
        #expect(plan.transactions.first?.amount == 1)
        #expect(plan.warnings.isEmpty)
    }

    /// Seed 002, scenario 2: 2.0 ETH, 75 % to one goal; the rest stays unallocated.
    @Test func scenarioTwoPartialAllocation() throws {
        var document = LegacyDocument()
        document.goals = [goal("a", "Goal A")]
        document.assets = [asset("eth", "ETH", balance: 2)]
        document.allocations = [.init(assetID: "eth", goalID: "a", percentage: Decimal(string: "0.75")!)]
        let plan = try plan(document)
        #expect(fixed(plan, goal: "a") == Decimal(string: "1.5"))
        #expect(plan.allocations.count == 1)
    }

    /// Seed 002, scenario 3: 60 + 40 + 20 = 120 % is normalised, with a warning naming the asset.
    @Test func scenarioThreeOverAllocationIsNormalised() throws {
        var document = LegacyDocument()
        document.goals = [goal("a", "Goal A"), goal("b", "Goal B"), goal("c", "Goal C")]
        document.assets = [asset("btc", "BTC", balance: 1)]
        document.allocations = [.init(assetID: "btc", goalID: "a", percentage: Decimal(string: "0.6")!),
                                .init(assetID: "btc", goalID: "b", percentage: Decimal(string: "0.4")!),
                                .init(assetID: "btc", goalID: "c", percentage: Decimal(string: "0.2")!)]
        let plan = try plan(document)
        #expect(fixed(plan, goal: "a") == Decimal(string: "0.5"))
        #expect(fixed(plan, goal: "b") == Decimal(string: "0.33333333"))
        #expect(fixed(plan, goal: "c") == Decimal(string: "0.16666666"))
        #expect(plan.allocations.reduce(Decimal(0)) { $0 + $1.amount } <= 1, "never over-allocated after rounding")
        #expect(plan.warnings.count == 1)
        #expect(plan.warnings.first?.contains("Asset btc") == true)
        #expect(plan.warnings.first?.contains("120.0 %") == true)
        #expect(plan.steps.first?.counts["normalised_assets"] == 1)
    }

    @Test func monthLabelsFollowTheFallbackChain() throws {
        var document = LegacyDocument()
        document.goals = [goal("g", "Goal")]
        document.executionRecords = [.init(id: "r", month: try MonthLabel(parsing: "2026-03"), status: "closed",
                                           startedAt: at("2026-03-02T00:00:00Z"), completedAt: at("2026-03-31T00:00:00Z"))]
        func legacyPlan(_ id: String, record: String? = nil, created: Date? = nil) -> LegacyDocument.Plan {
            .init(id: id, goalID: "g", month: nil, requiredMonthly: 100, customAmount: nil, isProtected: false, isSkipped: false,
                  state: nil, createdDate: created, lastModified: nil, executionRecordID: record, raw: "{}")
        }
        document.plans = [legacyPlan("from-record", record: "r"), legacyPlan("from-contribution"),
                          legacyPlan("from-created", created: at("2026-06-10T00:00:00Z")),
                          legacyPlan("too-old", created: at("2024-01-01T00:00:00Z")), legacyPlan("future", created: at("2027-06-01T00:00:00Z"))]
        document.contributions = [.init(id: "c", goalID: "g", assetID: nil, amount: 50, date: at("2026-05-20T00:00:00Z"), month: nil,
                                        currency: code("USD"), sourceType: nil, planID: "from-contribution", raw: "{}")]
        let plan = try plan(document)
        let months = Dictionary(plan.plans.map { ($0.id, ($0.month.description, $0.needsReview)) }, uniquingKeysWith: { a, _ in a })
        #expect(months[LegacyDocument.uuid("from-record", kind: "plan")]?.0 == "2026-03")
        #expect(months[LegacyDocument.uuid("from-contribution", kind: "plan")]?.0 == "2026-05")
        #expect(months[LegacyDocument.uuid("from-created", kind: "plan")]?.0 == "2026-06")
        // Both undatable plans land on the current month and are merged into one needing review.
        let current = plan.plans.filter { $0.month.description == "2026-11" }
        #expect(current.count == 1)
        #expect(current.first?.needsReview == true)
        #expect(plan.steps.first { $0.name == "month labels" }?.counts["needs_review"] == 2)
        #expect(plan.plans.first { $0.month.description == "2026-03" }?.state == .completed)
        #expect(plan.months.first?.closed == true)
    }

    @Test func duplicatesMergeKeepingOverridesAndContributionsLinkNearbyOrCreateAPlan() throws {
        var document = LegacyDocument()
        document.goals = [goal("g", "Goal", target: 1200)]
        let may = try MonthLabel(parsing: "2026-05")
        document.plans = [
            .init(id: "p1", goalID: "g", month: may, requiredMonthly: 100, customAmount: 150, isProtected: false, isSkipped: false,
                  state: "completed", createdDate: nil, lastModified: at("2026-05-01T00:00:00Z"), executionRecordID: nil, raw: "{}"),
            .init(id: "p2", goalID: "g", month: may, requiredMonthly: 100, customAmount: nil, isProtected: true, isSkipped: false,
                  state: "completed", createdDate: nil, lastModified: at("2026-05-03T00:00:00Z"), executionRecordID: nil, raw: "{}"),
            .init(id: "orphan", goalID: "gone", month: may, requiredMonthly: 1, customAmount: nil, isProtected: false, isSkipped: false,
                  state: nil, createdDate: nil, lastModified: nil, executionRecordID: nil, raw: "{\"id\":\"orphan\"}"),
        ]
        func contribution(_ id: String, _ date: String, goal: String? = "g") -> LegacyDocument.Contribution {
            .init(id: id, goalID: goal, assetID: nil, amount: 100, date: at(date), month: nil, currency: code("USD"), sourceType: "manual",
                  planID: nil, raw: "{\"id\":\"\(id)\"}")
        }
        document.contributions = [contribution("exact", "2026-05-10T00:00:00Z"), contribution("nearby", "2026-06-10T00:00:00Z"),
                                  contribution("far", "2026-09-10T00:00:00Z"), contribution("lost", "2026-05-11T00:00:00Z", goal: nil)]
        let plan = try plan(document)
        let mayPlans = plan.plans.filter { $0.month == may }
        #expect(mayPlans.count == 1, "duplicates merged")
        #expect(mayPlans.first?.customAmount == 150, "the custom amount survives")
        #expect(mayPlans.first?.isProtected == true, "and so does protection")
        let links = plan.steps.first { $0.name == "contribution links" }?.counts
        #expect(links == ["exact": 1, "nearby": 1, "created_plan": 1, "orphaned_archived": 1])
        let september = try #require(plan.plans.first { $0.month.description == "2026-09" })
        // Step 4.5: (1200 - 100) over the 16 months from September 2026 to December 2027.
        #expect(september.requirement.requiredMonthly == Decimal(string: "68.75"))
        #expect(september.state == .completed)
        #expect(Set(plan.archived.map(\.legacyID)) == ["orphan", "lost"], "orphans are archived, not lost")
    }

    @Test func malformedDocumentsAreRefused() throws {
        var document = LegacyDocument()
        document.goals = [goal("g", "Goal")]
        document.assets = [asset("a", "BTC", balance: 1)]
        document.allocations = [.init(assetID: "a", goalID: "nope", percentage: 0.5)]
        #expect(throws: DomainError.self) { try plan(document) }
        document.allocations = [.init(assetID: "a", goalID: "g", percentage: -0.1)]
        #expect(throws: DomainError.self) { try plan(document) }
        document.allocations = [.init(assetID: "a", goalID: "g", percentage: 50)]
        #expect(throws: DomainError.self) { try plan(document) }
    }

    @Test func legacyIDsMapToStableUUIDs() {
        #expect(LegacyDocument.uuid("goal-1", kind: "goal") == LegacyDocument.uuid("goal-1", kind: "goal"))
        #expect(LegacyDocument.uuid("goal-1", kind: "goal") != LegacyDocument.uuid("goal-1", kind: "asset"))
        let uuid = UUID()
        #expect(LegacyDocument.uuid(uuid.uuidString, kind: "goal") == uuid)
    }
}
