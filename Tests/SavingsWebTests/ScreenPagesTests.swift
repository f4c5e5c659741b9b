import Foundation
import SavingsCore
import SavingsRPC
import Testing
@testable import SavingsWeb

/// The goal, planning and month screens drawn from answers of the daemon's shape.
@Suite struct ScreenPagesTests {
    static let plan: JSONValue = [
        "id": "p1", "goal_id": "g1", "goal_name": "Bike <b>", "month": "2026-11", "currency": "EUR",
        "required_monthly": "180.00", "effective_amount": "150.00", "planned_amount": "150.00", "custom_amount": "150.00",
        "status": "on_track", "state": "draft", "months_remaining": 5, "is_protected": false, "is_skipped": false,
    ]

    @Test func theGoalScreenShowsTwelveMonthsPlanAndAllocations() throws {
        let goal: JSONValue = [
            "id": "g1", "name": "Bike <b>", "currency": "EUR", "target_amount": "900.00", "current_total": "450.00",
            "remaining": "450.00", "deadline": "2027-03-31", "progress": "0.5", "notes": .null, "archived": false,
            "incomplete": false, "missing_rates": [],
            "funding": [["asset_id": "a1", "asset_name": "Cash & co", "asset_currency": "EUR", "funded": "450.00", "value": "450.00"]],
        ]
        let history: JSONValue = ["months": [["month": "2026-10", "planned": "180.00", "contributed": "200.00"],
                                             ["month": "2026-11", "planned": "150.00", "contributed": "50.00"]]]
        let allocations: JSONValue = ["allocations": [["asset_id": "a1", "asset_name": "Cash & co", "amount": "500.00", "funded": "450.00"]]]
        let progress: JSONValue = ["events": [
            ["at": "2026-11-20T10:00:00.000Z", "asset_id": "a1", "goal_id": "g1", "goal_amount": "50.00", "asset_amount": "50.00", "kind": "deposit"],
            ["at": "2026-11-21T10:00:00.000Z", "asset_id": "a1", "goal_id": "g2", "goal_amount": "70.00", "asset_amount": "70.00", "kind": "deposit"],
        ]]
        let page = try Pages().goal(.init(goal: goal, history: history, allocations: allocations, plan: Self.plan, progress: progress))
        #expect(page.contains("<h1>Bike &lt;b&gt;</h1>"))
        #expect(page.contains("<svg id=\"goal-months\""))
        // Twelve months up to the current one: ten before the goal's history are empty.
        #expect(page.components(separatedBy: "<g class=\"month\"").count == 13)
        #expect(page.contains("data-month=\"2025-12\"") && page.contains("data-month=\"2026-11\""))
        #expect(page.components(separatedBy: "<rect class=\"contributed\"").count == 3)
        #expect(page.contains("Planned <strong>150.00 EUR</strong> (own amount; the requirement is 180.00)"))
        #expect(page.contains("Cash &amp; co: 450.00 EUR = 450.00 EUR (of 500.00 reserved: the balance is short)"))
        // Only this goal's contributions; nothing for notes it does not have.
        #expect(page.contains("deposit · 50.00 EUR from Cash &amp; co") && !page.contains("70.00"))
        #expect(!page.contains("<p></p>"))
        #expect(page.contains("href=\"/saved?goal=g1\""))
    }

    @Test func thePlanningScreenOffersOverridesAndFlexOnlyWhileDraft() throws {
        let plans: JSONValue = ["month": "2026-11", "plans": [Self.plan], "totals": ["planned": "150.00", "currency": "EUR"]]
        let stale: JSONValue = ["items": [], "total": 0, "page": 1, "pages": 0, "executing_months": [], "actions": [:]]
        let preview: JSONValue = ["factor": "0.8", "total": "120.00", "currency": "EUR", "shortfall": .null, "surplus": .null,
                                  "plans": [["plan_id": "p1", "adjusted_amount": "120.00"]]]
        let pages = try Pages()
        let draft = pages.planning(.init(plans: plans, preview: preview, stale: stale, factor: "0.8", budget: ""), csrf: "tok")
        #expect(draft.contains("<label for=\"amount-p1\">Own amount for Bike &lt;b&gt; (EUR)</label>"))
        #expect(draft.contains("id=\"amount-p1\" name=\"amount\" inputmode=\"decimal\" value=\"150.00\""))
        #expect(draft.contains("name=\"protected\" value=\"true\""))
        #expect(draft.contains("type=\"range\" id=\"factor\" name=\"factor\" min=\"0.5\" max=\"1.5\" step=\"0.05\" value=\"0.8\""))
        #expect(draft.contains("With flex: <strong>120.00 EUR</strong>"))
        #expect(draft.contains("<input type=\"hidden\" name=\"factor\" value=\"0.8\">"))
        #expect(draft.components(separatedBy: "name=\"csrf\" value=\"tok\"").count == 5)
        #expect(!draft.contains("short of the budget") && !draft.contains("Drafts of earlier months"))

        var locked = Self.plan.objectValue!
        locked["state"] = "executing"
        let executing = pages.planning(.init(plans: ["month": "2026-11", "plans": [.object(locked)]], preview: nil, stale: stale,
                                             factor: "1", budget: ""), csrf: "tok")
        #expect(executing.contains("its plans are locked"))
        #expect(!executing.contains("<form"))

        let staleItems: JSONValue = ["items": [["id": "old", "goal_name": "Trip", "month": "2026-09", "planned_amount": "80.00", "currency": "EUR",
                                                "state": "draft"]],
                                     "total": 6, "page": 1, "pages": 2, "executing_months": ["2026-10"],
                                     "actions": ["complete": "counted as fulfilled", "skip": "skipped", "delete": "gone"]]
        let review = pages.planning(.init(plans: plans, preview: nil, stale: staleItems, factor: "1", budget: ""), csrf: "tok", problem: "no <way>")
        #expect(review.contains("<h2 id=\"stale-h\">Drafts of earlier months (6)</h2>"))
        #expect(review.contains("<dt>complete</dt><dd>counted as fulfilled</dd>"))
        #expect(review.contains("href=\"/plans?stale=2#stale-h\">Next</a>") && !review.contains(">Previous</a>"))
        #expect(review.contains("Still executing after its month ended: 2026-10."))
        #expect(review.contains("role=\"alert\" id=\"problem\" tabindex=\"-1\">no &lt;way&gt;</p>"))
    }

    @Test func theMonthScreenFollowsTheExecution() throws {
        let pages = try Pages()
        let plans: JSONValue = ["month": "2026-11", "plans": [Self.plan], "totals": ["planned": "150.00", "currency": "EUR"]]
        let history: JSONValue = ["months": []]
        let draft = pages.month(.init(plans: plans, progress: nil, history: history, canUndo: false), csrf: "tok")
        #expect(draft.contains("<h1>Month 2026-11: draft</h1>") && draft.contains("action=\"/month/start\""))
        #expect(!draft.contains("/month/complete"))

        let progress: JSONValue = [
            "month": "2026-11", "status": "executing", "started_at": "2026-11-02T08:00:00.000Z", "can_undo_until": "2026-11-03T08:00:00.000Z",
            "totals": ["planned": "150.00", "contributed": "180.00", "remaining": "0.00", "currency": "EUR"],
            "goals": [["goal_id": "g1", "goal_name": "Bike <b>", "currency": "EUR", "planned": "150.00", "contributed": "180.00",
                       "remaining": "0.00", "percent": "120.0", "fulfilled": true]],
            "events": [["at": "2026-11-04T08:00:00.000Z", "goal_id": "g1", "goal_amount": "180.00", "kind": "deposit"]],
        ]
        let executing = pages.month(.init(plans: plans, progress: progress, history: history, canUndo: true), csrf: "tok")
        // Over-payment shows above 100 %, the bar stops full.
        #expect(executing.contains("<progress max=\"100\" value=\"100\" aria-label=\"Bike &lt;b&gt;: 120.0%\">"))
        #expect(executing.contains("120.0% · fulfilled"))
        #expect(executing.contains("action=\"/month/complete\"") && executing.contains("action=\"/month/undo-start\""))
        #expect(executing.contains("\(HumanTime.describe("2026-11-04T08:00:00.000Z")) · Bike &lt;b&gt; · deposit 180.00"), "\(executing)")
        let late = pages.month(.init(plans: plans, progress: progress, history: history, canUndo: false), csrf: "tok")
        #expect(!late.contains("/month/undo-start"))

        var closed = progress.objectValue!
        closed["status"] = "closed"
        closed["completed_at"] = "2026-11-30T20:00:00.000Z"
        let record = pages.month(.init(plans: plans, progress: .object(closed), history: ["months": [
            ["month": "2026-10", "fulfilment_percent": "95.0", "totals": ["planned": "100.00", "contributed": "95.00", "currency": "EUR"]],
        ]], canUndo: true), csrf: "tok")
        #expect(record.contains("action=\"/month/undo-complete\"") && !record.contains("/month/complete\""))
        #expect(record.contains("<th scope=\"row\">Oct 2026</th><td class=\"num\">100.00 EUR</td><td class=\"num\">95.00 EUR</td><td class=\"num\">95.0%</td>"))
    }

    @Test func undoWindowInstantsAreRead() {
        #expect(Screens.instant("2026-11-25T22:38:36.745Z").map(Timestamp.milliseconds) == 1_795_646_316_745)
        #expect(Screens.instant("yesterday") == nil)
    }
}
