import Foundation
import SavingsRPC

/// The month execution screen: a draft month's plans and the button that starts it; an executing
/// month's progress per goal as it happens (the page follows the daemon's events), its
/// contributions, completing it and undoing the start within the window; a closed month's frozen
/// record and reopening it within the window; the closed months before it.
extension Pages {
    /// What the month screen is drawn from.
    struct MonthAnswers {
        /// `plan.list` of the current month.
        var plans: JSONValue
        /// `month.progress` of the current month; nil while it is a draft.
        var progress: JSONValue?
        /// `month.history`.
        var history: JSONValue
        /// Whether the progress's undo window is still open (by this machine's clock; the
        /// daemon has the last word).
        var canUndo: Bool
    }

    /// `confirming`: the month's completion was asked for, and the page asks to confirm it.
    func month(_ answers: MonthAnswers, csrf: String, problem: String? = nil, confirming: Bool = false) -> String {
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        let progress = answers.progress
        let status = progress.map { text($0["status"]) } ?? "draft"
        var goalNames: [String: String] = [:]
        for plan in answers.plans["plans"]?.arrayValue ?? [] { goalNames[text(plan["goal_id"])] = text(plan["goal_name"]) }
        var context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "confirming": confirming,
            "month": text(answers.plans["month"]), "status": status,
            "draft": status == "draft", "executing": status == "executing", "closed": status == "closed",
            "canUndo": answers.canUndo, "undoUntil": text(progress?["can_undo_until"]),
            "startedAt": HumanTime.describe(text(progress?["started_at"])), "completedAt": HumanTime.describe(text(progress?["completed_at"])),
            "planned": Self.money(answers.plans["totals"]?["planned"]), "currency": text(answers.plans["totals"]?["currency"]),
            "plans": (answers.plans["plans"]?.arrayValue ?? []).map(Self.planFields),
            "incomplete": progress?["incomplete"]?.boolValue == true,
            "missingRates": (progress?["missing_rates"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", "),
        ]
        if let progress {
            let totals = progress["totals"]
            context["totals"] = ["planned": Self.money(totals?["planned"]), "contributed": Self.money(totals?["contributed"]),
                                 "remaining": Self.money(totals?["remaining"]), "currency": text(totals?["currency"])]
            context["goals"] = (progress["goals"]?.arrayValue ?? []).map { goal -> [String: Any] in
                let percent = Decimal(string: text(goal["percent"])) ?? 0
                return ["goalID": text(goal["goal_id"]), "goal": text(goal["goal_name"]), "currency": text(goal["currency"]),
                        "planned": Self.money(goal["planned"]), "contributed": Self.money(goal["contributed"]), "remaining": Self.money(goal["remaining"]),
                        "percent": text(goal["percent"]), "bar": NSDecimalNumber(decimal: min(max(percent, 0), 100)).intValue,
                        "fulfilled": goal["fulfilled"]?.boolValue == true]
            }
            let events = (progress["events"]?.arrayValue ?? []).sorted { text($0["at"]) > text($1["at"]) }
            context["events"] = events.map { event -> [String: Any] in
                ["at": HumanTime.describe(text(event["at"])), "kind": text(event["kind"]), "goal": goalNames[text(event["goal_id"])] ?? "a goal",
                 "amount": Self.money(event["goal_amount"])]
            }
            context["noEvents"] = events.isEmpty
        }
        context["history"] = (answers.history["months"]?.arrayValue ?? []).reversed().map { month -> [String: Any] in
            ["month": HumanTime.month(text(month["month"])), "planned": Self.money(month["totals"]?["planned"]), "contributed": Self.money(month["totals"]?["contributed"]),
             "currency": text(month["totals"]?["currency"]), "percent": text(month["fulfilment_percent"])]
        }
        context["hasHistory"] = !(answers.history["months"]?.arrayValue ?? []).isEmpty
        return page(body: render("month", context), title: "Month \(text(answers.plans["month"]))")
    }

    static let monthTemplate = """
        <h1>Month {{month}}: {{status}}</h1>
        {{#hasProblem}}<p class="problem" role="alert" id="problem" tabindex="-1">{{problem}}</p>{{/hasProblem}}
        {{#incomplete}}<p class="banner" role="alert">Incomplete: no rate for {{missingRates}}.</p>{{/incomplete}}
        {{#draft}}
        <p>Not started. Planned <strong>{{planned}} {{currency}}</strong>; starting freezes the plans and follows what you save.</p>
        <ul>{{#plans}}<li><a href="/goals/{{goalID}}">{{goal}}</a>: {{planned}} {{currency}}{{#skipped}} (skipped){{/skipped}}</li>{{/plans}}</ul>
        <form method="post" action="/month/start"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" id="start">Start {{month}}</button> <a href="/plans">Change the plans first</a></form>
        {{/draft}}
        {{#totals}}
        <p>Contributed <strong>{{contributed}} {{currency}}</strong> of {{planned}} {{currency}} · remaining {{remaining}} {{currency}}</p>
        {{/totals}}
        {{#executing}}<p>Started {{startedAt}}; the figures move as money is saved.</p>{{/executing}}
        {{#closed}}<p>Closed {{completedAt}}: this record no longer changes.</p>{{/closed}}
        {{^draft}}
        <ul class="goals">
        {{#goals}}<li class="goal"><h2><a href="/goals/{{goalID}}">{{goal}}</a></h2>
        <p><progress max="100" value="{{bar}}" aria-label="{{goal}}: {{percent}}%">{{percent}}%</progress> {{percent}}%{{#fulfilled}} · fulfilled{{/fulfilled}}</p>
        <p>{{contributed}} of {{planned}} {{currency}} · {{remaining}} to go</p></li>{{/goals}}
        </ul>
        {{/draft}}
        {{#executing}}
        {{^confirming}}<form method="post" action="/month/complete" class="row"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" id="complete">Complete {{month}}</button></form>{{/confirming}}
        {{#confirming}}<section class="banner" role="alert" aria-labelledby="confirm-h"><h2 id="confirm-h">Complete {{month}}?</h2>
        <p>Its record then stops changing: what has come in stays as it is. It can be reopened while the undo is offered.</p>
        <form method="post" action="/month/complete" class="row"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="confirm" value="yes">
        <button type="submit" id="complete-confirmed">Yes, complete {{month}}</button> <a href="/month">Cancel</a></form></section>{{/confirming}}
        {{#canUndo}}<form method="post" action="/month/undo-start" class="row"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" id="undo-start">Undo the start</button> <small>possible until {{undoUntil}}</small></form>{{/canUndo}}
        {{/executing}}
        {{#closed}}{{#canUndo}}<form method="post" action="/month/undo-complete" class="row"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" id="undo-complete">Reopen {{month}}</button> <small>possible until {{undoUntil}}</small></form>{{/canUndo}}{{/closed}}
        {{^draft}}
        <section aria-labelledby="events-h"><h2 id="events-h">Contributions this month</h2>
        {{#noEvents}}<p>None yet.</p>{{/noEvents}}
        {{^noEvents}}<ul>{{#events}}<li>{{at}} · {{goal}} · {{kind}} {{amount}}</li>{{/events}}</ul>{{/noEvents}}</section>
        {{/draft}}
        <section aria-labelledby="history-h"><h2 id="history-h">Closed months</h2>
        {{^hasHistory}}<p>None yet.</p>{{/hasHistory}}
        {{#hasHistory}}<div class="scroll" role="region" aria-labelledby="history-h" tabindex="0"><table><thead><tr><th scope="col">Month</th><th scope="col" class="num">Planned</th><th scope="col" class="num">Contributed</th><th scope="col" class="num">Fulfilled</th></tr></thead>
        <tbody>{{/hasHistory}}{{#history}}<tr><th scope="row">{{month}}</th><td class="num">{{planned}} {{currency}}</td><td class="num">{{contributed}} {{currency}}</td><td class="num">{{percent}}%</td></tr>{{/history}}
        {{#hasHistory}}</tbody></table></div>{{/hasHistory}}
        </section>
        """
}
