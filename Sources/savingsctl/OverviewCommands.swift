import ArgumentParser
import SavingsCLI
import SavingsRPC

struct ContributeCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "contribute", abstract: "Record money saved for a goal in one step.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Goal name or id.") var goal: String
    @Argument(help: "Amount (in the goal's currency unless --asset says otherwise).") var amount: String
    @Option(help: "The asset that received it.") var asset: String?
    @Option(help: "When, ISO 8601 (default now).") var date: String?
    @Option(help: "Note.") var note: String?

    func run() throws {
        var params: [String: JSONValue] = ["goal": .string(goal), "amount": .string(amount)]
        for case let (key, value?) in [("asset", asset), ("date", date), ("note", note)] { params[key] = .string(value) }
        let session = try ClientSession(global)
        session.output(try session.call("goal.contribute", params)) { result in
            let goal = result["goal"] ?? .null
            return (result["asset_created"] == true ? "created asset \(Render.text(result["asset"]?["name"]))\n" : "")
                + "\(Render.text(goal["name"])): \(Render.bar(goal["progress"])) \(Render.text(goal["current_total"])) / "
                + "\(Render.text(goal["target_amount"])) \(Render.text(goal["currency"]))\n"
                + "contribution \(Render.text(result["contribution_id"])) (undo with: savingsctl undo-contribution ID)"
        }
    }
}

struct UndoContributionCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "undo-contribution", abstract: "Revert a contribution within the undo window.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The contribution id.") var id: String

    func run() throws {
        let session = try ClientSession(global)
        session.output(try session.call("goal.undo_contribution", ["contribution_id": .string(id)])) { result in
            "undone; \(Render.text(result["goal"]?["name"])) is at \(Render.text(result["goal"]?["current_total"]))"
        }
    }
}

struct RatesCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "rates", abstract: "Exchange rates.", subcommands: [Set.self, List.self, Convert.self])

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Record 1 BASE = RATE QUOTE.")
        @OptionGroup var global: GlobalOptions
        @Argument var base: String
        @Argument var quote: String
        @Argument var rate: String
        @Option(name: .customLong("as-of"), help: "When the rate was true (ISO 8601).") var asOf: String?

        func run() throws {
            var params: [String: JSONValue] = ["base": .string(base), "quote": .string(quote), "rate": .string(rate)]
            if let asOf { params["as_of"] = .string(asOf) }
            let session = try ClientSession(global)
            session.output(try session.call("rates.set", params)) { "1 \(Render.text($0["base"])) = \(Render.text($0["rate"])) \(Render.text($0["quote"]))" }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "Current rates (or --history).")
        @OptionGroup var global: GlobalOptions
        @Flag(help: "Every recorded rate.") var history = false

        func run() throws {
            let session = try ClientSession(global)
            session.output(try session.call("rates.list", history ? ["history": true] : [:])) { Views.rates($0, style: .standardOutput) }
        }
    }

    struct Convert: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "convert", abstract: "Convert AMOUNT FROM TO.")
        @OptionGroup var global: GlobalOptions
        @Argument var amount: String
        @Argument var from: String
        @Argument var to: String

        func run() throws {
            let session = try ClientSession(global)
            let result = try session.call("rates.convert", ["amount": .string(amount), "from": .string(from), "to": .string(to)])
            session.output(result) {
                "\(amount) \(from.uppercased()) = \(Render.text($0["result"])) \(to.uppercased()) "
                    + "(rate \(Render.text($0["rate"])), \(Render.age($0["age_seconds"])) old, via \($0["path"]?.arrayValue?.map(Render.text).joined(separator: " ") ?? "-"))"
            }
        }
    }
}

struct DashboardCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "dashboard", abstract: "Every goal's progress and the totals.")
    @OptionGroup var global: GlobalOptions
    @Option(help: "Totals in this currency.") var currency: String?

    func run() throws {
        let session = try ClientSession(global)
        session.output(try session.call("dashboard.get", currency.map { ["currency": .string($0)] } ?? [:])) {
            Views.dashboard($0, style: .standardOutput)
        }
    }
}
