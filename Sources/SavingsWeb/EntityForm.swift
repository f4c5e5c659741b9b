import Hummingbird
import SavingsRPC

/// Goals and assets created, changed and archived or deleted from the page: the daemon's own
/// methods over the socket (`goal.create`, `goal.update`, `goal.archive`; `asset.create`,
/// `asset.update`), its refusals shown in the form with what was entered.
struct EntityForm: Sendable {
    struct Field: Sendable {
        enum Input: Sendable { case text(type: String?, inputmode: String?), area, choice([(value: String, label: String)]) }
        var name: String
        var label: String
        var input: Input = .text(type: nil, inputmode: nil)
        var required = true
        var help: String?
        /// What a new one starts with.
        var initial: String?

        /// An amount field (a decimal input mode) is shown and read in the browser's locale.
        var isAmount: Bool { if case .text(_, "decimal"?) = input { true } else { false } }
        func showing(_ value: String) -> String { isAmount ? WebLocale.field(value) : value }
        func reading(_ value: String) -> String { isAmount ? WebLocale.input(value) : value }
    }

    /// "goal" or "asset": the paths (/goals, /assets), the methods, the words.
    var noun: String
    var fields: [Field]
    /// After "Change": a second form that archives (or another last step), its path's last part and words;
    /// with a `question`, it is asked first (the name put for `%@`), and `back` is where it leads after.
    var retire: (path: String, method: String, label: String, help: String, params: [String: JSONValue], question: String?, back: String)?

    var plural: String { noun + "s" }

    /// Where a page about `id` is shown (a goal has a screen of its own; an asset is on the
    /// assets screen), or, for none, where the form was opened from.
    func home(_ id: String?) -> String {
        guard noun == "goal" else { return "/assets" }
        return id.map { "/goals/\(Pages.pathText($0))" } ?? "/"
    }

    static let goal = EntityForm(noun: "goal", fields: [
        Field(name: "name", label: "Name"),
        Field(name: "target_amount", label: "Target", input: .text(type: nil, inputmode: "decimal"), help: "a plain decimal, e.g. 1250.50"),
        Field(name: "currency", label: "Currency", help: "a code: EUR, USD, BTC", initial: "EUR"),
        Field(name: "deadline", label: "Reach it by", input: .text(type: "date", inputmode: nil)),
        Field(name: "notes", label: "Notes", input: .area, required: false),
    ], retire: ("archive", "goal.archive", "Archive this goal", "it leaves the dashboard and the plans; it can be restored", [:], nil, "/"))

    static let asset = EntityForm(noun: "asset", fields: [
        Field(name: "name", label: "Name"),
        Field(name: "kind", label: "Kind", input: .choice([("fiat", "an account (fiat money)"), ("crypto", "a crypto holding")]), initial: "fiat"),
        Field(name: "currency", label: "Currency or coin", help: "a code: EUR, USD, BTC, ETH", initial: "EUR"),
        Field(name: "address", label: "Address", required: false, help: "a wallet address or an account reference (optional)"),
        Field(name: "notes", label: "Notes", input: .area, required: false),
    ], retire: ("delete", "asset.delete", "Delete this asset", "with its transactions and shares, after a question", ["force": true],
                "%@ goes for good, with every transaction of it, its shares among goals and their history; the goals keep only what other assets hold. This cannot be undone: a backup (Backup and export) keeps a copy.",
                "/assets"))

    /// The form's page: for a new one (`id` nil) or for changing `id`.
    func page(_ entered: [String: String], id: String?, csrf: String, problem: String?, pages: Pages) -> String {
        let fields = fields.map { field -> [String: Any] in
            var shown: [String: Any] = ["name": field.name, "label": field.label, "required": field.required, "help": field.help ?? "",
                                        "value": entered[field.name] ?? (id == nil ? field.initial ?? "" : "")]
            switch field.input {
            case .text(let type, let inputmode):
                shown["isText"] = true
                shown["type"] = type ?? ""
                shown["inputmode"] = inputmode ?? ""
            case .area: shown["isArea"] = true
            case .choice(let choices):
                let chosen = entered[field.name] ?? field.initial
                shown["isChoice"] = true
                shown["choices"] = choices.map { ["value": $0.value, "label": $0.label, "selected": $0.value == chosen] }
            }
            return shown
        }
        let name = entered["name"] ?? ""
        var context: [String: Any] = [
            "csrf": csrf, "problem": problem ?? "", "hasProblem": problem != nil, "fields": fields,
            "heading": id == nil ? "New \(noun)" : "Change \(name)",
            "action": id.map { "/\(plural)/\(Pages.pathText($0))/edit" } ?? "/\(plural)/new",
            "submit": id == nil ? "Create the \(noun)" : "Save the changes",
            "cancel": home(id),
        ]
        if let id, let retire {
            context["retire"] = ["action": "/\(plural)/\(Pages.pathText(id))/\(retire.path)", "label": retire.label, "help": retire.help]
        }
        return pages.page(body: pages.render("entityForm", context), title: id == nil ? "New \(noun)" : "Change \(name)")
    }

    static let template = """
        <h1>{{heading}}</h1>
        {{#hasProblem}}<p class="problem" role="alert">{{problem}}</p>{{/hasProblem}}
        <form method="post" action="{{action}}">
        <input type="hidden" name="csrf" value="{{csrf}}">
        {{#fields}}<p><label for="{{name}}">{{label}}</label><br>
        {{#isText}}<input id="{{name}}" name="{{name}}"{{#type}} type="{{type}}"{{/type}}{{#inputmode}} inputmode="{{inputmode}}"{{/inputmode}}{{#required}} required{{/required}} value="{{value}}"{{#help}} aria-describedby="{{name}}-help"{{/help}}>{{/isText}}
        {{#isArea}}<textarea id="{{name}}" name="{{name}}" rows="3">{{value}}</textarea>{{/isArea}}
        {{#isChoice}}<select id="{{name}}" name="{{name}}">{{#choices}}<option value="{{value}}"{{#selected}} selected{{/selected}}>{{label}}</option>{{/choices}}</select>{{/isChoice}}
        {{#help}} <small id="{{name}}-help">{{help}}</small>{{/help}}</p>
        {{/fields}}
        <p><button type="submit">{{submit}}</button> <a href="{{cancel}}">Cancel</a></p>
        </form>
        {{#retire}}<form method="post" action="{{action}}"><input type="hidden" name="csrf" value="{{csrf}}">
        <p><button type="submit">{{label}}</button> <small>{{help}}</small></p></form>{{/retire}}
        """
}

extension Pages {
    /// An id for a path: letters, digits and dashes only (an id is a UUID).
    static func pathText(_ text: String) -> String { String(text.unicodeScalars.filter { $0.properties.isAlphabetic || ("0"..."9").contains($0) || $0 == "-" }) }
}

extension Screens {
    /// The forms' routes for goals and assets: new, change, and for goals archive.
    func addEntityForms(to router: Router<BasicRequestContext>) {
        for form in [EntityForm.goal, EntityForm.asset] { add(form, to: router) }
    }

    private func add(_ form: EntityForm, to router: Router<BasicRequestContext>) {
        let base = "/\(form.plural)"
        @Sendable func entered(_ posted: Form) -> [String: String] {
            Dictionary(uniqueKeysWithValues: form.fields.compactMap { field in posted[field.name].map { (field.name, $0) } })
        }
        @Sendable func shown(_ entered: [String: String], id: String?, problem: DaemonLink.Failure? = nil) -> Response {
            WebServer.html(form.page(entered, id: id, csrf: csrf, problem: problem?.message, pages: pages), status: Self.status(problem))
        }
        router.get(RouterPath(base + "/new")) { _, _ in shown([:], id: nil) }
        router.post(RouterPath(base + "/new")) { request, _ in
            await act(request, "\(form.noun).create", back: { _, result in
                form.home(result["id"]?.stringValue ?? "")
            }) { posted in
                var params: [String: JSONValue] = [:]
                for field in form.fields { if let value = Self.filled(posted[field.name]) { params[field.name] = .string(field.reading(value)) } }
                return params
            } refused: { posted, problem in
                shown(entered(posted), id: nil, problem: problem)
            }
        }
        router.get(RouterPath(base + "/:id/edit")) { _, context in
            let id = context.parameters.get("id") ?? ""
            do {
                let found = try await daemon.call("\(form.noun).get", [form.noun: .string(id)])
                var values: [String: String] = [:]
                for field in form.fields { values[field.name] = found[field.name]?.stringValue.map(field.showing) }
                return shown(values, id: found["id"]?.stringValue ?? id)
            } catch {
                return WebServer.problem(error, pages: pages)
            }
        }
        router.post(RouterPath(base + "/:id/edit")) { request, context in
            let id = context.parameters.get("id") ?? ""
            return await act(request, "\(form.noun).update", back: { _, _ in form.home(id) }) { posted in
                var params: [String: JSONValue] = [form.noun: .string(id)]
                for field in form.fields {
                    // What is optional may be emptied; the rest keeps its value when left empty.
                    if !field.required { params[field.name] = .string(posted[field.name] ?? "") } else if let value = Self.filled(posted[field.name]) {
                        params[field.name] = .string(field.reading(value))
                    }
                }
                return params
            } refused: { posted, problem in
                shown(entered(posted), id: id, problem: problem)
            }
        }
        if let retire = form.retire {
            router.post(RouterPath(base + "/:id/" + retire.path)) { request, context in
                let id = context.parameters.get("id") ?? ""
                return await act(request, retire.method, ask: { posted in
                    guard let question = retire.question, posted["confirm"] != "yes" else { return nil }
                    do {
                        let name = try await daemon.call("\(form.noun).get", [form.noun: .string(id)])["name"]?.stringValue ?? id
                        return WebServer.html(pages.question("\(retire.label.replacingOccurrences(of: "this \(form.noun)", with: name))?",
                                                             question.replacingOccurrences(of: "%@", with: name),
                                                             action: "\(base)/\(Pages.pathText(id))/\(retire.path)", yes: "Yes, \(retire.label.lowercased())",
                                                             back: "\(base)/\(Pages.pathText(id))/edit", csrf: csrf))
                    } catch {
                        return WebServer.problem(error, pages: pages)
                    }
                }, back: { _, _ in retire.back }) { _ in retire.params.merging([form.noun: .string(id)]) { a, _ in a } } refused: { _, problem in
                    WebServer.html(pages.problem(problem.message), status: Self.status(problem))
                }
            }
        }
    }
}
