import Hummingbird
import SavingsRPC

/// A goal created, changed or archived from the page: `goal.create`, `goal.update` and
/// `goal.archive` over the socket, the daemon's refusals shown in the form with what was entered.
extension Pages {
    /// The fields of the goal form, as entered or as the goal has them.
    static let goalFields = ["name", "currency", "target_amount", "deadline", "notes"]

    /// The form for a new goal (`id` nil) or for changing goal `id`.
    func goalForm(_ entered: [String: String], id: String?, csrf: String, problem: String? = nil) -> String {
        var context: [String: Any] = ["csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "editing": id != nil,
                                      "action": id.map { "/goals/\(Self.pathText($0))/edit" } ?? "/goals/new", "id": id ?? ""]
        for field in Self.goalFields { context[field] = entered[field] ?? "" }
        if entered["currency"] == nil, id == nil { context["currency"] = "EUR" }
        return page(body: render("goalForm", context), title: id == nil ? "New goal" : "Change \(entered["name"] ?? "the goal")")
    }

    /// An id for a path: letters, digits and dashes only (an id is a UUID).
    static func pathText(_ text: String) -> String { String(text.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" }) }

    static let goalFormTemplate = """
        <h1>{{#editing}}Change {{name}}{{/editing}}{{^editing}}New goal{{/editing}}</h1>
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        <form method="post" action="{{action}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        <p><label for="name">Name</label><br><input id="name" name="name" required maxlength="200" value="{{name}}"></p>
        <p><label for="target_amount">Target</label><br><input id="target_amount" name="target_amount" inputmode="decimal" required
           value="{{target_amount}}" aria-describedby="target-help"> <small id="target-help">a plain decimal, e.g. 1250.50</small></p>
        <p><label for="currency">Currency</label><br><input id="currency" name="currency" required maxlength="10" value="{{currency}}"
           aria-describedby="currency-help"> <small id="currency-help">a code: EUR, USD, BTC</small></p>
        <p><label for="deadline">Reach it by</label><br><input id="deadline" name="deadline" type="date" required value="{{deadline}}"></p>
        <p><label for="notes">Notes</label><br><textarea id="notes" name="notes" rows="3">{{notes}}</textarea></p>
        <p><button type="submit">{{#editing}}Save the changes{{/editing}}{{^editing}}Create the goal{{/editing}}</button>
        <a href="{{#editing}}/goals/{{id}}{{/editing}}{{^editing}}/{{/editing}}">Cancel</a></p>
        </form>
        {{#editing}}
        <form method="post" action="/goals/{{id}}/archive"><input type="hidden" name="csrf" value="{{csrf}}">
        <p><button type="submit">Archive this goal</button> <small>it leaves the dashboard and the plans; it can be restored</small></p></form>
        {{/editing}}
        """
}

extension Screens {
    /// The goal form's routes: new, change, archive.
    func addGoalForms(to router: Router<BasicRequestContext>) {
        router.get("/goals/new") { _, _ in WebServer.html(pages.goalForm([:], id: nil, csrf: csrf)) }
        router.post("/goals/new") { request, _ in
            await act(request, "goal.create", back: { _, result in "/goals/\(Pages.pathText(result["id"]?.stringValue ?? ""))" }) { form in
                var params: [String: JSONValue] = [:]
                for field in Pages.goalFields { if let value = Self.filled(form[field]) { params[field] = .string(value) } }
                return params
            } refused: { form, problem in
                WebServer.html(pages.goalForm(Self.goalEntered(form), id: nil, csrf: csrf, problem: problem.message), status: Self.status(problem))
            }
        }
        router.get("/goals/:id/edit") { _, context in
            let id = context.parameters.get("id") ?? ""
            do {
                let goal = try await daemon.call("goal.get", ["goal": .string(id)])
                var entered: [String: String] = [:]
                for field in Pages.goalFields { entered[field] = goal[field]?.stringValue }
                return WebServer.html(pages.goalForm(entered, id: goal["id"]?.stringValue ?? id, csrf: csrf))
            } catch {
                return WebServer.problem(error, pages: pages)
            }
        }
        router.post("/goals/:id/edit") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "goal.update", back: { _, _ in "/goals/\(Pages.pathText(id))" }) { form in
                var params: [String: JSONValue] = ["goal": .string(id)]
                for field in Pages.goalFields {
                    // Notes may be emptied; the other fields keep their value when left empty.
                    if field == "notes" { params[field] = .string(form[field] ?? "") } else if let value = Self.filled(form[field]) { params[field] = .string(value) }
                }
                return params
            } refused: { form, problem in
                WebServer.html(pages.goalForm(Self.goalEntered(form), id: id, csrf: csrf, problem: problem.message), status: Self.status(problem))
            }
        }
        router.post("/goals/:id/archive") { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "goal.archive", back: { _, _ in "/" }) { _ in ["goal": .string(id)] } refused: { _, problem in
                WebServer.html(pages.problem(problem.message), status: Self.status(problem))
            }
        }
    }

    /// The goal form's fields as entered.
    static func goalEntered(_ form: Form) -> [String: String] {
        var entered: [String: String] = [:]
        for field in Pages.goalFields { entered[field] = form[field] }
        return entered
    }
}
