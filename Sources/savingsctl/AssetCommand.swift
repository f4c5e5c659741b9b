import ArgumentParser
import SavingsCLI
import SavingsRPC

struct AssetCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "asset", abstract: "Manage assets (crypto holdings and fiat accounts).",
        subcommands: [Add.self, List.self, Show.self, Edit.self, Remove.self, WatchCommand.self, UnwatchCommand.self, LinkCommand.self, UnlinkCommand.self, SyncCommand.self])

    static func describe(_ asset: JSONValue) -> String { Views.asset(asset, style: .standardOutput) }

    struct Add: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "add", abstract: "Create an asset.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Unique name.") var name: String
        @Option(help: "Currency or coin (BTC, EUR).") var currency: String
        @Option(help: "crypto or fiat.") var kind: String
        @Option(help: "Wallet address or account reference.") var address: String?
        @Option(help: "Notes.") var notes: String?

        func run() throws {
            let session = try ClientSession(global)
            var params: [String: JSONValue] = ["name": .string(name), "currency": .string(currency), "kind": .string(kind)]
            if let address { params["address"] = .string(address) }
            if let notes { params["notes"] = .string(notes) }
            session.output(try session.call("asset.create", params)) { "created asset\n" + AssetCommand.describe($0) }
        }
    }

    struct List: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "list", abstract: "List assets.")
        @OptionGroup var global: GlobalOptions

        func run() throws {
            let session = try ClientSession(global)
            session.output(try session.call("asset.list")) { Views.assetList($0, style: .standardOutput) }
        }
    }

    struct Show: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "show", abstract: "Show one asset.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var asset: String

        func run() throws {
            let session = try ClientSession(global)
            session.output(try session.call("asset.get", ["asset": .string(asset)]), human: AssetCommand.describe)
        }
    }

    struct Edit: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "edit", abstract: "Change an asset.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var asset: String
        @Option(help: "New name.") var name: String?
        @Option(help: "New currency (only without history).") var currency: String?
        @Option(help: "crypto or fiat.") var kind: String?
        @Option(help: "New address (\"\" clears it).") var address: String?
        @Option(help: "New notes (\"\" clears them).") var notes: String?

        func run() throws {
            var params: [String: JSONValue] = ["asset": .string(asset)]
            for case let (key, value?) in [("name", name), ("currency", currency), ("kind", kind), ("address", address), ("notes", notes)] {
                params[key] = .string(value)
            }
            guard params.count > 1 else { throw ClientFailure.usage("nothing to change: give --name, --currency, --kind, --address or --notes") }
            let session = try ClientSession(global)
            session.output(try session.call("asset.update", params)) { "updated asset\n" + AssetCommand.describe($0) }
        }
    }

    struct Remove: ParsableCommand {
        static let configuration = CommandConfiguration(commandName: "rm", abstract: "Delete an asset.")
        @OptionGroup var global: GlobalOptions
        @Argument(help: "Name or id.") var asset: String
        @Flag(help: "Also delete its transactions and allocations.") var force = false

        func run() throws {
            let session = try ClientSession(global)
            let result = try session.call("asset.delete", ["asset": .string(asset), "force": .bool(force)])
            session.output(result) { "deleted asset \(Render.text($0["asset"]?["name"]))" }
        }
    }
}
