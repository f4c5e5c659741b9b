import Foundation
import SavingsCore

/// `[onchain.CHAIN]` tables (SPEC 10): each chain's provider, URL and optional proxy. No chain
/// is configured by default: nothing about a wallet leaves the machine unless asked.
extension ConfigLoader {
    static let chainPrefix = "onchain."

    /// Whether a key belongs to a chain's table (`onchain.bitcoin.url`).
    static func isChainKey(_ key: String) -> Bool {
        key.hasPrefix(chainPrefix) && key.split(separator: ".", omittingEmptySubsequences: false).count == 3
    }

    /// One `[onchain.CHAIN]` entry; the table is completed by `checkChains`.
    static func chainEntry(_ entry: TOMLReader.Entry, into config: inout DaemonConfig) throws(ConfigError) {
        let parts = entry.key.split(separator: ".").map(String.init)
        guard let chain = Chain(rawValue: parts[1]) else {
            throw ConfigError(message: "[onchain.\(parts[1])]: not a chain savingsd watches (\(Chain.names))")
        }
        var provider = config.chainProviders[chain.rawValue] ?? ChainProviderConfig(kind: .blockbook, url: "")
        switch parts[2] {
        case "provider":
            let name = try string(entry.value)
            guard let kind = ChainProviderConfig.Kind(rawValue: name) else {
                throw ConfigError(message: "'\(name)' is not a chain provider this build has (blockbook, esplora)")
            }
            provider.kind = kind
        case "url": provider.url = try httpURL(entry.value)
        case "proxy": provider.proxy = try proxy(entry.value)
        default:
            throw ConfigError(message: "unknown key '\(parts[2])' in [onchain.\(chain.rawValue)] (known: provider, url, proxy)")
        }
        config.chainProviders[chain.rawValue] = provider
    }

    /// Every configured chain names its provider and URL.
    static func checkChains(_ config: DaemonConfig) throws(ConfigError) {
        for (chain, provider) in config.chainProviders.sorted(by: { $0.key < $1.key }) {
            guard config.sources["onchain.\(chain).provider"] != nil else {
                throw ConfigError(message: "[onchain.\(chain)] needs provider = \"blockbook\" or \"esplora\"")
            }
            if chain == Chain.ethereum.rawValue, provider.kind == .esplora {
                throw ConfigError(message: "[onchain.ethereum]: esplora serves Bitcoin-family chains; use provider = \"blockbook\"")
            }
            guard !provider.url.isEmpty else {
                throw ConfigError(message: "[onchain.\(chain)] needs url (the \(provider.kind.rawValue) server; your own is best)")
            }
        }
    }

    /// The chain tables as TOML lines for `--check-config`.
    static func renderedChains(_ config: DaemonConfig) -> [String] {
        config.chainProviders.sorted(by: { $0.key < $1.key }).flatMap { chain, provider in
            let key = "onchain.\(chain)."
            return ["\(key)provider = \(quoted(provider.kind.rawValue))", "\(key)url = \(quoted(provider.url))"]
                + (provider.proxy.map { ["\(key)proxy = \(quoted($0))"] } ?? [])
        }
    }
}
