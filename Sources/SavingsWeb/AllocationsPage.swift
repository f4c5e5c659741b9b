import Foundation
import Hummingbird
import SavingsCore
import SavingsRPC

/// How an asset is shared among goals (`asset.get`'s allocations), what stays free, and one
/// goal's share set from the page (`allocation.set`; 0 removes it).
extension Pages {
    func allocations(asset: JSONValue, goals: JSONValue, csrf: String, entered: [String: String] = [:], problem: String? = nil) -> String {
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        let shares = (asset["allocations"]?.arrayValue ?? []).map { ["goal": text($0["goal_name"]), "amount": Self.money($0["amount"])] }
        let chosen = entered["goal"]
        // Each goal's share now, and the sum of all: what stays free is worked out on the page as
        // a share is typed (live.js, in exact decimals), and shown before it is sent.
        var current: [String: String] = [:]
        var allocated = Decimal(0)
        for line in asset["allocations"]?.arrayValue ?? [] {
            let amount = text(line["amount"])
            current[text(line["goal_name"])] = amount
            allocated += (try? Amount.parse(amount)) ?? 0
        }
        let choices = (goals["goals"]?.arrayValue ?? []).map { goal -> [String: Any] in
            ["name": text(goal["name"]), "selected": text(goal["name"]) == chosen, "share": current[text(goal["name"])] ?? "0"]
        }
        let locale = WebLocale.current
        let context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "id": Self.pathText(text(asset["id"])),
            "name": text(asset["name"]), "currency": text(asset["currency"]), "balance": Self.money(asset["balance"]),
            "unallocated": Self.money(asset["unallocated"]), "overAllocated": asset["over_allocated"]?.boolValue == true,
            "shares": shares, "noShares": shares.isEmpty, "goals": choices, "noGoals": choices.isEmpty, "amount": entered["amount"] ?? "",
            "balanceRaw": text(asset["balance"]), "allocatedRaw": Amount.plainText(allocated),
            "decimal": locale?.decimal ?? ".", "grouping": locale?.grouping ?? "", "groupSize": locale?.groupSize ?? 3,
        ]
        return page(body: render("allocations", context), title: "\(text(asset["name"])): allocations")
    }

    static let allocationsTemplate = """
        <h1>{{name}}: allocations</h1>
        <p>Balance {{balance}} {{currency}} · <strong>free {{unallocated}} {{currency}}</strong> · <a href="/assets">all assets</a></p>
        {{#overAllocated}}<p class="banner" role="alert">More is allocated than the balance holds.</p>{{/overAllocated}}
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        {{#noShares}}<p>Nothing of it is allocated to a goal yet.</p>{{/noShares}}
        {{^noShares}}<ul>{{#shares}}<li>{{amount}} {{currency}} for {{goal}}</li>{{/shares}}</ul>{{/noShares}}
        {{^noGoals}}<section aria-labelledby="set-h"><h2 id="set-h">Set a goal's share</h2>
        <form method="post" action="/assets/{{id}}/allocations" id="share-form" data-balance="{{balanceRaw}}" data-allocated="{{allocatedRaw}}"
           data-decimal="{{decimal}}" data-grouping="{{grouping}}" data-group-size="{{groupSize}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="goal">Goal</label><br><select id="goal" name="goal">{{#goals}}<option data-share="{{share}}"{{#selected}} selected{{/selected}}>{{name}}</option>{{/goals}}</select></p>
        <p><label for="amount">Its share ({{currency}})</label><br><input id="amount" name="amount" inputmode="decimal" required value="{{amount}}"
           aria-describedby="amount-help"> <small id="amount-help">what of this asset is for the goal; 0 removes it</small></p>
        <p>Free after this: <output id="free-after" for="goal amount" aria-live="polite">{{unallocated}}</output> {{currency}}</p>
        <p><button type="submit">Set the share</button></p>
        </form></section>{{/noGoals}}
        """
}

extension Screens {
    func addAllocations(to router: Router<BasicRequestContext>) {
        router.get("/assets/:id/allocations") { _, context in await allocations(context.parameters.get("id") ?? "") }
        router.post("/assets/:id/allocations") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "allocation.set", back: { _, _ in "/assets/\(Pages.pathText(id))/allocations" }) { form in
                ["asset": .string(id), "goal": .string(form["goal"] ?? ""), "amount": .string(WebLocale.input(form["amount"] ?? ""))]
            } refused: { form, problem in
                await allocations(id, entered: ["goal": form["goal"] ?? "", "amount": form["amount"] ?? ""], problem: problem)
            }
        }
    }

    func allocations(_ id: String, entered: [String: String] = [:], problem: DaemonLink.Failure? = nil) async -> Response {
        do {
            async let asset = daemon.call("asset.get", ["asset": .string(id)])
            async let goals = daemon.call("goal.list")
            return WebServer.html(pages.allocations(asset: try await asset, goals: try await goals, csrf: csrf, entered: entered,
                                                    problem: problem?.message), status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }
}
