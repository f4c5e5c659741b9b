import ArgumentParser
import Foundation
import SavingsCore
import SavingsCLI
import SavingsRPC

struct MonthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "month", abstract: "Execute a month: start, follow, complete, undo, history.",
        subcommands: [Start.self, Status.self, Complete.self, UndoStart.self, UndoComplete.self, History.self])

    struct Which: ParsableArguments {
        @Option(help: "YYYY-MM (default the current month).") var month: String?
        var params: [String: JSONValue] { month.map { ["month": .string($0)] } ?? [:] }
    }

    static func run(_ global: GlobalOptions, _ method: String, _ params: [String: JSONValue]) throws {
        let session = try ClientSession(global)
        session.output(try session.call(method, params)) { result in
            result["goals"] != nil ? Views.monthProgress(result, style: .standardOutput) : "\(Render.text(result["month"])) is \(Render.text(result["status"]))"
        }
    }

    struct Start: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "start", abstract: "Start the current month.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var which: Which
        func run() throws { try MonthCommand.run(global, "month.start", which.params) }
    }

    struct Status: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "status", abstract: "Progress of the month.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var which: Which
        func run() throws { try MonthCommand.run(global, "month.progress", which.params) }
    }

    struct Complete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "complete", abstract: "Close the month into a frozen record.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var which: Which
        func run() throws { try MonthCommand.run(global, "month.complete", which.params) }
    }

    struct UndoStart: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "undo-start", abstract: "Return a started month to draft.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var which: Which
        func run() throws { try MonthCommand.run(global, "month.undo_start", which.params) }
    }

    struct UndoComplete: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "undo-complete", abstract: "Reopen a closed month.")
        @OptionGroup var global: GlobalOptions
        @OptionGroup var which: Which
        func run() throws { try MonthCommand.run(global, "month.undo_complete", which.params) }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "history", abstract: "Closed months and their fulfilment.")
        @OptionGroup var global: GlobalOptions
        @Option var from: String?
        @Option var to: String?

        func run() throws {
            var params: [String: JSONValue] = [:]
            if let from { params["from"] = .string(from) }
            if let to { params["to"] = .string(to) }
            let session = try ClientSession(global)
            session.output(try session.call("month.history", params)) { Views.monthHistory($0, style: .standardOutput) }
        }
    }
}

extension GoalCommand {
    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "history", abstract: "Month-by-month contributions as a bar chart.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var goal: String
        @Option(help: "First month, YYYY-MM.") var from: String?
        @Option(help: "Last month, YYYY-MM.") var to: String?

        func run() throws {
            var params: [String: JSONValue] = ["goal": .string(goal)]
            if let from { params["from"] = .string(from) }
            if let to { params["to"] = .string(to) }
            let session = try ClientSession(global)
            session.output(try session.call("goal.history", params)) { result in
                let months = result["months"]?.arrayValue ?? []
                let values = months.map { $0["contributed"]?.stringValue.flatMap { try? Amount.parse($0) } ?? 0 }
                let largest = max(values.map { abs($0) }.max() ?? 0, months.compactMap { $0["planned"]?.stringValue.flatMap { try? Amount.parse($0) } }.max() ?? 0)
                return zip(months, values).map { month, value in
                    let bar = largest > 0 ? Render.bar(.string(Amount.plainText(max(0, value) / largest))).prefix(22) : "[--------------------]"
                    return "\(Render.text(month["month"])) \(bar) \(Render.text(month["contributed"]))"
                        + (month["planned"] == .null ? "" : " / \(Render.text(month["planned"]))")
                }.joined(separator: "\n")
            }
        }
    }
}
