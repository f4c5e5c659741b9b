import ArgumentParser
import SavingsCLI
import SavingsRPC

struct GoalCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "goal", abstract: "Manage savings goals.",
        subcommands: [Add.self, List.self, Show.self, Edit.self, Archive.self, Remove.self, History.self])

    static func describe(_ goal: JSONValue) -> String { Views.goal(goal, style: .standardOutput) }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Create a goal.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "The goal's unique name.") var name: String
        @Option(help: "Target amount (exact decimal).") var target: String
        @Option(help: "Currency code (EUR, BTC, ...).") var currency: String
        @Option(help: "Deadline, YYYY-MM-DD.") var deadline: String
        @Option(name: .customLong("start-date"), help: "Start date, YYYY-MM-DD (default today).") var startDate: String?
        @Option(help: "Notes.") var notes: String?

        func run() throws {
            let session = try ClientSession(global)
            var params: [String: JSONValue] = [
                "name": .string(name), "currency": .string(currency),
                "target_amount": .string(target), "deadline": .string(deadline),
            ]
            if let startDate { params["start_date"] = .string(startDate) }
            if let notes { params["notes"] = .string(notes) }
            session.output(try session.call("goal.create", params)) { "created goal\n" + GoalCommand.describe($0) }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List goals.")
        @OptionGroup var global: GlobalOptions
        @Flag(name: [.customLong("all"), .customShort("a")], help: "Include archived goals.") var all = false

        func run() throws {
            let session = try ClientSession(global)
            let result = try session.call("goal.list", all ? ["include_archived": true] : [:])
            session.output(result) { Views.goalList($0, style: .standardOutput) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one goal.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var goal: String

        func run() throws {
            let session = try ClientSession(global)
            session.output(try session.call("goal.get", ["goal": .string(goal)]), human: GoalCommand.describe)
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit", abstract: "Change a goal.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var goal: String
        @Option(help: "New name.") var name: String?
        @Option(help: "New target amount.") var target: String?
        @Option(help: "New currency code.") var currency: String?
        @Option(help: "New deadline, YYYY-MM-DD.") var deadline: String?
        @Option(name: .customLong("start-date"), help: "New start date, YYYY-MM-DD.") var startDate: String?
        @Option(help: "New notes (\"\" clears them).") var notes: String?

        func run() throws {
            var params: [String: JSONValue] = ["goal": .string(goal)]
            let changes: [(String, String?)] = [("name", name), ("target_amount", target), ("currency", currency),
                                                ("deadline", deadline), ("start_date", startDate), ("notes", notes)]
            for case let (key, value?) in changes { params[key] = .string(value) }
            guard params.count > 1 else {
                throw ClientFailure.usage("nothing to change: give --name, --target, --currency, --deadline, --start-date or --notes")
            }
            let session = try ClientSession(global)
            session.output(try session.call("goal.update", params)) { "updated goal\n" + GoalCommand.describe($0) }
        }
    }

    struct Archive: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "archive", abstract: "Archive a goal (--restore to undo).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var goal: String
        @Flag(help: "Restore an archived goal.") var restore = false

        func run() throws {
            let session = try ClientSession(global)
            let result = try session.call("goal.archive", ["goal": .string(goal), "archived": .bool(!restore)])
            session.output(result) { "\(restore ? "restored" : "archived") goal \($0["name"]?.stringValue ?? goal)" }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a goal for good.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var goal: String

        func run() throws {
            let session = try ClientSession(global)
            let result = try session.call("goal.delete", ["goal": .string(goal)])
            session.output(result) { "deleted goal \($0["goal"]?["name"]?.stringValue ?? goal)" }
        }
    }
}
