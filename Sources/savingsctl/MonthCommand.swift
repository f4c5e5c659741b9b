import ArgumentParser
import Foundation
import SavingsCore
import SavingsRPC

struct MonthCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "month", abstract: "Execute a month: start, follow, complete, undo, history.",
        subcommands: [Start.self, Status.self, Complete.self, UndoStart.self, UndoComplete.self, History.self])

    struct Which: ParsableArguments {
        @Option(help: "YYYY-MM (default the current month).") var month: String?
        var params: [String: JSONValue] { month.map { ["month": .string($0)] } ?? [:] }
    }

    /// Each goal as a bar of contributed / planned, then the derived events.
    static func describe(_ progress: JSONValue) -> String {
        var text = "\(Render.text(progress["month"])) \(Render.text(progress["status"]))"
            + " since \(Render.text(progress["started_at"]))"
        var table = Table(headers: ["GOAL", "PROGRESS", "CONTRIBUTED", "PLANNED", "CUR", ""])
        table.rows = (progress["goals"]?.arrayValue ?? []).map { goal in
            let percent = goal["percent"]?.stringValue.flatMap { try? Amount.parse($0) }.map { $0 / 100 }
            return [Render.text(goal["goal_name"]), Render.bar(percent.map { .string(Amount.plainText(min($0, 1))) } ?? "1"),
                    Render.text(goal["contributed"]), Render.text(goal["planned"]), Render.text(goal["currency"]),
                    goal["fulfilled"] == true ? "fulfilled" : ""]
        }
        text += "\n\n" + table.rendered
        text += "\n\ntotal \(Render.text(progress["totals"]?["contributed"])) of \(Render.text(progress["totals"]?["planned"])) \(Render.text(progress["totals"]?["currency"]))"
        let events = progress["events"]?.arrayValue ?? []
        if !events.isEmpty {
            var list = Table(headers: ["AT", "KIND", "GOAL", "AMOUNT"])
            list.rows = events.map { [Render.text($0["at"]), Render.text($0["kind"]), Render.text($0["goal_id"]), Render.text($0["goal_amount"])] }
            text += "\n\n" + list.rendered
        }
        return text
    }

    static func run(_ global: GlobalOptions, _ method: String, _ params: [String: JSONValue]) throws {
        let session = try ClientSession(global)
        session.output(try session.call(method, params)) { result in
            result["goals"] != nil ? describe(result) : "\(Render.text(result["month"])) is \(Render.text(result["status"]))"
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
            session.output(try session.call("month.history", params)) { result in
                var table = Table(headers: ["MONTH", "CONTRIBUTED", "PLANNED", "FULFILMENT"])
                table.rows = (result["months"]?.arrayValue ?? []).map {
                    [Render.text($0["month"]), Render.text($0["totals"]?["contributed"]), Render.text($0["totals"]?["planned"]),
                     Render.text($0["fulfilment_percent"]) + "%"]
                }
                return table.rows.isEmpty ? "no closed months" : table.rendered
            }
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
