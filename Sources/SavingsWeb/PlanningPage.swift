import Foundation
import SavingsCore
import SavingsRPC

/// The planning screen: this month's plans with their own amount, protect and skip; flex with a
/// slider from 0.5× to 1.5× (or a budget to fit), previewed before it is applied; and the drafts
/// of earlier months waiting for a decision, a page at a time.
extension Pages {
    /// What the planning screen is drawn from.
    struct PlanningAnswers {
        /// `plan.list` of the current month.
        var plans: JSONValue
        /// `plan.flex_preview` of what was asked, when it was.
        var preview: JSONValue?
        /// `plan.stale` of the page shown.
        var stale: JSONValue
        /// The factor or budget asked for (what the form shows again).
        var factor: String
        var budget: String
    }

    func planning(_ answers: PlanningAnswers, csrf: String, problem: String? = nil) -> String {
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        var adjusted: [String: String] = [:]
        for line in answers.preview?["plans"]?.arrayValue ?? [] { adjusted[text(line["plan_id"])] = text(line["adjusted_amount"]) }
        let plans = (answers.plans["plans"]?.arrayValue ?? []).map { plan -> [String: Any] in
            var fields = Self.planFields(plan)
            fields["adjusted"] = adjusted[text(plan["id"])] ?? ""
            return fields
        }
        let shown = try? MonthLabel(parsing: text(answers.plans["month"]))
        let locked = plans.contains { $0["locked"] as? Bool == true }
        var context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil,
            "month": text(answers.plans["month"]), "plans": plans, "noPlans": plans.isEmpty, "locked": locked,
            "planned": Self.money(answers.plans["totals"]?["planned"]), "currency": text(answers.plans["totals"]?["currency"]),
            "factor": answers.factor, "budget": answers.budget,
            "previous": shown?.adding(-1).description ?? "", "next": shown?.adding(1).description ?? "",
        ]
        if let preview = answers.preview {
            context["preview"] = [
                "factor": text(preview["factor"]), "total": Self.money(preview["total"]), "currency": text(preview["currency"]),
                "shortfall": text(preview["shortfall"]), "surplus": text(preview["surplus"]),
                "byBudget": !answers.budget.isEmpty, "budget": answers.budget,
            ]
        }
        let stale = answers.stale
        let page = stale["page"]?.intValue ?? 1, pages = stale["pages"]?.intValue ?? 0
        context["stale"] = (stale["items"]?.arrayValue ?? []).map(Self.planFields)
        context["staleTotal"] = stale["total"]?.intValue ?? 0
        context["hasStale"] = (stale["total"]?.intValue ?? 0) > 0
        context["stalePage"] = page
        context["stalePages"] = pages
        context["stalePrevious"] = page > 1 ? "\(page - 1)" : ""
        context["staleNext"] = page < pages ? "\(page + 1)" : ""
        context["actions"] = ["complete", "skip", "delete"].map { ["action": $0, "meaning": text(stale["actions"]?[$0])] }
        context["overdue"] = (stale["executing_months"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")
        return self.page(body: render("planning", context), title: "Planning")
    }

    static let planningTemplate = """
        <h1>Planning {{month}}</h1>
        <nav aria-label="Months" class="months"><a href="/plans?month={{previous}}">← {{previous}}</a> <a href="/plans">this month</a> <a href="/plans?month={{next}}">{{next}} →</a></nav>
        {{#hasProblem}}<p class="problem" role="alert" id="problem" tabindex="-1">{{problem}}</p>{{/hasProblem}}
        {{#locked}}<p class="banner">The month is being executed or is closed: its plans are locked. <a href="/month">Execution</a></p>{{/locked}}
        {{#hasStale}}<p class="banner" role="alert"><a href="#stale-h">{{staleTotal}} draft plan(s) from earlier months</a> still wait for a decision.</p>{{/hasStale}}
        {{#overdue}}<p class="banner" role="alert">Still executing after its month ended: {{overdue}}. <a href="/month">Complete it</a> when you are done.</p>{{/overdue}}
        <p>Planned this month: <strong>{{planned}} {{currency}}</strong></p>
        {{#noPlans}}<p>No plans: there is no active goal. Create one with <code>savingsctl goal create</code>.</p>{{/noPlans}}
        <ul class="plans">
        {{#plans}}
        <li class="plan" id="plan-{{id}}" tabindex="-1"><h2><a href="/goals/{{goalID}}">{{goal}}</a></h2>
        <p>Planned <strong>{{planned}} {{currency}}</strong> · required {{required}}{{#hasCustom}} · own amount {{custom}}{{/hasCustom}}
        · <span{{#attention}} class="warn"{{/attention}}>{{status}}</span> · {{monthsRemaining}} month(s) left{{#protected}} · protected{{/protected}}{{#skipped}} · skipped{{/skipped}}
        {{#adjusted}}<br>With flex: <strong>{{adjusted}} {{currency}}</strong>{{/adjusted}}</p>
        {{^locked}}
        <form method="post" action="/plans/amount" class="row">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="plan" value="{{id}}"><input type="hidden" name="month" value="{{month}}">
        <label for="amount-{{id}}">Own amount for {{goal}} ({{currency}})</label>
        <input id="amount-{{id}}" name="amount" inputmode="decimal" value="{{customField}}" placeholder="{{requiredField}}" aria-describedby="amount-help-{{id}}">
        <button type="submit" id="set-{{id}}">Set<span class="sr"> the amount for {{goal}}</span></button>
        <small id="amount-help-{{id}}">empty returns to the requirement</small>
        </form>
        <form method="post" action="/plans/protect" class="row">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="plan" value="{{id}}"><input type="hidden" name="month" value="{{month}}">
        <input type="hidden" name="protected" value="{{^protected}}true{{/protected}}{{#protected}}false{{/protected}}">
        <button type="submit" id="protect-{{id}}" aria-pressed="{{#protected}}true{{/protected}}{{^protected}}false{{/protected}}">Protect<span class="sr"> {{goal}}</span> from flex</button>
        </form>
        <form method="post" action="/plans/skip" class="row">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="plan" value="{{id}}"><input type="hidden" name="month" value="{{month}}">
        <input type="hidden" name="skipped" value="{{^skipped}}true{{/skipped}}{{#skipped}}false{{/skipped}}">
        <button type="submit" id="skip-{{id}}" aria-pressed="{{#skipped}}true{{/skipped}}{{^skipped}}false{{/skipped}}">Skip<span class="sr"> {{goal}}</span> this month</button>
        </form>
        {{/locked}}
        </li>
        {{/plans}}
        </ul>
        {{^locked}}{{^noPlans}}
        <section aria-labelledby="flex-h"><h2 id="flex-h">Flex</h2>
        <p>Scale the flexible plans (neither protected nor skipped) for this month, or fit them to a budget.</p>
        <form method="get" action="/plans#flex-result" class="flex"><input type="hidden" name="month" value="{{month}}">
        <p><label for="factor">Factor</label>
        <input type="range" id="factor" name="factor" min="0.5" max="1.5" step="0.05" value="{{factor}}" aria-describedby="factor-shown">
        <output id="factor-shown" for="factor">×{{factor}}</output></p>
        <p><label for="budget">or a budget ({{currency}})</label> <input id="budget" name="budget" inputmode="decimal" value="{{budget}}"></p>
        <p><button type="submit" id="preview">Preview</button></p>
        </form>
        {{#preview}}
        <div role="status" id="flex-result"><p>With ×{{factor}} the month plans <strong>{{total}} {{currency}}</strong>{{#shortfall}}, {{shortfall}} short of the budget (the factor stops at 0.5){{/shortfall}}{{#surplus}}, {{surplus}} left of the budget (the factor stops at 1.5){{/surplus}}.</p>
        <form method="post" action="/plans/flex">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="month" value="{{month}}">
        {{#byBudget}}<input type="hidden" name="budget" value="{{budget}}">{{/byBudget}}{{^byBudget}}<input type="hidden" name="factor" value="{{factor}}">{{/byBudget}}
        <button type="submit" id="apply">Apply ×{{factor}}</button> <a href="/plans?month={{month}}">Cancel</a>
        </form></div>
        {{/preview}}
        </section>
        {{/noPlans}}{{/locked}}
        {{#hasStale}}
        <section aria-labelledby="stale-h"><h2 id="stale-h">Drafts of earlier months ({{staleTotal}})</h2>
        <dl>{{#actions}}<dt>{{action}}</dt><dd>{{meaning}}</dd>{{/actions}}</dl>
        <ul class="plans">
        {{#stale}}
        <li class="plan" id="stale-{{id}}"><h3>{{goal}}, {{month}}</h3><p>Planned {{planned}} {{currency}}</p>
        <form method="post" action="/plans/stale" class="row">
        <input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="plan" value="{{id}}">
        <button type="submit" name="action" value="complete">Complete<span class="sr"> {{goal}} {{month}}</span></button>
        <button type="submit" name="action" value="skip">Skip<span class="sr"> {{goal}} {{month}}</span></button>
        <button type="submit" name="action" value="delete">Delete<span class="sr"> {{goal}} {{month}}</span></button>
        </form></li>
        {{/stale}}
        </ul>
        <nav aria-label="Pages of drafts"><span>Page {{stalePage}} of {{stalePages}}</span>
        {{#stalePrevious}}<a href="/plans?stale={{stalePrevious}}#stale-h">Previous</a>{{/stalePrevious}}
        {{#staleNext}}<a href="/plans?stale={{staleNext}}#stale-h">Next</a>{{/staleNext}}</nav>
        </section>
        {{/hasStale}}
        """
}
