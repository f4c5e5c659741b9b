import Hummingbird
import SavingsCore
import SavingsRPC

/// An asset's linked account from the page: set up (`asset.link`: a service, the account there
/// and the name of the credential file holding a read-only key, never the key), its state shown
/// (last sync, error, the service's balance against the stored one), synced now (`asset.sync`)
/// and ended (`asset.unlink`, which keeps what was imported).
extension Pages {
    static let services = [("kraken", "Kraken"), ("binance", "Binance"), ("coinbase", "Coinbase"), ("simplefin", "A bank, through SimpleFIN Bridge")]

    /// A service's name as a person calls it (`LinkedService.title`).
    static func serviceTitle(_ name: String?) -> String { name.flatMap(LinkedService.init(rawValue:))?.title ?? (name ?? "") }

    func link(asset: JSONValue, csrf: String, synced: [String: String] = [:], entered: [String: String] = [:], problem: String? = nil) -> String {
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        let link: JSONValue? = asset["link"]?.objectValue != nil ? asset["link"] : nil
        let chosen = entered["service"] ?? (text(asset["kind"]) == "fiat" ? "simplefin" : "kraken")
        var context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "id": Self.pathText(text(asset["id"])),
            "name": text(asset["name"]), "linked": link != nil, "watched": asset["watch"]?.objectValue != nil,
            "services": Self.services.map { ["value": $0.0, "label": $0.1, "selected": $0.0 == chosen] },
            "account": entered["account"] ?? "", "credential": entered["credential"] ?? "",
        ]
        if let link {
            let service = Self.serviceTitle(link["service"]?.stringValue)
            var facts: [[String: String]] = [
                ["term": "Account", "value": "\(service) \(text(link["account"]))"],
                ["term": "Key", "value": "the credential file \(text(link["credential"]))"],
                ["term": "Last sync", "value": link["last_sync_at"]?.stringValue.map { HumanTime.describe($0) } ?? "not yet"],
            ]
            if link["first_sync_unfinished"]?.boolValue == true {
                facts.append(["term": "First sync", "value": "unfinished: the next sync goes on where it stopped"])
            }
            if let reported = link["reported_balance"]?.stringValue {
                let agrees = link["reconciled"]?.boolValue != false
                facts.append(["term": "Balance", "value": agrees
                    ? "\(Self.money(asset["balance"])) \(text(asset["currency"])), as \(service) reports"
                    : "\(Self.money(asset["balance"])) \(text(asset["currency"])) stored, \(WebLocale.amount(reported)) reported by \(service)"])
            }
            if let error = link["last_error"]?.stringValue { facts.append(["term": "Last error", "value": error]) }
            context["facts"] = facts
        }
        if let added = synced["added"] {
            context["synced"] = "Synced: \(added) new, \(synced["removed"] ?? "0") removed."
        }
        return page(body: render("link", context), title: "\(text(asset["name"])): linked account")
    }

    /// An asset's link in a line (the fields of `Wire.link`), for the assets' list.
    static func linkState(_ link: JSONValue) -> String {
        var parts = ["\(serviceTitle(link["service"]?.stringValue)) \(link["account"]?.stringValue ?? "")"]
        parts.append(link["last_sync_at"]?.stringValue.map { "synced \(HumanTime.describe($0))" } ?? "not synced yet")
        if let error = link["last_error"]?.stringValue { parts.append("last error: \(error)") }
        if link["reconciled"]?.boolValue == false { parts.append("the service's balance differs from the stored one") }
        return parts.joined(separator: " · ")
    }

    static let linkTemplate = """
        <h1>{{name}}: linked account</h1>
        <p><a href="/assets">All assets</a> · <a href="/assets/{{id}}/transactions">Transactions of {{name}}</a></p>
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        {{#synced}}<p class="banner" role="status">{{synced}}</p>{{/synced}}
        {{#linked}}<dl class="facts">{{#facts}}<dt>{{term}}</dt><dd>{{value}}</dd>{{/facts}}</dl>
        <form method="post" action="/assets/{{id}}/link/sync" class="row"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Sync now</button></form>
        <form method="post" action="/assets/{{id}}/link/unlink" class="row"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" aria-describedby="unlink-help">End the link</button> <small id="unlink-help">what was imported stays</small></form>
        {{/linked}}
        {{#watched}}{{^linked}}<p>{{name}} reads its transactions from a chain: stop watching it on its on-chain page first.</p>{{/linked}}{{/watched}}
        {{^watched}}{{^linked}}<p>savingsd can read {{name}}'s transactions from its account at an exchange or a bank instead of you
        typing or importing them. It needs a key that can only read: make one at the service, put it in a file of savingsd's
        credentials directory that only savingsd's user can read (chmod 600), and name that file here. The key never passes
        through this page.</p>
        <form method="post" action="/assets/{{id}}/link">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="service">Service</label><br><select id="service" name="service">{{#services}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/services}}</select></p>
        <p><label for="account">Account at the service</label><br><input id="account" name="account" value="{{account}}" autocomplete="off" spellcheck="false"
           aria-describedby="account-help"> <small id="account-help">Kraken: XXBT or ZEUR; Binance: the coin; Coinbase: the account's id or currency;
           a bank: the account's id. Empty: the asset's currency.</small></p>
        <p><label for="credential">Credential file</label><br><input id="credential" name="credential" value="{{credential}}" autocomplete="off"
           spellcheck="false" required aria-describedby="credential-help"> <small id="credential-help">its name in the credentials directory, e.g. kraken-readonly</small></p>
        <p><button type="submit">Link the account</button></p>
        </form>{{/linked}}{{/watched}}
        """
}

extension Screens {
    func addLink(to router: Router<BasicRequestContext>) {
        router.get("/assets/:id/link") { request, context in
            await link(context.parameters.get("id") ?? "", synced: Self.query(request))
        }
        router.post("/assets/:id/link") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "asset.link", back: { _, _ in "/assets/\(Pages.pathText(id))/link" }) { form in
                var params: [String: JSONValue] = ["asset": .string(id), "service": .string(form["service"] ?? ""),
                                                   "credential": .string(form["credential"] ?? "")]
                if let account = Self.filled(form["account"]) { params["account"] = .string(account) }
                return params
            } refused: { form, problem in
                var entered: [String: String] = [:]
                for field in ["service", "account", "credential"] { entered[field] = form[field] }
                return await link(id, entered: entered, problem: problem)
            }
        }
        router.post("/assets/:id/link/sync") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "asset.sync", back: { _, result in
                let outcome = result["assets"]?.arrayValue?.first ?? .null
                let added = outcome["added"]?.intValue ?? 0, removed = outcome["removed"]?.arrayValue?.count ?? 0
                return "/assets/\(Pages.pathText(id))/link?added=\(added)&removed=\(removed)"
            }) { _ in ["asset": .string(id)] } refused: { _, problem in
                await link(id, problem: problem)
            }
        }
        router.post("/assets/:id/link/unlink") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "asset.unlink", back: { _, _ in "/assets/\(Pages.pathText(id))/link" }) { _ in
                ["asset": .string(id)]
            } refused: { _, problem in
                await link(id, problem: problem)
            }
        }
    }

    func link(_ id: String, synced: [String: String] = [:], entered: [String: String] = [:], problem: DaemonLink.Failure? = nil) async -> Response {
        do {
            let asset = try await daemon.call("asset.get", ["asset": .string(id)])
            return WebServer.html(pages.link(asset: asset, csrf: csrf, synced: synced, entered: entered, problem: problem?.message),
                                  status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }
}
