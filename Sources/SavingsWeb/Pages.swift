import Foundation
import Mustache
import NIOCore
import SavingsCLI
import SavingsRPC

/// The web view's pages: Mustache templates embedded in the binary (no file to install, nothing
/// from another origin), filled from the daemon's answers. `{{name}}` escapes HTML, so a goal
/// named `<script>` shows as text.
struct Pages: Sendable {
    let library: MustacheLibrary

    init() throws {
        var library = MustacheLibrary()
        try library.register(Self.layout, named: "layout")
        try library.register(Self.dashboard, named: "dashboard")
        try library.register(Self.problem, named: "problem")
        try library.register(Self.saved, named: "saved")
        try library.register(Self.assets, named: "assets")
        try library.register(Self.goalTemplate, named: "goal")
        try library.register(Self.planningTemplate, named: "planning")
        try library.register(Self.monthTemplate, named: "month")
        try library.register(EntityForm.template, named: "entityForm")
        try library.register(Self.ratesTemplate, named: "rates")
        try library.register(Self.transactionsTemplate, named: "transactions")
        try library.register(Self.transactionTemplate, named: "transaction")
        try library.register(Self.watchTemplate, named: "watch")
        try library.register(Self.linkTemplate, named: "link")
        try library.register(Self.importFormTemplate, named: "importForm")
        try library.register(Self.importPickTemplate, named: "importPick")
        try library.register(Self.importCheckTemplate, named: "importCheck")
        try library.register(Self.questionTemplate, named: "question")
        try library.register(Self.allocationsTemplate, named: "allocations")
        self.library = library
    }

    /// The dashboard (`dashboard.get`): goals with their progress (`rows`, the goal list written
    /// by `DashboardRows`), this month, rates.
    /// The rows (the bulk of the page) go between the template's head and tail as they are,
    /// never copied through a template.
    /// What the dashboard says on top: a saving just recorded (with its Undo), its undo done,
    /// or an undo refused.
    struct Notice: Sendable {
        var saved: (id: String, amount: String, goal: String)?
        var undone = false
        var problem: String?
    }

    func dashboard(_ answer: JSONValue, rows: DashboardRows.Written, csrf: String, notice: Notice? = nil, months: String? = nil) -> ByteBuffer {
        let (head, tail) = dashboard(answer, goalCount: rows.count, csrf: csrf, notice: notice, months: months)
        var page = ByteBuffer()
        page.reserveCapacity(head.utf8.count + rows.html.utf8.count + tail.utf8.count)
        page.writeSubstring(head)
        page.writeString(rows.html)
        page.writeSubstring(tail)
        return page
    }

    /// The dashboard's page around its goal rows: what comes before them and after.
    private func dashboard(_ answer: JSONValue, goalCount: Int, csrf: String, notice: Notice?, months: String?) -> (head: Substring, tail: Substring) {
        var context: [String: Any] = [
            "months": months.map { "/months.svg?" + $0 } ?? "",
            "undone": notice?.undone == true, "undoProblem": notice?.problem ?? "", "hasUndoProblem": notice?.problem != nil,
            "title": "Dashboard", "csrf": csrf, "noGoals": goalCount == 0,
            "currency": answer["currency"]?.stringValue ?? "",
            "goalsTotal": Self.money(answer["totals"]?["goals_total"]),
            "unallocated": Self.money(answer["totals"]?["unallocated_value"]),
            "staleRates": answer["stale"]?.boolValue == true,
            "staleDrafts": answer["stale_drafts"]?.intValue ?? 0,
            "ratesAsOf": HumanTime.describe(answer["rates"]?["oldest_as_of"]?.stringValue ?? ""),
        ]
        if let saved = notice?.saved {
            context["saved"] = ["id": saved.id, "amount": saved.amount, "goal": saved.goal]
        }
        if let month = answer["month"], month != .null {
            context["month"] = [
                "label": HumanTime.month(month["month"]?.stringValue ?? ""), "status": month["status"]?.stringValue ?? "",
                "planned": Self.money(month["planned"]), "contributed": Self.money(month["contributed"]),
                "remaining": Self.money(month["remaining"]), "currency": month["currency"]?.stringValue ?? "",
                "picture": Pictures.month(planned: month["planned"]?.stringValue ?? "0", contributed: month["contributed"]?.stringValue ?? "0",
                                          currency: month["currency"]?.stringValue ?? "", label: HumanTime.month(month["month"]?.stringValue ?? "")),
            ]
        }
        context["hasStaleDrafts"] = (context["staleDrafts"] as? Int ?? 0) > 0
        context["syncNotes"] = Self.syncNotes(answer)
        let whole = page(body: render("dashboard", context), title: "Dashboard")
        // The marker cannot come from a text: `<` is written `&lt;` there.
        guard let marker = whole.range(of: Self.goalRowsMarker) else { return (whole[...], "") }
        return (whole[..<marker.lowerBound], whole[marker.upperBound...])
    }

    /// What the dashboard says about watched chains and linked accounts: syncs that failed and
    /// balances that differ from the chain's or the service's (`dashboard.get`'s `onchain` and
    /// `linked`), and how long ago they last synced.
    static func syncNotes(_ answer: JSONValue) -> [[String: String]] {
        var notes: [[String: String]] = []
        for (key, what, source) in [("onchain", "watched on-chain", "the chain"), ("linked", "linked to an account", "the service")] {
            guard let summary = answer[key], summary.objectValue != nil else { continue }
            let names = { (field: String) in (summary[field]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ") }
            if !names("failing").isEmpty { notes.append(["note": "The last sync failed for \(names("failing")) (\(what))."]) }
            if !names("unreconciled").isEmpty { notes.append(["note": "The balance of \(names("unreconciled")) differs from what \(source) reports."]) }
        }
        return notes
    }

    /// The "I saved" form (`goal.contribute`): the goals and assets to choose from, what was
    /// entered (`entered`), and the daemon's message when it refused (`problem`).
    func saved(goals: JSONValue, assets: JSONValue, csrf: String, entered: [String: String] = [:], problem: String? = nil) -> String {
        func options(_ list: JSONValue?, selected: String?) -> [[String: Any]] {
            (list?.arrayValue ?? []).compactMap { item in
                guard let name = item["name"]?.stringValue else { return nil }
                return ["name": name, "selected": selected != nil && (name == selected || item["id"]?.stringValue == selected)]
            }
        }
        let context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil,
            "goals": options(goals["goals"] ?? goals, selected: entered["goal"]),
            "assets": options(assets["assets"] ?? assets, selected: entered["asset"]),
            "amount": entered["amount"] ?? "", "note": entered["note"] ?? "",
        ]
        return page(body: render("saved", context), title: "I saved")
    }

    /// The assets (`asset.list`): balances, what is allocated to which goal, what is free, the
    /// value in the display currency, and the on-chain watch where there is one.
    func assets(_ answer: JSONValue) -> String {
        let assets = (answer["assets"]?.arrayValue ?? []).map { asset -> [String: Any] in
            let text = { (key: String) in asset[key]?.stringValue ?? "" }
            // Only an object is a watch. (`nil` in a closure returning JSONValue would be the
            // JSON null, ExpressibleByNilLiteral, and every asset looked watched.)
            let watch: JSONValue? = asset["watch"]?.objectValue != nil ? asset["watch"] : nil
            let link: JSONValue? = asset["link"]?.objectValue != nil ? asset["link"] : nil
            return [
                "id": text("id"), "name": text("name"), "kind": text("kind"), "currency": text("currency"), "balance": Self.money(asset["balance"]),
                "unallocated": Self.money(asset["unallocated"]), "value": Self.money(asset["value"]), "valueCurrency": text("value_currency"),
                "overAllocated": asset["over_allocated"]?.boolValue == true,
                "allocations": (asset["allocations"]?.arrayValue ?? []).map { ["goal": $0["goal_name"]?.stringValue ?? "", "amount": Self.money($0["amount"])] },
                "watched": watch != nil, "crypto": text("kind") == "crypto",
                "watchState": watch.map(Self.watchState) ?? "",
                "linked": link != nil, "linkState": link.map(Self.linkState) ?? "",
            ]
        }
        return page(body: render("assets", ["assets": assets, "noAssets": assets.isEmpty]), title: "Assets")
    }

    /// An asset's on-chain watch in a line (the fields of `Wire.watch`): chain and provider, the
    /// last sync or that there was none, the last error, whether the balance agrees.
    static func watchState(_ watch: JSONValue) -> String {
        var parts = [watch["chain"]?.stringValue, watch["provider"]?.stringValue].compactMap { $0 }
        parts.append(watch["last_sync_at"]?.stringValue.map { "synced \(HumanTime.describe($0))" } ?? "not synced yet")
        if let error = watch["last_error"]?.stringValue { parts.append("last error: \(error)") }
        if watch["reconciled"]?.boolValue == false { parts.append("the chain's balance differs from the stored one") }
        return parts.joined(separator: " · ")
    }

    /// An amount from the daemon as the browser's locale writes it (`WebLocale`).
    static func money(_ value: JSONValue?) -> String { WebLocale.amount(value?.stringValue ?? "") }

    /// An amount from the daemon for a form's field (`WebLocale.field`): read back as it was.
    static func fieldMoney(_ value: JSONValue?) -> String { WebLocale.field(value?.stringValue ?? "") }

    /// Text for HTML, as Mustache's `{{...}}` escapes it (`HTMLText`, shared with the report).
    static func escape(_ text: String) -> String { HTMLText.escape(text) }

    /// A question before a change that cannot be taken back: what it does, then a button that
    /// sends the same form again with `confirm=yes`, and a way back.
    func question(_ heading: String, _ detail: String, action: String, yes: String, back: String, csrf: String) -> String {
        page(body: render("question", ["heading": heading, "detail": detail, "action": action, "yes": yes, "back": back, "csrf": csrf]),
             title: heading)
    }

    static let questionTemplate = """
        <section class="banner" role="alert" aria-labelledby="question-h"><h1 id="question-h">{{heading}}</h1>
        <p>{{detail}}</p>
        <form method="post" action="{{action}}" class="row"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="confirm" value="yes">
        <button type="submit">{{yes}}</button> <a href="{{back}}">Cancel</a></form></section>
        """

    /// A page saying what went wrong and what to do next.
    func problem(_ message: String, title: String = "savingsd") -> String {
        page(body: render("problem", ["message": message]), title: title)
    }

    static let goalRowsMarker = "<goal-rows/>"

    /// `template` filled from `context`, where an empty text counts as absent (`{{#notes}}`
    /// shows nothing for a goal without notes), as a missing value does in Mustache.
    func render(_ template: String, _ context: [String: Any]) -> String {
        library.render(Self.pruned(context), withTemplate: template) ?? ""
    }

    static func pruned(_ context: [String: Any]) -> [String: Any] {
        context.compactMapValues { value -> Any? in
            switch value {
            case let text as String: text.isEmpty ? nil : text
            case let nested as [String: Any]: pruned(nested)
            case let list as [[String: Any]]: list.map(pruned)
            default: value
            }
        }
    }

    func page(body: String, title: String) -> String {
        library.render(["title": title, "body": body], withTemplate: "layout") ?? body
    }

    static let layout = """
        <!doctype html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>{{title}} · savingsd</title>
        <link rel="stylesheet" href="/static/style.css">
        <script src="/static/live.js" defer></script>
        </head>
        <body>
        <header><nav aria-label="Screens"><a href="/">Dashboard</a><a href="/plans">Planning</a><a href="/month">Month</a><a href="/assets">Assets</a><a href="/rates">Rates</a><a href="/import">Import and backup</a><a href="/saved">I saved</a></nav>
        <p id="live" role="status" aria-live="polite"></p></header>
        <main>
        {{{body}}}
        </main>
        </body>
        </html>
        """

    static let dashboard = """
        <h1>Savings goals</h1>
        {{#saved}}<section class="banner" role="status" aria-labelledby="saved-h"><p id="saved-h">Recorded {{amount}} for {{goal}}.</p>
        <form method="post" action="/saved/undo"><input type="hidden" name="csrf" value="{{csrf}}"><input type="hidden" name="contribution" value="{{id}}">
        <button type="submit">Undo this saving</button></form></section>{{/saved}}
        {{#undone}}<p class="banner" role="status">The saving was undone: its deposit and its allocation are gone.</p>{{/undone}}
        {{#hasUndoProblem}}<p class="problem" role="alert">{{undoProblem}}</p>{{/hasUndoProblem}}
        {{#hasStaleDrafts}}<p class="banner" role="alert"><a href="/plans#stale-h">{{staleDrafts}} draft plan(s) from earlier months</a> still wait for a decision.</p>{{/hasStaleDrafts}}
        {{#staleRates}}<p class="banner" role="alert">Some exchange rates are stale: figures may be off.</p>{{/staleRates}}
        {{#syncNotes}}<p class="banner" role="alert">{{note}} <a href="/assets">Assets</a></p>{{/syncNotes}}
        {{#month}}
        <section aria-labelledby="month-h"><h2 id="month-h">This month ({{label}}, {{status}})</h2>
        <p>Planned {{planned}} {{currency}} · contributed {{contributed}} {{currency}} · remaining {{remaining}} {{currency}}</p>
        <figure class="picture">{{{picture}}}</figure></section>
        {{/month}}
        {{#months}}<section aria-labelledby="months-h"><h2 id="months-h">The last closed months</h2>
        <figure class="picture months"><img src="{{months}}" alt="Each goal's last closed months: what came in against what was planned" loading="lazy">
        <figcaption><small>filled: what came in; outlined: the plan. Each goal's page has the figures.</small></figcaption></figure></section>{{/months}}
        <section aria-labelledby="goals-h"><h2 id="goals-h">Goals</h2>
        {{#noGoals}}<p>No goals yet.</p>{{/noGoals}}
        <p><a href="/goals/new">New goal</a></p>
        <ul class="goals">
        <goal-rows/>
        </ul></section>
        <section aria-labelledby="totals-h"><h2 id="totals-h">Totals ({{currency}})</h2>
        <p>Goals {{goalsTotal}} · unallocated {{unallocated}}{{#ratesAsOf}} · rates as of {{ratesAsOf}}{{/ratesAsOf}}</p></section>
        """

    static let saved = """
        <h1>I saved</h1>
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        <form method="post" action="/saved">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="goal">Goal</label><br><select id="goal" name="goal" required>
        {{#goals}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/goals}}
        </select></p>
        <p><label for="amount">Amount</label><br><input id="amount" name="amount" inputmode="decimal" required value="{{amount}}"
           aria-describedby="amount-help"> <small id="amount-help">in the asset's units; "plan" or "half" of this month's plan</small></p>
        <p><label for="asset">Into</label><br><select id="asset" name="asset">
        <option value="">the goal's own asset</option>
        {{#assets}}<option{{#selected}} selected{{/selected}}>{{name}}</option>{{/assets}}
        </select></p>
        <p><label for="note">Note</label><br><input id="note" name="note" value="{{note}}"></p>
        <p><button type="submit">Save</button></p>
        </form>
        """

    static let assets = """
        <h1>Assets</h1>
        {{#noAssets}}<p>No assets yet.</p>{{/noAssets}}
        <p><a href="/assets/new">New asset</a></p>
        <ul class="assets">
        {{#assets}}
        <li class="asset"><h3>{{name}}</h3> <a href="/assets/{{id}}/transactions">Transactions of {{name}}</a> · <a href="/assets/{{id}}/allocations">Allocations of {{name}}</a> · <a href="/assets/{{id}}/edit">Change {{name}}</a>{{#crypto}} · <a href="/assets/{{id}}/chain">{{name}} on-chain</a>{{/crypto}} · <a href="/assets/{{id}}/link">{{name}}'s linked account</a>
        <p>{{balance}} {{currency}} ({{kind}}){{#value}} · worth {{value}} {{valueCurrency}}{{/value}} · free {{unallocated}} {{currency}}</p>
        {{#overAllocated}}<p class="banner" role="alert">More is allocated than the balance holds.</p>{{/overAllocated}}
        {{#allocations}}<p>{{amount}} {{currency}} for {{goal}}</p>{{/allocations}}
        {{#watched}}<p>Watched on-chain: {{watchState}}</p>{{/watched}}
        {{#linked}}<p>Linked to {{linkState}}</p>{{/linked}}
        </li>
        {{/assets}}
        </ul>
        """

    static let problem = """
        <h1>Something went wrong</h1>
        <p class="problem" role="alert">{{message}}</p>
        """
}
