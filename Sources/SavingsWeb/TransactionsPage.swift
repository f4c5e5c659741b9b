import Foundation
import Hummingbird
import SavingsCore
import SavingsRPC

/// An asset's transactions (`tx.list`), newest first, a page at a time, within dates and
/// matching a search; one recorded (`tx.add`), changed (`tx.get`, `tx.update`) or deleted
/// (`tx.delete`) from the page.
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
            ["tx": text(tx["id"]), "when": HumanTime.describe(text(tx["date"])), "amount": Self.money(tx["amount"]),
             "note": text(tx["note"]), "source": text(tx["source"])]
        }
        var range = ""
        for key in ["from", "to", "search"] { if let value = answers.query[key], !value.isEmpty { range += "&\(key)=\(Screens.queryText(value))" } }
        let context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "id": id, "name": text(answers.asset["name"]),
            "currency": text(answers.asset["currency"]), "balance": Self.money(answers.asset["balance"]), "rows": rows, "noRows": rows.isEmpty,
            "from": answers.query["from"] ?? "", "to": answers.query["to"] ?? "", "search": answers.query["search"] ?? "",
            "searching": Screens.filled(answers.query["search"]) != nil,
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
        <label for="search">containing</label> <input id="search" name="search" type="search" value="{{search}}" maxlength="200"
           aria-describedby="search-help"> <small id="search-help">a word of the note, an id, or an amount</small>
        <button type="submit">Show</button></form>
        {{#noRows}}<p>No transactions here{{#searching}} containing “{{search}}”{{/searching}}.</p>{{/noRows}}
        {{^noRows}}<div class="scroll" role="region" aria-labelledby="tx-h" tabindex="0"><table><caption id="tx-h">Newest first</caption>
        <thead><tr><th scope="col">When</th><th scope="col" class="num">Amount</th><th scope="col">Note</th><th scope="col"><span class="visually-hidden">Change or delete</span></th></tr></thead>
        <tbody>{{#rows}}<tr><th scope="row">{{when}}</th><td class="num">{{amount}}</td><td>{{note}}{{^note}}<small>{{source}}</small>{{/note}}</td>
        <td><a href="/assets/{{id}}/transactions/{{tx}}" aria-label="Change the transaction of {{when}}, {{amount}}">Change</a>
        <form method="post" action="/assets/{{id}}/transactions/delete" class="inline"><input type="hidden" name="csrf" value="{{csrf}}">
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

    /// One transaction's form. The fields carry what the transaction holds, and beside each
    /// its value as it was: only what was changed is sent, so a note can change on a
    /// contribution's row and a date keeps its time of day unless the day changes.
    func transactionEdit(asset: JSONValue, transaction: JSONValue, csrf: String, entered: [String: String] = [:],
                         problem: String? = nil) -> String {
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        let day = TransactionDay.day(of: text(transaction["date"])) ?? ""
        let was = ["amount": Self.fieldMoney(transaction["amount"]), "date": day, "note": text(transaction["note"])]
        let context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "id": Self.pathText(text(asset["id"])),
            "tx": Self.pathText(text(transaction["id"])), "name": text(asset["name"]), "currency": text(asset["currency"]),
            "when": HumanTime.describe(text(transaction["date"])), "source": text(transaction["source"]),
            "externalID": text(transaction["external_id"]), "stamp": text(transaction["date"]),
            "wasAmount": was["amount"]!, "wasDate": was["date"]!, "wasNote": was["note"]!,
            "amount": entered["amount"] ?? was["amount"]!, "date": entered["date"] ?? was["date"]!, "txNote": entered["note"] ?? was["note"]!,
        ]
        return page(body: render("transaction", context), title: "\(text(asset["name"])): a transaction")
    }

    static let transactionTemplate = """
        <h1>{{name}}: the transaction of {{when}}</h1>
        <p><a href="/assets/{{id}}/transactions">All transactions of {{name}}</a></p>
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        <p>Source: {{source}}{{#externalID}} · id {{externalID}}{{/externalID}}</p>
        <form method="post" action="/assets/{{id}}/transactions/{{tx}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <input type="hidden" name="was_amount" value="{{wasAmount}}"><input type="hidden" name="was_date" value="{{wasDate}}">
        <input type="hidden" name="was_note" value="{{wasNote}}"><input type="hidden" name="stamp" value="{{stamp}}">
        <p><label for="amount">Amount ({{currency}})</label><br><input id="amount" name="amount" inputmode="decimal" required value="{{amount}}"
           aria-describedby="amount-help"> <small id="amount-help">negative for money out</small></p>
        <p><label for="date">Date</label><br><input id="date" name="date" type="date" required value="{{date}}"
           aria-describedby="date-help"> <small id="date-help">the time of day stays</small></p>
        <p><label for="note">Note</label><br><input id="note" name="note" value="{{txNote}}" aria-describedby="note-help">
           <small id="note-help">empty removes it</small></p>
        <p><button type="submit">Save the changes</button></p>
        </form>
        """
}

/// A transaction's day on this machine's calendar, and a new day at the same time of day.
enum TransactionDay {
    static func day(of stamp: String, timeZone: TimeZone = .current) -> String? {
        guard let date = try? Timestamp.parse(stamp, field: "date") else { return nil }
        let parts = calendar(timeZone).dateComponents([.year, .month, .day], from: date)
        guard let year = parts.year, let month = parts.month, let day = parts.day else { return nil }
        return String(format: "%04d-%02d-%02d", year, month, day)
    }

    /// `day` (YYYY-MM-DD) at the time of day `stamp` has, as a timestamp; nil when either is
    /// not what it should be (the daemon then judges the day as it was typed).
    static func moving(_ stamp: String, to day: String, timeZone: TimeZone = .current) -> String? {
        guard let date = try? Timestamp.parse(stamp, field: "date") else { return nil }
        let parts = day.split(separator: "-").compactMap { Int($0) }
        guard parts.count == 3 else { return nil }
        let calendar = calendar(timeZone)
        var components = calendar.dateComponents([.hour, .minute, .second, .nanosecond], from: date)
        (components.year, components.month, components.day) = (parts[0], parts[1], parts[2])
        guard let moved = calendar.date(from: components), self.day(of: Timestamp.format(moved), timeZone: timeZone) == day else { return nil }
        return Timestamp.format(moved)
    }

    private static func calendar(_ timeZone: TimeZone) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        return calendar
    }
}

extension Screens {
    func addTransactions(to router: Router<BasicRequestContext>) {
        router.get("/assets/:id/transactions") { request, context in
            await transactions(context.parameters.get("id") ?? "", query: Self.query(request))
        }
        router.post("/assets/:id/transactions") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "tx.add", back: { _, _ in "/assets/\(Pages.pathText(id))/transactions" }) { form in
                var params: [String: JSONValue] = ["asset": .string(id), "amount": .string(WebLocale.input(form["amount"] ?? ""))]
                for field in ["date", "note"] { if let value = Self.filled(form[field]) { params[field] = .string(value) } }
                return params
            } refused: { form, problem in
                var entered: [String: String] = [:]
                for field in ["amount", "date", "note"] { entered[field] = form[field] }
                return await transactions(id, query: [:], entered: entered, problem: problem)
            }
        }
        router.get("/assets/:id/transactions/:tx") { _, context in
            await transaction(context.parameters.get("id") ?? "", context.parameters.get("tx") ?? "")
        }
        router.post("/assets/:id/transactions/:tx") { request, context in
            let id = context.parameters.get("id") ?? "", tx = context.parameters.get("tx") ?? ""
            let back = "/assets/\(Pages.pathText(id))/transactions"
            return await act(request, "tx.update", ask: { form in
                // Nothing changed: nothing to send.
                Self.changes(form, transaction: tx).count == 1 ? Response(status: .seeOther, headers: [.location: back]) : nil
            }, back: { _, _ in back }) { form in
                Self.changes(form, transaction: tx)
            } refused: { form, problem in
                var entered: [String: String] = [:]
                for field in ["amount", "date", "note"] { entered[field] = form[field] }
                return await transaction(id, tx, entered: entered, problem: problem)
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
        for key in ["from", "to", "cursor", "search"] { if let value = Self.filled(query[key]) { params[key] = .string(value) } }
        do {
            async let asset = daemon.call("asset.get", ["asset": .string(id)])
            async let list = daemon.call("tx.list", params)
            let answers = Pages.TransactionsAnswers(asset: try await asset, list: try await list, query: query)
            return WebServer.html(pages.transactions(answers, csrf: csrf, entered: entered, problem: problem?.message), status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }

    func transaction(_ id: String, _ tx: String, entered: [String: String] = [:], problem: DaemonLink.Failure? = nil) async -> Response {
        do {
            async let asset = daemon.call("asset.get", ["asset": .string(id)])
            async let transaction = daemon.call("tx.get", ["transaction": .string(tx)])
            let page = pages.transactionEdit(asset: try await asset, transaction: try await transaction, csrf: csrf, entered: entered,
                                             problem: problem?.message)
            return WebServer.html(page, status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }

    /// What an edit form changed, as `tx.update`'s params: a field is sent only when it differs
    /// from its value as it was shown.
    static func changes(_ form: Form, transaction: String) -> [String: JSONValue] {
        var params: [String: JSONValue] = ["transaction": .string(transaction)]
        let amount = (form["amount"] ?? "").trimmingCharacters(in: .whitespaces)
        if amount != form["was_amount"] { params["amount"] = .string(WebLocale.input(amount)) }
        let day = (form["date"] ?? "").trimmingCharacters(in: .whitespaces)
        if day != form["was_date"] { params["date"] = .string(TransactionDay.moving(form["stamp"] ?? "", to: day) ?? day) }
        // A text field drops line ends and the note is sent trimmed: the note as it was is
        // compared the same way, so a note left alone is not written again.
        let shown = { (text: String?) in (text ?? "").filter { $0 != "\n" && $0 != "\r" }.trimmingCharacters(in: .whitespaces) }
        let note = shown(form["note"])
        if note != shown(form["was_note"]) { params["note"] = .string(note) }
        return params
    }
}
