import Foundation
import SavingsCLI
import SavingsCore
import SavingsRPC

/// The goal screen: progress, the last twelve months' planned against contributed (the report's
/// chart), this month's plan, the plan and contributions month by month, this month's
/// contributions one by one, and the allocations that fund the goal.
extension Pages {
    /// What the goal screen is drawn from, each the daemon's answer.
    struct GoalAnswers {
        var goal: JSONValue
        /// `goal.history` from the goal's start to the current month.
        var history: JSONValue
        var allocations: JSONValue
        /// `plan.get` of the current month; nil where the goal has none (archived).
        var plan: JSONValue?
        /// `month.progress` of the current month; nil while it is a draft.
        var progress: JSONValue?
    }

    func goal(_ answers: GoalAnswers) -> String {
        let goal = answers.goal
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        let goalID = text(goal["id"])
        let months = answers.history["months"]?.arrayValue ?? []
        // Asset names for this month's contributions: from the goal's funding and allocations.
        var assetNames: [String: String] = [:]
        for line in (goal["funding"]?.arrayValue ?? []) + (answers.allocations["allocations"]?.arrayValue ?? []) {
            assetNames[text(line["asset_id"])] = text(line["asset_name"])
        }
        let events = (answers.progress?["events"]?.arrayValue ?? []).filter { text($0["goal_id"]) == goalID }.map { event -> [String: Any] in
            ["at": HumanTime.describe(text(event["at"])), "kind": text(event["kind"]), "amount": Self.money(event["goal_amount"]),
             "asset": assetNames[text(event["asset_id"])] ?? "an asset no longer funding it", "assetAmount": text(event["asset_amount"])]
        }
        var context: [String: Any] = [
            "id": goalID, "name": text(goal["name"]), "currency": text(goal["currency"]), "target": Self.money(goal["target_amount"]),
            "total": Self.money(goal["current_total"]), "remaining": Self.money(goal["remaining"]), "deadline": text(goal["deadline"]),
            "percent": Self.percent(goal["progress"]), "notes": text(goal["notes"]),
            "archived": goal["archived"]?.boolValue == true,
            "incomplete": goal["incomplete"]?.boolValue == true,
            "missingRates": (goal["missing_rates"]?.arrayValue ?? []).map { $0.stringValue ?? "\($0)" }.joined(separator: ", "),
            "chart": HTMLReport.monthBars(Self.lastTwelve(months), id: "goal-months", label: "Planned and contributed per month for \(text(goal["name"]))"),
            "months": months.reversed().map { month -> [String: Any] in
                ["month": HumanTime.month(text(month["month"])), "planned": Self.money(month["planned"]), "contributed": Self.money(month["contributed"])]
            },
            "allocations": Self.allocationLines(goal: goal, allocations: answers.allocations),
            "events": events, "noEvents": events.isEmpty, "executing": answers.progress != nil,
        ]
        if let plan = answers.plan {
            context["plan"] = Self.planFields(plan)
        }
        return page(body: render("goal", context), title: text(goal["name"]))
    }

    /// Each allocation to the goal: the asset, what is reserved and funded in its units, and
    /// that in the goal's currency.
    static func allocationLines(goal: JSONValue, allocations: JSONValue) -> [[String: Any]] {
        var funding: [String: JSONValue] = [:]
        for line in goal["funding"]?.arrayValue ?? [] { funding[line["asset_id"]?.stringValue ?? ""] = line }
        return (allocations["allocations"]?.arrayValue ?? []).map { line in
            let text = { (key: String) in line[key]?.stringValue ?? "" }
            let funded = funding[text("asset_id")]
            return ["asset": text("asset_name"), "amount": text("amount"), "funded": text("funded"),
                    "assetCurrency": funded?["asset_currency"]?.stringValue ?? "", "value": funded?["value"]?.stringValue ?? "",
                    "short": text("amount") != text("funded")]
        }
    }

    /// A plan's figures for a template: amounts, state and the words for its flags.
    static func planFields(_ plan: JSONValue) -> [String: Any] {
        let text = { (key: String) in plan[key]?.stringValue ?? "" }
        let money = { (key: String) in Self.money(plan[key]) }
        return [
            "id": text("id"), "goalID": text("goal_id"), "goal": text("goal_name"), "month": text("month"),
            "currency": text("currency"), "required": money("required_monthly"), "effective": money("effective_amount"),
            "planned": money("planned_amount"), "custom": money("custom_amount"),
            // The own-amount field holds the amount as it is read back (no grouping).
            "customField": Self.fieldMoney(plan["custom_amount"]), "requiredField": Self.fieldMoney(plan["required_monthly"]), "hasCustom": plan["custom_amount"]?.stringValue != nil,
            "status": text("status").replacingOccurrences(of: "_", with: " "), "state": text("state"),
            "monthsRemaining": plan["months_remaining"]?.intValue ?? 0,
            "protected": plan["is_protected"]?.boolValue == true, "skipped": plan["is_skipped"]?.boolValue == true,
            "locked": text("state") != "draft", "attention": ["attention", "critical"].contains(text("status")),
        ]
    }

    /// A progress fraction ("0.5350") as a whole percent, 0 to 100, cut (not rounded) like the
    /// bar: read from the digits of a plain decimal (the daemon's form), through `Decimal`
    /// otherwise.
    static func percent(_ fraction: JSONValue?) -> Int {
        let text = fraction?.stringValue ?? "0"
        let digits = Array(text.utf8)
        if let point = digits.firstIndex(of: UInt8(ascii: ".")) ?? Optional(digits.count),
           point > 0, digits.allSatisfy({ (48...57).contains($0) || $0 == UInt8(ascii: ".") }) {
            if digits[..<point].contains(where: { $0 != 48 }) { return 100 }  // 1 or more
            let fraction = digits.dropFirst(point + 1).prefix(2).map { Int($0 - 48) }
            return (fraction.first ?? 0) * 10 + (fraction.count > 1 ? fraction[1] : 0)
        }
        let value = Decimal(string: text) ?? 0
        return NSDecimalNumber(decimal: min(max(value, 0), 1) * 100).intValue
    }

    /// The twelve months up to the last one `goal.history` gives (the current month), with a
    /// gap where a month has no figure (before the goal started).
    static func lastTwelve(_ months: [JSONValue]) -> [(month: String, planned: Decimal?, contributed: Decimal?)] {
        guard let lastText = months.last?["month"]?.stringValue, let last = try? MonthLabel(parsing: lastText) else { return [] }
        var known: [String: JSONValue] = [:]
        for month in months { if let label = month["month"]?.stringValue { known[label] = month } }
        return (0..<12).map { back in
            let label = last.adding(back - 11).description
            let month = known[label]
            return (label, month?["planned"]?.stringValue.flatMap { Decimal(string: $0) },
                    month?["contributed"]?.stringValue.flatMap { Decimal(string: $0) })
        }
    }

    static let goalTemplate = """
        <h1>{{name}}</h1>
        {{#archived}}<p class="banner">This goal is archived.</p>{{/archived}}
        {{#incomplete}}<p class="banner" role="alert">Incomplete: no rate for {{missingRates}}; the total leaves those assets out.</p>{{/incomplete}}
        <p><progress max="100" value="{{percent}}" aria-label="{{name}}: {{percent}}%">{{percent}}%</progress> {{percent}}%</p>
        <p>{{total}} of {{target}} {{currency}} · {{remaining}} to go{{#deadline}} · by {{deadline}}{{/deadline}}</p>
        {{#notes}}<p>{{notes}}</p>{{/notes}}
        <p><a href="/saved?goal={{id}}">I saved for {{name}}</a> · <a href="/goals/{{id}}/edit">Change or archive it</a></p>
        {{#plan}}
        <section aria-labelledby="plan-h"><h2 id="plan-h">Plan for {{month}}</h2>
        <p>Planned <strong>{{planned}} {{currency}}</strong>{{#hasCustom}} (own amount; the requirement is {{required}}){{/hasCustom}}{{^hasCustom}} (the requirement){{/hasCustom}}
        · {{status}} · {{monthsRemaining}} month(s) left{{#protected}} · protected from flex{{/protected}}{{#skipped}} · skipped this month{{/skipped}}
        {{^locked}}· <a href="/plans#plan-{{id}}">change it</a>{{/locked}}{{#locked}}· fixed while the month runs (<a href="/month">the Month screen</a> can return it to draft){{/locked}}</p></section>
        {{/plan}}
        <section aria-labelledby="months-h"><h2 id="months-h">Last 12 months ({{currency}})</h2>
        <figure class="chart">{{{chart}}}
        <figcaption class="legend"><span class="key planned"></span>planned <span class="key contributed"></span>contributed</figcaption></figure>
        <div class="scroll" role="region" aria-label="Plan and contributions by month" tabindex="0"><table><caption>Plan and contributions by month</caption>
        <thead><tr><th scope="col">Month</th><th scope="col" class="num">Planned</th><th scope="col" class="num">Contributed</th></tr></thead>
        <tbody>{{#months}}<tr><th scope="row">{{month}}</th><td class="num">{{planned}}</td><td class="num">{{contributed}}</td></tr>{{/months}}</tbody>
        </table></div></section>
        {{#executing}}
        <section aria-labelledby="events-h"><h2 id="events-h">This month's contributions</h2>
        {{#noEvents}}<p>None yet.</p>{{/noEvents}}
        {{^noEvents}}<ul>{{#events}}<li>{{at}} · {{kind}} · {{amount}} {{currency}} from {{asset}} ({{assetAmount}})</li>{{/events}}</ul>{{/noEvents}}</section>
        {{/executing}}
        <section aria-labelledby="alloc-h"><h2 id="alloc-h">Allocations</h2>
        <ul>{{#allocations}}<li>{{asset}}: {{funded}} {{assetCurrency}}{{#value}} = {{value}} {{currency}}{{/value}}{{#short}} (of {{amount}} reserved: the balance is short){{/short}}</li>{{/allocations}}</ul>
        {{^allocations}}<p>No asset is allocated to this goal yet: say what you saved, or <code>savingsctl alloc set</code>.</p>{{/allocations}}
        </section>
        """
}
