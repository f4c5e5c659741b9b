import Hummingbird
import SavingsRPC

/// The rates screen (`rates.list`): every pair's rate with its source and age, stale ones
/// marked; and a manual rate set from the page (`rates.set`).
extension Pages {
    func rates(_ answer: JSONValue, csrf: String, entered: [String: String] = [:], problem: String? = nil) -> String {
        let text = { (value: JSONValue?) in value?.stringValue ?? "" }
        let rates = (answer["rates"]?.arrayValue ?? []).map { rate -> [String: Any] in
            ["base": text(rate["base"]), "quote": text(rate["quote"]), "rate": Self.money(rate["rate"]),
             "provider": text(rate["provider"]), "age": HumanTime.describe(text(rate["as_of"])), "stale": rate["stale"]?.boolValue == true]
        }
        let context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "rates": rates, "noRates": rates.isEmpty,
            "base": entered["base"] ?? "", "quote": entered["quote"] ?? "", "rate": entered["rate"] ?? "",
        ]
        return page(body: render("rates", context), title: "Rates")
    }

    static let ratesTemplate = """
        <h1>Exchange rates</h1>
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        {{#noRates}}<p>No rates yet: savingsd fetches them on its schedule, or set one below.</p>{{/noRates}}
        {{^noRates}}<div class="scroll" role="region" aria-labelledby="rates-h" tabindex="0"><table><caption id="rates-h">Current rates</caption>
        <thead><tr><th scope="col">Pair</th><th scope="col" class="num">Rate</th><th scope="col">Source</th><th scope="col">As of</th></tr></thead>
        <tbody>{{#rates}}<tr><th scope="row">1 {{base}} in {{quote}}</th><td class="num">{{rate}}</td><td>{{provider}}</td><td>{{age}}{{#stale}} (stale){{/stale}}</td></tr>{{/rates}}</tbody>
        </table></div>{{/noRates}}
        <section aria-labelledby="set-h"><h2 id="set-h">Set a rate by hand</h2>
        <form method="post" action="/rates">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="base">1 unit of</label><br><input id="base" name="base" required maxlength="10" value="{{base}}" aria-describedby="base-help">
        <small id="base-help">a code: BTC, USD</small></p>
        <p><label for="quote">is worth, in</label><br><input id="quote" name="quote" required maxlength="10" value="{{quote}}"></p>
        <p><label for="rate">this many</label><br><input id="rate" name="rate" inputmode="decimal" required value="{{rate}}" aria-describedby="rate-help">
        <small id="rate-help">a plain decimal, e.g. 61250.50</small></p>
        <p><button type="submit">Set the rate</button></p>
        </form></section>
        """
}

extension Screens {
    func addRates(to router: Router<BasicRequestContext>) {
        router.get("/rates") { _, _ in await rates() }
        router.post("/rates") { request, _ in
            await act(request, "rates.set", back: { _, _ in "/rates" }) { form in
                var params: [String: JSONValue] = [:]
                for field in ["base", "quote"] { params[field] = .string(form[field] ?? "") }
                params["rate"] = .string(WebLocale.input(form["rate"] ?? ""))
                return params
            } refused: { form, problem in
                var entered: [String: String] = [:]
                for field in ["base", "quote", "rate"] { entered[field] = form[field] }
                return await rates(entered: entered, problem: problem)
            }
        }
    }

    func rates(entered: [String: String] = [:], problem: DaemonLink.Failure? = nil) async -> Response {
        do {
            let answer = try await daemon.call("rates.list")
            return WebServer.html(pages.rates(answer, csrf: csrf, entered: entered, problem: problem?.message), status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }
}
