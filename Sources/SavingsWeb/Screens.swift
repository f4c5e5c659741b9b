import Foundation
import HTTPTypes
import Hummingbird
import SavingsCore
import SavingsRPC

/// The screens and the forms they post. Every change is a POST the guard has checked (cookie,
/// origin, CSRF token); done, it answers with a redirect (Post/Redirect/Get); refused, the screen
/// again with the daemon's message and next step.
struct Screens: Sendable {
    let daemon: DaemonLink
    let pages: Pages
    let state: AccessBox
    let dashboardRows = DashboardRows()
    let pending = PendingFiles()
    let recentMonths = RecentMonths()

    /// A rendered page's forms' `csrf` field: the session's token and an id of the page's own.
    var csrf: String { state.access?.formField ?? "" }

    func add(to router: Router<BasicRequestContext>) {
        router.get("/") { request, _ in await dashboard(notice: Self.notice(Self.query(request))) }
        router.get("/assets") { _, _ in await assets() }
        // A goal's screen links here with the goal chosen.
        router.get("/saved") { request, _ in await saved(entered: Self.query(request).filter { $0.key == "goal" }) }
        router.post("/saved") { request, _ in
            // Done, the dashboard shows the new figures; refused, the form keeps what was entered.
            // Recorded, the dashboard says so with an Undo (the daemon's undo window).
            await act(request, "goal.contribute", back: { form, result in
                let goal = result["goal"]?["name"]?.stringValue ?? form["goal"] ?? ""
                let amount = [form["amount"], result["goal"]?["currency"]?.stringValue].compactMap { $0 }.joined(separator: " ")
                let id = result["contribution_id"]?.stringValue ?? ""
                return "/?saved=\(Self.queryText(id))&amount=\(Self.queryText(amount))&goal=\(Self.queryText(goal))"
            }) { form in
                var params = Self.entered(form).mapValues(JSONValue.string)
                // A number typed in the browser's way ("12,50"); "plan" and "half" as they are.
                if let amount = Self.filled(form["amount"]), amount != "plan", amount != "half" { params["amount"] = .string(WebLocale.input(amount)) }
                return params
            } refused: { form, problem in
                await saved(entered: Self.entered(form), problem: problem)
            }
        }
        router.post("/saved/undo") { request, _ in
            await act(request, "goal.undo_contribution", back: { _, _ in "/?undone=1" }) { form in
                ["contribution_id": .string(form["contribution"] ?? "")]
            } refused: { _, problem in
                await dashboard(notice: .init(problem: problem.message))
            }
        }
        addEntityForms(to: router)
        addRates(to: router)
        addTransactions(to: router)
        addAllocations(to: router)
        addWatch(to: router)
        addLink(to: router)
        addImport(to: router)
        addData(to: router)
        router.get("/goals/:id") { _, context in await goal(context.parameters.get("id") ?? "") }
        router.get("/months.svg") { request, _ in await monthsPicture(query: Self.query(request)) }
        router.get("/plans") { request, _ in await planning(Self.query(request)) }
        router.get("/month") { _, _ in await month() }

        planningForm(router, "/plans/amount", "plan.set_amount", anchor: { "plan-\($0["plan"] ?? "")" }) { form in
            ["plan": .string(form["plan"] ?? ""), "amount": Self.filled(form["amount"]).map { .string(WebLocale.input($0)) } ?? .null]
        }
        for (path, method, flag) in [("/plans/protect", "plan.protect", "protected"), ("/plans/skip", "plan.skip", "skipped")] {
            planningForm(router, path, method, anchor: { "plan-\($0["plan"] ?? "")" }) { form in
                ["plan": .string(form["plan"] ?? ""), flag: .bool(form[flag] == "true")]
            }
        }
        planningForm(router, "/plans/flex", "plan.flex_apply", anchor: { _ in "flex-h" }) { form in
            var params = Self.filled(form["budget"]).map { ["budget": JSONValue.string(WebLocale.input($0))] } ?? ["factor": .string(form["factor"] ?? "")]
            params["month"] = Self.filled(form["month"]).map(JSONValue.string)
            return params
        }
        planningForm(router, "/plans/stale", "plan.resolve_stale", anchor: { _ in "stale-h" }) { form in
            ["plan": .string(form["plan"] ?? ""), "action": .string(form["action"] ?? "")]
        }
        // Completing a month asks first: the form without confirm=yes shows the question.
        router.post("/month/complete") { request, _ in
            await act(request, "month.complete", ask: { form in form["confirm"] == "yes" ? nil : await month(confirming: true) },
                      back: { _, _ in "/month" }) { _ in [:] } refused: { _, problem in await month(problem: problem) }
        }
        for (path, method) in [("/month/start", "month.start"),
                               ("/month/undo-start", "month.undo_start"), ("/month/undo-complete", "month.undo_complete")] {
            router.post(RouterPath(path)) { request, _ in
                await act(request, method, back: { _, _ in "/month" }) { _ in [:] } refused: { _, problem in await month(problem: problem) }
            }
        }
    }

    /// What the dashboard says on top after "I saved" (`saved`, `amount`, `goal`) or its undo
    /// (`undone`), from the address it was sent to.
    static func notice(_ query: [String: String]) -> Pages.Notice? {
        if query["undone"] != nil { return .init(undone: true) }
        guard let id = filled(query["saved"]) else { return nil }
        return .init(saved: (id, query["amount"] ?? "", query["goal"] ?? ""))
    }

    /// The "I saved" form's fields as entered (the empty ones left out).
    static func entered(_ form: Form) -> [String: String] {
        var entered: [String: String] = [:]
        for name in ["goal", "amount", "asset", "note"] { entered[name] = filled(form[name]) }
        return entered
    }

    /// A planning form posted to `path`: `method` with what `params` makes of it; back to the
    /// month it was shown for (its `month` field), at `anchor`.
    func planningForm(_ router: Router<BasicRequestContext>, _ path: String, _ method: String, anchor: @escaping @Sendable (Form) -> String,
                  params: @escaping @Sendable (Form) -> [String: JSONValue]) {
        router.post(RouterPath(path)) { request, _ in
            await act(request, method, back: { form, _ in
                let month = Self.filled(form["month"]).map { "?month=\(Self.queryText($0))" } ?? ""
                return "/plans\(month)#\(Self.queryText(anchor(form)))"
            }, params: params) { form, problem in
                await planning(Self.filled(form["month"]).map { ["month": $0] } ?? [:], problem: problem)
            }
        }
    }

    // MARK: Screens

    func dashboard(notice: Pages.Notice? = nil) async -> Response {
        do {
            let (answer, goals) = try DashboardRows.split(try await daemon.keptAnswer("dashboard.get", ["goal_fields": DashboardRows.fields]))
            let rows = try dashboardRows.rows(goals, rest: answer)
            // The closed months' picture is an image of its own, read when the browser asks for it.
            let months = recentMonths.known(current: answer["month"])?.goals.isEmpty == true ? nil : RecentMonths.query(current: answer["month"])
            return Response(status: notice?.problem == nil ? .ok : .unprocessableContent, headers: [.contentType: "text/html; charset=utf-8"],
                            body: .init(byteBuffer: pages.dashboard(answer, rows: rows, csrf: csrf, notice: notice, months: months)))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }

    /// The goals' last closed months as one picture (the dashboard links it), for the current
    /// month its link names (`month`, `status`).
    func monthsPicture(query: [String: String]) async -> Response {
        let current: JSONValue = ["month": .string(query["month"] ?? ""), "status": .string(query["status"] ?? "")]
        guard let months = await recentMonths.months(current: current, daemon: daemon) else {
            return WebServer.html(pages.problem("There is no such picture."), status: .notFound)
        }
        return WebServer.asset(Pictures.closedMonths(months), type: "image/svg+xml")
    }

    func assets() async -> Response {
        do {
            return WebServer.html(pages.assets(try await daemon.call("asset.list")))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }

    /// The "I saved" form, with what was entered and the daemon's refusal of it.
    func saved(entered: [String: String], problem: DaemonLink.Failure? = nil) async -> Response {
        do {
            async let goals = daemon.call("goal.list")
            async let assets = daemon.call("asset.list")
            let page = pages.saved(goals: try await goals, assets: try await assets, csrf: csrf, entered: entered, problem: problem?.message)
            return WebServer.html(page, status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }

    func goal(_ id: String) async -> Response {
        let reference: [String: JSONValue] = ["goal": .string(id)]
        do {
            // The month's plans are made when first asked for (plan.list); the goal's is shown
            // even when this screen is the first to ask, and its month's history then has it.
            var plan = try await absentAllowed("plan.get", reference)
            if plan == nil {
                plan = try await daemon.call("plan.list")["plans"]?.arrayValue?.first { $0["goal_id"]?.stringValue == id || $0["goal_name"]?.stringValue == id }
            }
            async let goal = daemon.call("goal.get", reference)
            async let history = daemon.call("goal.history", reference)
            async let allocations = daemon.call("allocation.list", reference)
            async let progress = absentAllowed("month.progress")
            let answers = Pages.GoalAnswers(goal: try await goal, history: try await history, allocations: try await allocations,
                                            plan: plan, progress: try await progress)
            return WebServer.html(pages.goal(answers))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }

    func planning(_ query: [String: String], problem: DaemonLink.Failure? = nil) async -> Response {
        let factor = Self.filled(query["factor"]), budget = Self.filled(query["budget"])
        // A month other than the current one: plan ahead, or look back (read only).
        let month: [String: JSONValue] = Self.filled(query["month"]).map { ["month": .string($0)] } ?? [:]
        let stalePage = Int(query["stale"] ?? "").map { max($0, 1) } ?? 1
        var problem = problem
        do {
            async let plans = daemon.call("plan.list", month)
            async let stale = daemon.call("plan.stale", ["page": .number(String(stalePage))])
            var preview: JSONValue?
            if factor != nil || budget != nil {
                do {
                    let asked: [String: JSONValue] = budget.map { ["budget": .string(WebLocale.input($0))] } ?? ["factor": .string(factor ?? "1")]
                    preview = try await daemon.call("plan.flex_preview", asked.merging(month) { $1 })
                } catch {
                    // The plans are still shown, with why the preview was refused.
                    problem = problem ?? error
                }
            }
            let answers = Pages.PlanningAnswers(plans: try await plans, preview: preview, stale: try await stale,
                                                factor: preview?["factor"]?.stringValue ?? factor ?? "1", budget: budget ?? "")
            return WebServer.html(pages.planning(answers, csrf: csrf, problem: problem?.message), status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }

    func month(problem: DaemonLink.Failure? = nil, confirming: Bool = false) async -> Response {
        do {
            async let plans = daemon.call("plan.list")
            async let progress = absentAllowed("month.progress")
            async let history = daemon.call("month.history")
            let shown = try await progress
            let until = shown?["can_undo_until"]?.stringValue.flatMap(Self.instant)
            let answers = Pages.MonthAnswers(plans: try await plans, progress: shown, history: try await history,
                                             canUndo: until.map { $0 > Date() } ?? false)
            return WebServer.html(pages.month(answers, csrf: csrf, problem: problem?.message, confirming: confirming), status: Self.status(problem))
        } catch {
            return WebServer.problem(error, pages: pages)
        }
    }

    // MARK: Helpers

    /// Calls `method` with what `params` makes of the posted form; done, a redirect to `back`;
    /// refused, `refused` with the daemon's reason. `ask` may answer first instead (a question
    /// to confirm before the change).
    func act(_ request: Request, _ method: String, ask: ((Form) async -> Response?)? = nil, back: (Form, JSONValue) -> String,
             params: (Form) -> [String: JSONValue], refused: (Form, DaemonLink.Failure) async -> Response) async -> Response {
        guard let form = await Self.form(request) else {
            return WebServer.html(pages.problem("The form is larger than 64 KiB."), status: .contentTooLarge)
        }
        if let ask, let question = await ask(form) { return question }
        do {
            let result = try await daemon.call(method, params(form))
            return Response(status: .seeOther, headers: [.location: back(form, result)])
        } catch {
            return await refused(form, error)
        }
    }

    /// `method`'s answer, where its refusal as `not_found` means there is nothing to show (a draft month has no
    /// progress, an archived goal no plan); any other failure is one.
    func absentAllowed(_ method: String, _ params: [String: JSONValue] = [:]) async throws(DaemonLink.Failure) -> JSONValue? {
        do {
            return try await daemon.call(method, params)
        } catch where error.kind == "not_found" {
            return nil
        }
    }

    /// A refused change's status: 403 for a read-only member, 422 for the rest; 200 without one.
    static func status(_ problem: DaemonLink.Failure?) -> HTTPResponse.Status {
        guard let problem else { return .ok }
        return problem.kind == "read_only" ? .forbidden : .unprocessableContent
    }

    /// The request's query fields (the first of each name).
    static func query(_ request: Request) -> [String: String] {
        Dictionary(request.uri.queryParameters.map { (String($0.key), String($0.value)) }, uniquingKeysWith: { first, _ in first })
    }

    /// Text for a URL's query: everything but unreserved characters percent-encoded.
    static func queryText(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics.union(CharacterSet(charactersIn: "-._~"))) ?? ""
    }

    /// A form or query value, nil when empty.
    static func filled(_ value: String?) -> String? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        return value
    }

    /// An instant as the daemon writes them, read by the same code.
    static func instant(_ text: String) -> Date? {
        try? Timestamp.parse(text, field: "can_undo_until")
    }
}
