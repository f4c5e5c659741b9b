import Foundation
import Logging
import SavingsCore
import SavingsStore

/// The effective configuration of one daemon run.
public struct DaemonConfig: Sendable, Equatable {
    public var mode: DefaultPaths.Mode
    public var socketPath: String
    public var databasePath: String
    /// The configuration file that was read, if any.
    public var configFile: String?
    public var logLevel: Logger.Level = .info
    public var timeZone: TimeZone = .current
    public var maxLineBytes: Int = 1_048_576
    /// Largest file a client may send over the connection (an import), in bytes.
    public var maxUploadBytes: Int = 1 << 30
    /// Most requests in one batch.
    public var maxBatch: Int = 100
    /// Threads serving connections (each connection stays on one). As many as the clients that
    /// talk at once lets each be answered by its own thread, woken by its own request, instead
    /// of queueing behind the others on a few; an idle one costs a sleeping thread.
    public var eventLoops: Int = 16
    /// Who may connect, and the connection limits.
    public var access = AccessPolicy()
    /// With a group, the socket is 0660 in a 0750 directory owned by that group.
    public var socketGroup: String?
    public var displayCurrency = try! CurrencyCode("EUR")
    public var ratesPivot = try! CurrencyCode("USD")
    /// Seconds within which a contribution (and later a month transition) can be undone.
    public var undoWindow: Int = 86_400
    public var thresholds = PlanningThresholds()
    /// Day of the month from which unfulfilled plans produce `reminder.due`.
    public var reminderDay: Int = 25
    public var stalePageSize: Int = 5
    /// Where rates come from: "manual" (rates.set only) or "file" (a JSON file re-read on refresh).
    public var ratesProvider = "manual"
    public var ratesFile: String?
    /// Where fiat-to-fiat rates come from: "none" or "frankfurter".
    public var fiatProvider = "none"
    public var ratesBaseURL = "https://api.coingecko.com/api/v3"
    public var fiatBaseURL = "https://api.frankfurter.dev/v1"
    /// A file holding the CoinGecko API key (sent in a header, never logged or returned).
    public var apiKeyFile: String?
    /// Crypto symbol → CoinGecko coin id: the built-in map with `[rates.coingecko_ids]` on top.
    public var coinGeckoIDs = CoinGeckoQuery.defaultIDs
    public var refreshInterval: Int = 300
    public var retryMin: Int = 30
    public var retryMax: Int = 3600
    /// Rates older than this are still used but flagged stale.
    public var staleAfter: Int = 86_400
    /// Seconds between syncs of watched assets (SPEC 10).
    public var onchainInterval: Int = 900
    /// Most transactions one watch's history may have: a provider that lists more (or walks on
    /// for ever) fails the sync rather than filling memory and the database.
    public var onchainMaxTransactions: Int = 200_000
    /// Each chain's provider (`[onchain.CHAIN]`), by chain name; none by default.
    var chainProviders: [String: ChainProviderConfig] = [:]
    /// Linked accounts (`[linked]`, `[linked.SERVICE]`).
    var linked = LinkedConfig()
    /// Automatic backups (before migrations, before replacing imports, periodic): where, and
    /// how many are kept. The default directory is `backups/` beside the database.
    public var backupDirectory: String?
    public var keepBackups: Int = 5
    /// Seconds between periodic backups; 0 turns them off.
    public var backupInterval: Int = 0
    public var backupPolicy: BackupPolicy {
        BackupPolicy(directory: backupDirectory ?? ((databasePath as NSString).deletingLastPathComponent + "/backups"), keep: keepBackups)
    }

    /// Where files travelling over the connection are held while they do: beside the database
    /// (the state directory, which the daemon may always write; /tmp may be memory).
    public var transferDirectory: String { (databasePath as NSString).deletingLastPathComponent }

    /// The command run for every event (argv), if any.
    public var onEvent: [String]?

    /// Where each setting's value came from, for `--check-config`.
    public var sources: [String: String] = [:]

    public init(mode: DefaultPaths.Mode, socketPath: String, databasePath: String, configFile: String?) {
        self.mode = mode
        self.socketPath = socketPath
        self.databasePath = databasePath
        self.configFile = configFile
    }

    /// Settings that change behaviour without a restart (applied on SIGHUP).
    public func reloadable(from new: DaemonConfig) -> DaemonConfig {
        var merged = self
        merged.logLevel = new.logLevel
        merged.timeZone = new.timeZone
        merged.maxLineBytes = new.maxLineBytes
        merged.maxUploadBytes = new.maxUploadBytes
        merged.access = new.access
        merged.displayCurrency = new.displayCurrency
        merged.ratesPivot = new.ratesPivot
        merged.undoWindow = new.undoWindow
        merged.thresholds = new.thresholds
        merged.reminderDay = new.reminderDay
        merged.stalePageSize = new.stalePageSize
        merged.onEvent = new.onEvent
        merged.ratesProvider = new.ratesProvider
        merged.ratesFile = new.ratesFile
        merged.fiatProvider = new.fiatProvider
        merged.ratesBaseURL = new.ratesBaseURL
        merged.fiatBaseURL = new.fiatBaseURL
        merged.apiKeyFile = new.apiKeyFile
        merged.coinGeckoIDs = new.coinGeckoIDs
        merged.refreshInterval = new.refreshInterval
        merged.retryMin = new.retryMin
        merged.retryMax = new.retryMax
        merged.staleAfter = new.staleAfter
        merged.onchainInterval = new.onchainInterval
        merged.onchainMaxTransactions = new.onchainMaxTransactions
        merged.chainProviders = new.chainProviders
        merged.linked = new.linked
        merged.keepBackups = new.keepBackups
        merged.backupInterval = new.backupInterval
        merged.sources = new.sources
        return merged
    }

    /// Settings that differ in `new` but only take effect after a restart.
    public func restartOnlyChanges(in new: DaemonConfig) -> [String] {
        var keys: [String] = []
        if new.socketPath != socketPath { keys.append("rpc.socket") }
        if new.databasePath != databasePath { keys.append("database.path") }
        if new.socketGroup != socketGroup { keys.append("rpc.socket_group") }
        if new.maxBatch != maxBatch { keys.append("rpc.max_batch") }
        if new.eventLoops != eventLoops { keys.append("rpc.event_loops") }
        if new.access.backlog != access.backlog { keys.append("rpc.backlog") }
        if new.backupPolicy.directory != backupPolicy.directory { keys.append("database.backup_dir") }
        return keys
    }

    /// The effective configuration as TOML, each line annotated with its source.
    public var rendered: String {
        var lines = ["# effective configuration (mode: \(mode.rawValue)\(configFile.map { ", file: \($0)" } ?? ", no file"))"]
        for setting in ConfigLoader.settings {
            let value = setting.render(self)
            lines.append("\(setting.key) = \(value)  # \(sources[setting.key] ?? "default")")
        }
        for line in ConfigLoader.renderedChains(self) + ConfigLoader.renderedLinkedServices(self) { lines.append("\(line)  # \(sources[String(line.prefix { $0 != " " })] ?? "default")") }
        for (symbol, id) in coinGeckoIDs.sorted(by: { $0.key < $1.key }) where CoinGeckoQuery.defaultIDs[symbol] != id {
            let key = ConfigLoader.coinGeckoIDsPrefix + symbol
            lines.append("\(key) = \"\(id)\"  # \(sources[key] ?? "default")")
        }
        return lines.joined(separator: "\n")
    }
}
