import Hummingbird
import SavingsRPC

/// An asset's transactions (`tx.list`), newest first, a page at a time and within dates; one
/// recorded (`tx.add`) or deleted (`tx.delete`) from the page.
extension Pages {
    struct TransactionsAnswers: Sendable {
        var asset: JSONValue
        var list: JSONValue
        /// The query the page was asked with (from, to, cursor), kept in its links and forms.
        var query: [String: String]
    }

    func transactions(_ answers: TransactionsAnswers, csrf: String, entered: [String: String] = [:], problem: String? = nil) -> String {
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        let id = Self.pathText(text(answers.asset["id"]))
        let rows = (answers.list["transactions"]?.arrayValue ?? []).map { tx -> [String: Any] in
            ["tx": text(tx["id"]), "when": HumanTime.describe(text(tx["date"])), "amount": text(tx["amount"]),
             "note": text(tx["note"]), "source": text(tx["source"])]
        }
        var range = ""
        for key in ["from", "to"] { if let value = answers.query[key], !value.isEmpty { range += "&\(key)=\(Screens.queryText(value))" } }
        let context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "id": id, "name": text(answers.asset["name"]),
            "currency": text(answers.asset["currency"]), "balance": text(answers.asset["balance"]), "rows": rows, "noRows": rows.isEmpty,
            "from": answers.query["from"] ?? "", "to": answers.query["to"] ?? "",
            "older": answers.list["next_cursor"]?.stringValue.map { "/assets/\(id)/transactions?cursor=\(Screens.queryText($0))\(range)" } ?? "",
            "amount": entered["amount"] ?? "", "date": entered["date"] ?? "", "txNote": entered["note"] ?? "",
        ]
        return page(body: render("transactions", context), title: "\(text(answers.asset["name"])): transactions")
    }

    static let transactionsTemplate = """
        <h1>{{name}}: transactions</h1>
        <p>Balance {{balance}} {{currency}} · <a href="/assets">all assets</a></p>
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        <form method="get" action="/assets/{{id}}/transactions" class="row">
        <label for="from">From</label> <input id="from" name="from" type="date" value="{{from}}">
        <label for="to">to</label> <input id="to" name="to" type="date" value="{{to}}">
        <button type="submit">Show</button></form>
        {{#noRows}}<p>No transactions here.</p>{{/noRows}}
        {{^noRows}}<div class="scroll" role="region" aria-labelledby="tx-h" tabindex="0"><table><caption id="tx-h">Newest first</caption>
        <thead><tr><th scope="col">When</th><th scope="col" class="num">Amount</th><th scope="col">Note</th><th scope="col"><span class="visually-hidden">Delete</span></th></tr></thead>
        <tbody>{{#rows}}<tr><th scope="row">{{when}}</th><td class="num">{{amount}}</td><td>{{note}}{{^note}}<small>{{source}}</small>{{/note}}</td>
        <td><form method="post" action="/assets/{{id}}/transactions/delete"><input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="transaction" value="{{tx}}"><button type="submit" aria-label="Delete the transaction of {{when}}, {{amount}}">Delete</button></form></td></tr>{{/rows}}</tbody>
        </table></div>{{/noRows}}
        {{#older}}<p><a href="{{older}}">Older transactions</a></p>{{/older}}
        <section aria-labelledby="add-h"><h2 id="add-h">Record one</h2>
        <form method="post" action="/assets/{{id}}/transactions">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="amount">Amount ({{currency}})</label><br><input id="amount" name="amount" inputmode="decimal" required value="{{amount}}"
           aria-describedby="amount-help"> <small id="amount-help">negative for money out, e.g. -25.50</small></p>
        <p><label for="date">Date</label><br><input id="date" name="date" type="date" value="{{date}}" aria-describedby="date-help">
        <small id="date-help">empty: now</small></p>
        <p><label for="note">Note</label><br><input id="note" name="note" value="{{txNote}}"></p>
        <p><button type="submit">Record it</button></p>
        </form></section>
        """
}

extension Screens {
    func addTransactions(to router: Router<BasicRequestContext>) {
        router.get("/assets/:id/transactions") { request, context in
            await transactions(context.parameters.get("id") ?? "", query: Self.query(request))
        }
        router.post("/assets/:id/transactions") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "tx.add", back: { _, _ in "/assets/\(Pages.pathText(id))/transactions" }) { form in
                var params: [String: JSONValue] = ["asset": .string(id), "amount": .string(form["amount"] ?? "")]
                for field in ["date", "note"] { if let value = Self.filled(form[field]) { params[field] = .string(value) } }
                return params
            } refused: { form, problem in
                var entered: [String: String] = [:]
                for field in ["amount", "date", "note"] { entered[field] = form[field] }
                return await transactions(id, query: [:], entered: entered, problem: problem)
            }
        }
        router.post("/assets/:id/transactions/delete") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "tx.delete", back: { _, _ in "/assets/\(Pages.pathText(id))/transactions" }) { form in
                ["transaction": .string(form["transaction"] ?? "")]
            } refused: { _, problem in
                await transactions(id, query: [:], problem: problem)
            }
        }
    }

    func transactions(_ id: String, query: [String: String], entered: [String: String] = [:], problem: DaemonLink.Failure? = nil) async -> Response {
        var params: [String: JSONValue] = ["asset": .string(id), "limit": 50]
        for key in ["from", "to", "cursor"] { if let value = Self.filled(query[key]) { params[key] = .string(value) } }
        do {
            async let asset = daemon.call("asset.get", ["asset": .string(id)])
            async let list = daemon.call("tx.list", params)
            let answers = Pages.TransactionsAnswers(asset: try await asset, list: try await list, query: query)
            return WebServer.html(pages.transactions(answers, csrf: csrf, entered: entered, problem: problem?.message), status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }
}
