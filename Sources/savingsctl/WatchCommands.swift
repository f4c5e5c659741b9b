import ArgumentParser
import Foundation
import SavingsCLI
import SavingsRPC

/// `savingsctl asset watch|unwatch|sync`: crypto assets that read their transactions from a
/// chain (SPEC 10).
struct WatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "watch", abstract: "Watch a chain for an asset: an extended public key or addresses (never a private key).",
        discussion: """
            The key or addresses go only to the provider configured for the chain ([onchain.CHAIN] in the \
            configuration): point it at your own Blockbook or electrs, or through Tor with proxy.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The asset's name or id.") var asset: String
    @Option(help: "bitcoin, bitcoin-testnet, litecoin or ethereum.") var chain: String
    @Option(help: "An extended public key (xpub, ypub, zpub; tpub, vpub; Ltub, Mtub).") var xpub: String?
    @Option(name: .customLong("address"), help: "An address to watch (repeat for several).") var addresses: [String] = []
    @Option(help: "An ERC-20 token contract (ethereum): the asset holds that token.") var token: String?
    @Option(name: .customLong("min-confirmations"), help: "Confirmations before a transaction counts (default 1).") var minConfirmations: Int?

    func run() throws {
        var params: [String: JSONValue] = ["asset": .string(asset), "chain": .string(chain)]
        if let xpub { params["xpub"] = .string(xpub) }
        if !addresses.isEmpty { params["addresses"] = .array(addresses.map { .string($0) }) }
        if let token { params["token"] = .string(token) }
        if let minConfirmations { params["min_confirmations"] = .int(minConfirmations) }
        let session = try ClientSession(global)
        session.output(try session.call("asset.watch", params)) { result in
            ((result["warnings"]?.arrayValue ?? []).map { "warning: " + Render.text($0) + "\n" }.joined())
                + "watching \(Render.text(result["watch"]?["chain"])) for \(Render.text(result["name"])); the first sync has started "
                + "(see it with: savingsctl asset sync \(Render.text(result["name"])))"
        }
    }
}

struct UnwatchCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unwatch", abstract: "Stop watching the chain; imported transactions stay.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The asset's name or id.") var asset: String

    func run() throws {
        let session = try ClientSession(global)
        session.output(try session.call("asset.unwatch", ["asset": .string(asset)])) { "\(Render.text($0["name"])) no longer watches a chain" }
    }
}

struct SyncCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "sync", abstract: "Sync watched and linked assets now, from their chains, exchanges and banks.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "One asset (default: every watched or linked asset).") var asset: String?

    func run() throws {
        let session = try ClientSession(global)
        let bar = isatty(STDERR_FILENO) == 1 && !global.json ? ProgressLine(total: nil, unit: "pages") : nil
        var params: [String: JSONValue] = [:]
        if let asset { params["asset"] = .string(asset) }
        let result = try session.call("asset.sync", params) { bar?.show($0) }
        bar?.finish()
        session.output(result) { Views.syncOutcome($0, style: .standardOutput) }
    }
}
