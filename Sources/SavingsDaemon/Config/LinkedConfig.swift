import Foundation
import SavingsCore

/// What linked accounts need from the configuration (issue 50). Nothing about an account
/// leaves the machine until `asset.link` names one; the services' addresses default to their
/// own hosts and may be pointed elsewhere (a proxy, a test server).
struct LinkedConfig: Sendable, Equatable {
    /// The directory of credentials when systemd gives none (`$CREDENTIALS_DIRECTORY` first).
    var credentials: String?
    /// Seconds between syncs of each linked account.
    var interval = 3600
    /// Keys the service says can trade or withdraw are refused unless this is set.
    var allowTradingKeys = false
    /// Each service's address and proxy, by service name; the defaults when absent.
    var services: [String: LinkedServiceConfig] = [:]

    func service(_ service: LinkedService) -> LinkedServiceConfig {
        services[service.rawValue] ?? LinkedServiceConfig(url: LinkedServiceConfig.defaultURL(service))
    }

    /// SimpleFIN Bridge allows 24 requests a day: its links are synced at most every 6 hours
    /// on their own (a sync asked for by a client still goes at once).
    func interval(of service: LinkedService) -> Int {
        service == .simplefin ? max(interval, 6 * 3600) : interval
    }
}

struct LinkedServiceConfig: Sendable, Equatable {
    /// Base URL without a trailing slash (SimpleFIN: unused, the access URL names its server).
    var url: String
    var proxy: String?
    /// Kraken: the verification tier whose call counter the calls are paced by
    /// (https://docs.kraken.com/api/docs/guides/spot-rest-ratelimits); nil: no pacing.
    var tier: KrakenTier? = .starter

    static func defaultURL(_ service: LinkedService) -> String {
        switch service {
        case .kraken: "https://api.kraken.com"
        case .binance: "https://api.binance.com"
        case .coinbase: "https://api.coinbase.com"
        case .simplefin: ""
        }
    }
}

/// Kraken's REST call counter per API key: each call adds 1 (ledger and trade history 2), the
/// counter decays by the tier's rate, and a call that would pass the tier's maximum is refused
/// with `EAPI:Rate limit exceeded` (https://docs.kraken.com/api/docs/guides/spot-rest-ratelimits).
enum KrakenTier: String, Sendable, CaseIterable {
    case starter, intermediate, pro

    var maximum: Double { self == .starter ? 15 : 20 }
    var decayPerSecond: Double {
        switch self {
        case .starter: 0.33
        case .intermediate: 0.5
        case .pro: 1
        }
    }
}

extension ConfigLoader {
    static let linkedPrefix = "linked."

    static let linkedSettings: [Setting] = [
        Setting(key: "linked.credentials", environment: "SAVINGSD_LINKED_CREDENTIALS", flag: nil,
                apply: { config, value throws(ConfigError) in config.linked.credentials = try absolutePath(value) },
                render: { $0.linked.credentials.map(quoted) ?? "\"\"" }),
        Setting(key: "linked.interval", environment: "SAVINGSD_LINKED_INTERVAL", flag: nil,
                apply: { config, value throws(ConfigError) in config.linked.interval = try integer(value, in: 60...(7 * 86_400)) },
                render: { String($0.linked.interval) }),
        Setting(key: "linked.allow_trading_keys", environment: nil, flag: nil,
                apply: { config, value throws(ConfigError) in
                    guard case .bool(let allowed) = value else { throw ConfigError(message: "must be true or false, not \(value.typeName)") }
                    config.linked.allowTradingKeys = allowed
                },
                render: { String($0.linked.allowTradingKeys) }),
    ]

    /// Whether a key belongs to a service's table (`linked.kraken.url`).
    static func isLinkedServiceKey(_ key: String) -> Bool {
        key.hasPrefix(linkedPrefix) && key.split(separator: ".", omittingEmptySubsequences: false).count == 3
    }

    /// One `[linked.SERVICE]` entry: url, proxy, and Kraken's tier.
    static func linkedServiceEntry(_ entry: TOMLReader.Entry, into config: inout DaemonConfig) throws(ConfigError) {
        let parts = entry.key.split(separator: ".").map(String.init)
        guard let service = LinkedService(rawValue: parts[1]) else {
            throw ConfigError(message: "[linked.\(parts[1])]: not a service savingsd links (\(LinkedService.names))")
        }
        var settings = config.linked.service(service)
        switch (parts[2], service) {
        case ("url", _) where service != .simplefin: settings.url = try httpURL(entry.value)
        case ("proxy", _): settings.proxy = try proxy(entry.value)
        case ("tier", .kraken):
            let name = try string(entry.value)
            if name == "none" {
                settings.tier = nil
            } else {
                guard let tier = KrakenTier(rawValue: name) else {
                    throw ConfigError(message: "'\(name)' is not a Kraken tier (starter, intermediate, pro, or none to not pace calls)")
                }
                settings.tier = tier
            }
        default:
            let known = service == .kraken ? "url, proxy, tier" : service == .simplefin ? "proxy" : "url, proxy"
            throw ConfigError(message: "unknown key '\(parts[2])' in [linked.\(service.rawValue)] (known: \(known))")
        }
        config.linked.services[service.rawValue] = settings
    }

    static func proxy(_ value: TOMLReader.Value) throws(ConfigError) -> String {
        let proxy = try string(value)
        guard let url = URL(string: proxy), ["http", "socks5", "socks5h"].contains(url.scheme ?? ""), url.host != nil, url.port != nil else {
            throw ConfigError(message: "'\(proxy)' is not a proxy (http://HOST:PORT or socks5://HOST:PORT)")
        }
        return proxy
    }

    /// The service tables as TOML lines for `--check-config`.
    static func renderedLinkedServices(_ config: DaemonConfig) -> [String] {
        config.linked.services.sorted(by: { $0.key < $1.key }).flatMap { name, settings in
            let key = "linked.\(name)."
            return (name == LinkedService.simplefin.rawValue ? [] : ["\(key)url = \(quoted(settings.url))"])
                + (settings.proxy.map { ["\(key)proxy = \(quoted($0))"] } ?? [])
                + (name == LinkedService.kraken.rawValue ? ["\(key)tier = \(quoted(settings.tier?.rawValue ?? "none"))"] : [])
        }
    }
}
