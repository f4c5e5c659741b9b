import Hummingbird
import SavingsRPC

/// A crypto asset's on-chain watch from the page: set up (`asset.watch`: a chain and an
/// extended public key or addresses, a token, confirmations), its state shown, synced now
/// (`asset.sync`) and stopped (`asset.unwatch`, which keeps what was imported).
extension Pages {
    static let chains = [("bitcoin", "Bitcoin"), ("bitcoin-testnet", "Bitcoin testnet"), ("litecoin", "Litecoin"), ("ethereum", "Ethereum")]

    func watch(asset: JSONValue, csrf: String, synced: [String: String] = [:], entered: [String: String] = [:],
               problem: String? = nil) -> String {
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        let watch: JSONValue? = asset["watch"]?.objectValue != nil ? asset["watch"] : nil
        let chosen = entered["chain"] ?? "bitcoin"
        var context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "id": Self.pathText(text(asset["id"])),
            "name": text(asset["name"]), "currency": text(asset["currency"]), "crypto": text(asset["kind"]) == "crypto",
            "watched": watch != nil, "balance": text(asset["balance"]),
            "chains": Self.chains.map { ["value": $0.0, "label": $0.1, "selected": $0.0 == chosen] },
            "xpub": entered["xpub"] ?? "", "addresses": entered["addresses"] ?? "", "token": entered["token"] ?? "",
            "confirmations": entered["min_confirmations"] ?? "1",
        ]
        if let watch {
            var facts: [[String: String]] = [
                ["term": "Chain", "value": text(watch["chain"]) + (watch["provider"]?.stringValue.map { ", read from \($0)" } ?? "")],
                ["term": "Watched", "value": watch["xpub"]?.stringValue.map { "the key \($0)" }
                    ?? (watch["addresses"]?.arrayValue ?? []).compactMap(\.stringValue).joined(separator: ", ")],
                ["term": "Last sync", "value": watch["last_sync_at"]?.stringValue.map { HumanTime.describe($0) } ?? "not yet"],
            ]
            if let token = watch["token"]?.stringValue { facts.insert(["term": "Token", "value": token], at: 2) }
            if let reported = watch["reported_balance"]?.stringValue {
                let agrees = watch["reconciled"]?.boolValue != false
                facts.append(["term": "Balance", "value": agrees
                    ? "\(Self.money(asset["balance"])) \(text(asset["currency"])), as the chain reports"
                    : "\(Self.money(asset["balance"])) \(text(asset["currency"])) stored, \(WebLocale.amount(reported)) reported by the chain"])
            }
            let pending = watch["pending"]?.arrayValue?.count ?? 0
            if pending > 0 { facts.append(["term": "Waiting for confirmations", "value": pending == 1 ? "1 transaction" : "\(pending) transactions"]) }
            if let error = watch["last_error"]?.stringValue { facts.append(["term": "Last error", "value": error]) }
            context["facts"] = facts
        }
        if let added = synced["added"] {
            context["synced"] = "Synced: \(added) new, \(synced["removed"] ?? "0") removed, \(synced["pending"] ?? "0") waiting for confirmations."
        }
        return page(body: render("watch", context), title: "\(text(asset["name"])): on-chain")
    }

    static let watchTemplate = """
        <h1>{{name}}: on-chain</h1>
        <p><a href="/assets">All assets</a> · <a href="/assets/{{id}}/transactions">Transactions of {{name}}</a></p>
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        {{#synced}}<p class="banner" role="status">{{synced}}</p>{{/synced}}
        {{^crypto}}<p>{{name}} is an account in fiat money: there is no chain to watch. Its transactions are recorded or imported.</p>{{/crypto}}
        {{#watched}}<dl class="facts">{{#facts}}<dt>{{term}}</dt><dd>{{value}}</dd>{{/facts}}</dl>
        <form method="post" action="/assets/{{id}}/chain/sync" class="row"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit">Sync now</button></form>
        <form method="post" action="/assets/{{id}}/chain/unwatch" class="row"><input type="hidden" name="csrf" value="{{csrf}}">
        <button type="submit" aria-describedby="unwatch-help">Stop watching</button> <small id="unwatch-help">what was imported stays</small></form>
        {{/watched}}
        {{#crypto}}{{^watched}}<p>savingsd can read {{name}}'s transactions from the chain instead of you typing them: give it an
        extended public key (xpub, ypub, zpub) or addresses. It never holds a key that can spend.</p>
        <form method="post" action="/assets/{{id}}/chain">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="chain">Chain</label><br><select id="chain" name="chain">{{#chains}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/chains}}</select></p>
        <p><label for="xpub">Extended public key</label><br><input id="xpub" name="xpub" value="{{xpub}}" autocomplete="off" spellcheck="false"
           aria-describedby="xpub-help"> <small id="xpub-help">or addresses below, not both</small></p>
        <p><label for="addresses">Addresses</label><br><textarea id="addresses" name="addresses" rows="3" spellcheck="false"
           aria-describedby="addresses-help">{{addresses}}</textarea> <small id="addresses-help">one a line</small></p>
        <p><label for="token">Token contract</label><br><input id="token" name="token" value="{{token}}" spellcheck="false"
           aria-describedby="token-help"> <small id="token-help">Ethereum only, optional: the asset then holds that ERC-20 token</small></p>
        <p><label for="min_confirmations">Confirmations</label><br><input id="min_confirmations" name="min_confirmations" type="number" min="1" max="1000"
           value="{{confirmations}}" aria-describedby="confirmations-help"> <small id="confirmations-help">before a transaction counts</small></p>
        <p><button type="submit">Watch the chain</button></p>
        </form>{{/watched}}{{/crypto}}
        """
}

extension Screens {
    func addWatch(to router: Router<BasicRequestContext>) {
        router.get("/assets/:id/chain") { request, context in
            await watch(context.parameters.get("id") ?? "", synced: Self.query(request))
        }
        router.post("/assets/:id/chain") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "asset.watch", back: { _, _ in "/assets/\(Pages.pathText(id))/chain" }) { form in
                var params: [String: JSONValue] = ["asset": .string(id), "chain": .string(form["chain"] ?? "")]
                if let xpub = Self.filled(form["xpub"]) { params["xpub"] = .string(xpub) }
                let addresses = (form["addresses"] ?? "").split(whereSeparator: \.isNewline)
                    .map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
                if !addresses.isEmpty { params["addresses"] = .array(addresses.map { .string($0) }) }
                if let token = Self.filled(form["token"]) { params["token"] = .string(token) }
                if let count = Self.filled(form["min_confirmations"]) { params["min_confirmations"] = Int(count).map { .int($0) } ?? .string(count) }
                return params
            } refused: { form, problem in
                var entered: [String: String] = [:]
                for field in ["chain", "xpub", "addresses", "token", "min_confirmations"] { entered[field] = form[field] }
                return await watch(id, entered: entered, problem: problem)
            }
        }
        router.post("/assets/:id/chain/sync") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "asset.sync", back: { _, result in
                // What the sync did, for the page to say.
                let outcome = result["assets"]?.arrayValue?.first ?? .null
                let added = outcome["added"]?.intValue ?? 0, removed = outcome["removed"]?.arrayValue?.count ?? 0
                let pending = outcome["pending"]?.arrayValue?.count ?? 0
                return "/assets/\(Pages.pathText(id))/chain?added=\(added)&removed=\(removed)&pending=\(pending)"
            }) { _ in ["asset": .string(id)] } refused: { _, problem in
                await watch(id, problem: problem)
            }
        }
        router.post("/assets/:id/chain/unwatch") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "asset.unwatch", back: { _, _ in "/assets/\(Pages.pathText(id))/chain" }) { _ in
                ["asset": .string(id)]
            } refused: { _, problem in
                await watch(id, problem: problem)
            }
        }
    }

    func watch(_ id: String, synced: [String: String] = [:], entered: [String: String] = [:], problem: DaemonLink.Failure? = nil) async -> Response {
        do {
            let asset = try await daemon.call("asset.get", ["asset": .string(id)])
            return WebServer.html(pages.watch(asset: asset, csrf: csrf, synced: synced, entered: entered, problem: problem?.message),
                                  status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }
}
