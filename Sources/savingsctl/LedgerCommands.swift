import ArgumentParser
import SavingsCLI
import SavingsRPC

struct TxCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "tx", abstract: "Record and list transactions.", subcommands: [Add.self, List.self, Edit.self, Remove.self, Import.self])

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Record a deposit (or a withdrawal with a negative amount).")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Asset name or id.") var asset: String
        @Argument(help: "Signed amount in the asset's units.") var amount: String
        @Option(help: "When: YYYY-MM-DD (the start of that day) or an ISO 8601 timestamp (default now).") var date: String?
        @Option(help: "Note.") var note: String?
        @Option(name: .customLong("external-id"), help: "Your id for it (unique per asset).") var externalID: String?

        func run() throws {
            var params: [String: JSONValue] = ["asset": .string(asset), "amount": .string(amount)]
            for case let (key, value?) in [("date", date), ("note", note), ("external_id", externalID)] { params[key] = .string(value) }
            let session = try ClientSession(global)
            session.output(try session.call("tx.add", params)) { tx in
                "recorded \(Render.text(tx["amount"])) on \(asset) at \(Render.text(tx["date"]))"
                    + (tx["auto_allocated_goal_id"] == .null ? "" : " (allocated to its goal automatically)") + "\nid \(Render.text(tx["id"]))"
            }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List transactions, newest first.")
        @OptionGroup var global: GlobalOptions
        @Option(help: "Only this asset.") var asset: String?
        @Option(help: "Only assets of this goal.") var goal: String?
        @Option(help: "From date (YYYY-MM-DD) or timestamp.") var from: String?
        @Option(help: "To date or timestamp.") var to: String?
        @Option(help: "Page size.") var limit: Int?
        @Option(help: "Cursor of the next page.") var cursor: String?
        @Option(help: "Only transactions whose note or external id holds this text, or whose amount is this number.") var search: String?

        func run() throws {
            var params: [String: JSONValue] = [:]
            for case let (key, value?) in [("asset", asset), ("goal", goal), ("from", from), ("to", to), ("cursor", cursor), ("search", search)] {
                params[key] = .string(value)
            }
            if let limit { params["limit"] = .int(limit) }
            let session = try ClientSession(global)
            session.output(try session.call("tx.list", params)) { result in
                let txs = result["transactions"]?.arrayValue ?? []
                guard !txs.isEmpty else { return "no transactions" }
                var table = Table(headers: ["DATE", "AMOUNT", "NOTE", "ID"])
                table.rows = txs.map { [Render.text($0["date"]), Render.text($0["amount"]), Render.text($0["note"]), Render.text($0["id"])] }
                let next = result["next_cursor"].flatMap(\.stringValue).map { "\nmore: --cursor '\($0)'" } ?? ""
                return table.rendered + next
            }
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit", abstract: "Change a transaction's amount, date or note.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Transaction id.") var transaction: String
        @Option(help: "New signed amount in the asset's units.") var amount: String?
        @Option(help: "New date: YYYY-MM-DD (the start of that day) or an ISO 8601 timestamp.") var date: String?
        @Option(help: "New note (\"\" removes it).") var note: String?

        func run() throws {
            var params: [String: JSONValue] = ["transaction": .string(transaction)]
            for case let (key, value?) in [("amount", amount), ("date", date), ("note", note)] { params[key] = .string(value) }
            let session = try ClientSession(global)
            session.output(try session.call("tx.update", params)) { result in
                let tx = result["transaction"] ?? .null
                return "changed transaction \(transaction): \(Render.text(tx["amount"])) at \(Render.text(tx["date"]))"
                    + (tx["note"]?.stringValue.map { ", \($0)" } ?? "")
            }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete a transaction.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Transaction id.") var transaction: String

        func run() throws {
            let session = try ClientSession(global)
            session.output(try session.call("tx.delete", ["transaction": .string(transaction)])) { _ in "deleted transaction \(transaction)" }
        }
    }
}

struct AllocCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "alloc", abstract: "Assign asset amounts to goals.", subcommands: [Set.self, Move.self, List.self, History.self])

    static func lines(_ lines: [JSONValue]) -> String {
        guard !lines.isEmpty else { return "no allocations" }
        var table = Table(headers: ["ASSET", "GOAL", "TARGET", "FUNDED"])
        table.rows = lines.map { [Render.text($0["asset_name"]), Render.text($0["goal_name"]), Render.text($0["amount"]), Render.text($0["funded"])] }
        return table.rendered
    }

    struct Set: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "set", abstract: "Reserve AMOUNT of ASSET for GOAL (0 removes).")
        @OptionGroup var global: GlobalOptions
        @Argument var asset: String
        @Argument var goal: String
        @Argument var amount: String

        func run() throws {
            let session = try ClientSession(global)
            let result = try session.call("allocation.set", ["asset": .string(asset), "goal": .string(goal), "amount": .string(amount)])
            session.output(result) { AllocCommand.lines([$0["allocation"] ?? .null]) + "\nunallocated: \(Render.text($0["asset"]?["unallocated"]))" }
        }
    }

    struct Move: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "move", abstract: "Move AMOUNT of ASSET from one goal to another.")
        @OptionGroup var global: GlobalOptions
        @Argument var asset: String
        @Argument(help: "From goal.") var from: String
        @Argument(help: "To goal.") var to: String
        @Argument var amount: String

        func run() throws {
            let session = try ClientSession(global)
            let result = try session.call("allocation.move", ["asset": .string(asset), "from_goal": .string(from), "to_goal": .string(to),
                                                              "amount": .string(amount)])
            session.output(result) { AllocCommand.lines([$0["from"] ?? .null, $0["to"] ?? .null]) }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List allocations.")
        @OptionGroup var global: GlobalOptions
        @Option var asset: String?
        @Option var goal: String?

        func run() throws {
            var params: [String: JSONValue] = [:]
            if let asset { params["asset"] = .string(asset) }
            if let goal { params["goal"] = .string(goal) }
            let session = try ClientSession(global)
            session.output(try session.call("allocation.list", params)) { AllocCommand.lines($0["allocations"]?.arrayValue ?? []) }
        }
    }

    struct History: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "history", abstract: "Allocation changes over time.")
        @OptionGroup var global: GlobalOptions
        @Option var asset: String?
        @Option var goal: String?
        @Option var from: String?
        @Option var to: String?

        func run() throws {
            var params: [String: JSONValue] = [:]
            for case let (key, value?) in [("asset", asset), ("goal", goal), ("from", from), ("to", to)] { params[key] = .string(value) }
            let session = try ClientSession(global)
            session.output(try session.call("allocation.history", params)) { result in
                let rows = result["history"]?.arrayValue ?? []
                guard !rows.isEmpty else { return "no allocation history" }
                var table = Table(headers: ["TIME", "ASSET", "GOAL", "TARGET"])
                table.rows = rows.map { [Render.text($0["timestamp"]), Render.text($0["asset_id"]), Render.text($0["goal_id"]), Render.text($0["amount"])] }
                return table.rendered
            }
        }
    }
}
