import ArgumentParser
import Foundation
import SavingsCLI
import SavingsRPC

/// `savingsctl asset link|unlink`: assets that take their transactions from an account at an
/// exchange or a bank (`asset sync` syncs them with the watches).
struct LinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "link", abstract: "Link an asset to an account at Kraken, Binance, Coinbase or a bank (SimpleFIN).",
        discussion: """
            The key stays in a file of the credentials directory (linked.credentials in the configuration, \
            or systemd's LoadCredential=); the link names the file, never the key. Make a key that can only \
            read: a key the service says can trade or withdraw is refused. The first sync starts at once; \
            this command waits for it and shows what it found.
            """)
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The asset's name or id.") var asset: String
    @Option(help: "kraken, binance, coinbase or simplefin.") var service: String
    @Option(help: "The credential file's name in the credentials directory.") var credential: String
    @Option(help: "The account at the service (Kraken: XXBT; Binance: BTC; Coinbase: an account id or currency; SimpleFIN: the account id). Default: the asset's currency.")
    var account: String?
    @Flag(help: "Do not wait for the first sync.") var noWait = false

    func run() throws {
        var params: [String: JSONValue] = ["asset": .string(asset), "service": .string(service), "credential": .string(credential)]
        if let account { params["account"] = .string(account) }
        let session = try ClientSession(global)
        let linked = try session.call("asset.link", params)
        let warnings = (linked["warnings"]?.arrayValue ?? []).map { "warning: " + Render.text($0) + "\n" }.joined()
        let head = "\(Render.text(linked["name"])) is linked to \(Render.text(linked["link"]?["service"])) \(Render.text(linked["link"]?["account"]))"
        guard !noWait else {
            session.output(linked) { _ in warnings + head + "; the first sync has started (see it with: savingsctl asset sync \(asset))" }
            return
        }
        let synced: JSONValue
        do {
            synced = try session.call("asset.sync", ["asset": linked["id"] ?? .string(asset)])
        } catch {
            // The link stands; its first sync's failure follows, with what to do.
            if !global.json { print(warnings + head + "; its first sync failed:") }
            throw error
        }
        session.output(["asset": linked, "sync": synced]) { _ in warnings + head + "\n" + Views.syncOutcome(synced, style: .standardOutput) }
    }
}

struct UnlinkCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "unlink", abstract: "End an asset's link to its account; imported transactions stay.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The asset's name or id.") var asset: String

    func run() throws {
        let session = try ClientSession(global)
        session.output(try session.call("asset.unlink", ["asset": .string(asset)])) { "\(Render.text($0["name"])) is no longer linked to an account" }
    }
}
