import Foundation
import ArgumentParser
import SavingsCLI
import SavingsRPC

struct PlanCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "plan", abstract: "Monthly plans: what to put aside for each goal.",
        subcommands: [List.self, Show.self, SetAmount.self, Protect.self, Skip.self, Recalc.self, Flex.self, Stale.self, Resolve.self])

    /// Plans are addressed by id, or by goal name/id and month.
    struct Address: ParsableArguments {
        @Argument(help: "Plan id, or goal name/id.") var plan: String
        @Option(help: "Month (YYYY-MM) when addressing by goal; default the current month.") var month: String?

        var params: [String: JSONValue] {
            var params: [String: JSONValue] = [:]
            if month == nil, plan.count == 36, plan.filter({ $0 == "-" }).count == 4 {
                params["plan"] = .string(plan)
            } else {
                params["goal"] = .string(plan)
                if let month { params["month"] = .string(month) }
            }
            return params
        }
    }

    static func table(_ plans: [JSONValue]) -> String { Views.plans(plans, style: .standardOutput) }

    static func describe(_ plan: JSONValue) -> String {
        Render.fields(plan, ["id", "goal_name", "month", "currency", "required_monthly", "remaining_amount", "months_remaining",
                             "status", "custom_amount", "effective_amount", "planned_amount", "flex_state", "state", "needs_review"])
    }

    static func run(_ global: GlobalOptions, _ method: String, _ params: [String: JSONValue]) throws {
        let session = try ClientSession(global)
        session.output(try session.call(method, params), human: describe)
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "The month's plans (created if missing).")
        @OptionGroup var global: GlobalOptions
        @Option(help: "YYYY-MM (default the current month).") var month: String?

        func run() throws {
            let session = try ClientSession(global)
            session.output(try session.call("plan.list", month.map { ["month": .string($0)] } ?? [:])) { result in
                var text = PlanCommand.table(result["plans"]?.arrayValue ?? [])
                text += "\n\nplanned \(Money.format(result["totals"]?["planned"], result["totals"]?["currency"]))"
                if result["stale_count"]?.intValue ?? 0 > 0 {
                    text += "\n\(Render.text(result["stale_count"])) stale drafts from past months: savingsctl plan stale"
                }
                return text
            }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "One plan.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var address: Address
        func run() throws { try PlanCommand.run(global, "plan.get", address.params) }
    }

    struct SetAmount: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Set your own amount (\"clear\" returns to the requirement).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var address: Address
        @Option(help: "The amount, or clear.") var amount: String

        func run() throws {
            var params = address.params
            params["amount"] = amount == "clear" ? .null : .string(amount)
            try PlanCommand.run(global, "plan.set_amount", params)
        }
    }

    struct Protect: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "protect", abstract: "Protect from flex (--off to undo).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var address: Address
        @Flag var off = false

        func run() throws { try PlanCommand.run(global, "plan.protect", address.params.merging(["protected": .bool(!off)]) { $1 }) }
    }

    struct Skip: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "skip", abstract: "Skip this month (--off to undo).")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var address: Address
        @Flag var off = false

        func run() throws { try PlanCommand.run(global, "plan.skip", address.params.merging(["skipped": .bool(!off)]) { $1 }) }
    }

    struct Recalc: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "recalc", abstract: "Recompute from today's figures; clears your amount.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var address: Address
        func run() throws { try PlanCommand.run(global, "plan.recalculate", address.params) }
    }

    struct Flex: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "flex", abstract: "Scale flexible plans by --factor or to a --budget.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "0.5 to 1.5.") var factor: String?
        @Option(help: "Total to fit, in the display currency.") var budget: String?
        @Option(help: "YYYY-MM (default the current month).") var month: String?
        @Flag(help: "Save the adjusted amounts (default: preview only).") var apply = false

        func run() throws {
            var params: [String: JSONValue] = [:]
            for case let (key, value?) in [("factor", factor), ("budget", budget), ("month", month)] { params[key] = .string(value) }
            let session = try ClientSession(global)
            session.output(try session.call(apply ? "plan.flex_apply" : "plan.flex_preview", params)) { result in
                var table = Table(headers: ["GOAL", "FLEX", "NOW", "ADJUSTED", "CUR"])
                table.rows = (result["plans"]?.arrayValue ?? []).map {
                    [Render.text($0["goal_name"]), Render.text($0["flex_state"]), Render.text($0["effective_amount"]),
                     Render.text($0["adjusted_amount"]), Render.text($0["currency"])]
                }
                var text = table.rendered + "\n\nfactor \(Render.text(result["factor"])), total \(Render.text(result["total"])) \(Render.text(result["currency"]))"
                if result["shortfall"] != .null { text += "\nshortfall \(Render.text(result["shortfall"]))" }
                if result["surplus"] != .null { text += "\nsurplus \(Render.text(result["surplus"]))" }
                return text + (result["applied"] == true ? "\napplied" : "\npreview only (add --apply to save)")
            }
        }
    }

    struct Stale: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "stale", abstract: "Past months' drafts nobody executed.")
        @OptionGroup var global: GlobalOptions
        @Option var page: Int?

        func run() throws {
            let session = try ClientSession(global)
            session.output(try session.call("plan.stale", page.map { ["page": .int($0)] } ?? [:])) { result in
                var text = PlanCommand.table(result["items"]?.arrayValue ?? [])
                text += "\n\npage \(Render.text(result["page"])) of \(Render.text(result["pages"])), \(Render.text(result["total"])) stale"
                for (action, meaning) in (result["actions"]?.objectValue ?? [:]).sorted(by: { $0.key < $1.key }) {
                    text += "\n  \(action): \(Render.text(meaning))"
                }
                return text + "\nresolve with: savingsctl plan resolve PLAN-ID complete|skip|delete"
            }
        }
    }

    struct Resolve: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "resolve", abstract: "Resolve a stale draft.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Plan id.") var plan: String
        @Argument(help: "complete, skip or delete.") var action: String

        func run() throws {
            let session = try ClientSession(global)
            session.output(try session.call("plan.resolve_stale", ["plan": .string(plan), "action": .string(action)])) { _ in
                "\(action): done"
            }
        }
    }
}

struct EventsCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "events", abstract: "Print events as they happen (Ctrl-C to stop).")
    @OptionGroup var global: GlobalOptions
    @Option(name: .customLong("topic"), help: "Only this topic (repeatable).") var topics: [String] = []

    func run() throws {
        let session = try ClientSession(global)
        _ = try session.call("events.subscribe", topics.isEmpty ? [:] : ["topics": .array(topics.map(JSONValue.string))])
        while true {
            let line: String?
            do {
                line = try session.client.connection.readLine(timeoutMilliseconds: -1)
            } catch {
                throw ClientFailure(message: "lost the connection to savingsd: \(error.message)", exitCode: 3)
            }
            guard let line else { throw ClientFailure(message: "savingsd closed the event stream", exitCode: 3) }
            guard let event = try? JSONParser.parse(line), let params = event["params"] else { continue }
            let text = global.json ? JSONSerializer.serialize(params)
                : "\(Render.text(params["at"])) \(Render.text(params["topic"])) \(JSONSerializer.serialize(params["data"] ?? .null))"
            FileHandle.standardOutput.write(Data((text + "\n").utf8))
        }
    }
}
