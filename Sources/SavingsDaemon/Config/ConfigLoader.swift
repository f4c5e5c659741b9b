import Foundation
import Logging
import SavingsCore

/// A configuration problem: where it is and why, so the operator can fix it.
public struct ConfigError: Error, Sendable, CustomStringConvertible {
    public var message: String
    public var description: String { message }
}

/// What the command line said; `nil` means "not given".
public struct DaemonOptions: Sendable, Equatable {
    public var socket: String?
    public var database: String?
    public var config: String?
    public var logLevel: String?
    public var system: Bool

    public init(socket: String? = nil, database: String? = nil, config: String? = nil, logLevel: String? = nil, system: Bool = false) {
        self.socket = socket
        self.database = database
        self.config = config
        self.logLevel = logLevel
        self.system = system
    }
}

/// Builds the effective configuration: flag > environment > file > default.
public enum ConfigLoader {
    struct Setting: Sendable {
        var key: String
        var environment: String?
        /// The command-line flag (`--database`) and how to read it from the options.
        var flag: (name: String, value: @Sendable (DaemonOptions) -> String?)?
        var apply: @Sendable (inout DaemonConfig, TOMLReader.Value) throws(ConfigError) -> Void
        var render: @Sendable (DaemonConfig) -> String
    }

    static let settings: [Setting] = [
        Setting(key: "log_level", environment: "SAVINGSD_LOG_LEVEL", flag: ("--log-level", { $0.logLevel }),
                apply: { config, value throws(ConfigError) in config.logLevel = try logLevel(value) },
                render: { quoted($0.logLevel.rawValue) }),
        Setting(key: "timezone", environment: "SAVINGSD_TIMEZONE", flag: nil,
                apply: { config, value throws(ConfigError) in
                    let name = try string(value)
                    guard let zone = TimeZone(identifier: name) else {
                        throw ConfigError(message: "unknown time zone '\(name)' (use an IANA name such as Europe/Berlin)")
                    }
                    config.timeZone = zone
                },
                render: { quoted($0.timeZone.identifier) }),
        Setting(key: "display_currency", environment: "SAVINGSD_DISPLAY_CURRENCY", flag: nil,
                apply: { config, value throws(ConfigError) in config.displayCurrency = try currency(value) },
                render: { quoted($0.displayCurrency.code) }),
        Setting(key: "on_event", environment: "SAVINGSD_ON_EVENT", flag: nil,
                apply: { config, value throws(ConfigError) in
                    switch value {
                    case .string(let text):
                        config.onEvent = try CommandWords.split(text)
                    case .array(let items):
                        config.onEvent = try items.map { item throws(ConfigError) -> String in
                            guard case .string(let word) = item else { throw ConfigError(message: "must be an array of strings") }
                            return word
                        }
                    default:
                        throw ConfigError(message: "must be a command string or an array of strings, not \(value.typeName)")
                    }
                    if config.onEvent?.isEmpty == true { config.onEvent = nil }
                },
                render: { config in
                    guard let command = config.onEvent else { return "[]" }
                    return "[" + command.map(quoted).joined(separator: ", ") + "]"
                }),
        Setting(key: "rpc.socket", environment: "SAVINGSD_SOCKET", flag: ("--socket", { $0.socket }),
                apply: { config, value throws(ConfigError) in config.socketPath = try absolutePath(value) },
                render: { quoted($0.socketPath) }),
        Setting(key: "rpc.max_line_bytes", environment: "SAVINGSD_MAX_LINE_BYTES", flag: nil,
                apply: { config, value throws(ConfigError) in
                    config.maxLineBytes = try integer(value, in: 1024...(64 << 20))
                },
                render: { String($0.maxLineBytes) }),
        Setting(key: "rpc.max_upload_bytes", environment: "SAVINGSD_MAX_UPLOAD_BYTES", flag: nil,
                apply: { config, value throws(ConfigError) in
                    config.maxUploadBytes = try integer(value, in: 1024...(1 << 40))
                },
                render: { String($0.maxUploadBytes) }),
        Setting(key: "rpc.max_connections", environment: "SAVINGSD_MAX_CONNECTIONS", flag: nil,
                apply: { config, value throws(ConfigError) in config.access.maxConnections = try integer(value, in: 1...10_000) },
                render: { String($0.access.maxConnections) }),
        Setting(key: "rpc.max_connections_per_uid", environment: "SAVINGSD_MAX_CONNECTIONS_PER_UID", flag: nil,
                apply: { config, value throws(ConfigError) in config.access.maxConnectionsPerUID = try integer(value, in: 1...10_000) },
                render: { String($0.access.perUIDLimit) }),
        Setting(key: "rpc.backlog", environment: "SAVINGSD_BACKLOG", flag: nil,
                apply: { config, value throws(ConfigError) in config.access.backlog = try integer(value, in: 16...65_535) },
                render: { String($0.access.backlog) }),
        Setting(key: "rpc.event_loops", environment: "SAVINGSD_EVENT_LOOPS", flag: nil,
                apply: { config, value throws(ConfigError) in config.eventLoops = try integer(value, in: 1...256) },
                render: { String($0.eventLoops) }),
        Setting(key: "rpc.idle_timeout", environment: "SAVINGSD_IDLE_TIMEOUT", flag: nil,
                apply: { config, value throws(ConfigError) in config.access.idleTimeout = try integer(value, in: 1...86_400) },
                render: { String($0.access.idleTimeout) }),
        Setting(key: "rpc.max_batch", environment: "SAVINGSD_MAX_BATCH", flag: nil,
                apply: { config, value throws(ConfigError) in config.maxBatch = try integer(value, in: 1...10_000) },
                render: { String($0.maxBatch) }),
        Setting(key: "rpc.allow_uids", environment: "SAVINGSD_ALLOW_UIDS", flag: nil,
                apply: { config, value throws(ConfigError) in config.access.allowUIDs = try uids(value) },
                render: { "[" + $0.access.allowUIDs.sorted().map(String.init).joined(separator: ", ") + "]" }),
        Setting(key: "rpc.allow_groups", environment: "SAVINGSD_ALLOW_GROUPS", flag: nil,
                apply: { config, value throws(ConfigError) in config.access.allowGroups = try names(value) },
                render: { "[" + $0.access.allowGroups.map(quoted).joined(separator: ", ") + "]" }),
        Setting(key: "rpc.read_only_groups", environment: "SAVINGSD_READ_ONLY_GROUPS", flag: nil,
                apply: { config, value throws(ConfigError) in config.access.readOnlyGroups = try names(value) },
                render: { "[" + $0.access.readOnlyGroups.map(quoted).joined(separator: ", ") + "]" }),
        Setting(key: "rpc.socket_group", environment: "SAVINGSD_SOCKET_GROUP", flag: nil,
                apply: { config, value throws(ConfigError) in
                    let name = try string(value)
                    guard getgrnam(name) != nil else { throw ConfigError(message: "no group named '\(name)'") }
                    config.socketGroup = name
                },
                render: { $0.socketGroup.map(quoted) ?? "\"\"" }),
        Setting(key: "rates.pivot", environment: "SAVINGSD_RATES_PIVOT", flag: nil,
                apply: { config, value throws(ConfigError) in config.ratesPivot = try currency(value) },
                render: { quoted($0.ratesPivot.code) }),
        Setting(key: "rates.provider", environment: "SAVINGSD_RATES_PROVIDER", flag: nil,
                apply: { config, value throws(ConfigError) in
                    let name = try string(value)
                    guard ["manual", "file", "coingecko"].contains(name) else {
                        throw ConfigError(message: "'\(name)' is not a rates provider this build has (manual, file, coingecko)")
                    }
                    config.ratesProvider = name
                },
                render: { quoted($0.ratesProvider) }),
        Setting(key: "rates.fiat_provider", environment: "SAVINGSD_RATES_FIAT_PROVIDER", flag: nil,
                apply: { config, value throws(ConfigError) in
                    let name = try string(value)
                    guard ["none", "frankfurter"].contains(name) else {
                        throw ConfigError(message: "'\(name)' is not a fiat rates provider this build has (none, frankfurter)")
                    }
                    config.fiatProvider = name
                },
                render: { quoted($0.fiatProvider) }),
        Setting(key: "rates.base_url", environment: "SAVINGSD_RATES_BASE_URL", flag: nil,
                apply: { config, value throws(ConfigError) in config.ratesBaseURL = try httpURL(value) },
                render: { quoted($0.ratesBaseURL) }),
        Setting(key: "rates.fiat_base_url", environment: "SAVINGSD_RATES_FIAT_BASE_URL", flag: nil,
                apply: { config, value throws(ConfigError) in config.fiatBaseURL = try httpURL(value) },
                render: { quoted($0.fiatBaseURL) }),
        Setting(key: "rates.api_key_file", environment: "SAVINGSD_RATES_API_KEY_FILE", flag: nil,
                apply: { config, value throws(ConfigError) in config.apiKeyFile = try absolutePath(value) },
                render: { $0.apiKeyFile.map(quoted) ?? "\"\"" }),
        Setting(key: "rates.file", environment: "SAVINGSD_RATES_FILE", flag: nil,
                apply: { config, value throws(ConfigError) in config.ratesFile = try absolutePath(value) },
                render: { $0.ratesFile.map(quoted) ?? "\"\"" }),
        Setting(key: "rates.refresh_interval", environment: "SAVINGSD_RATES_REFRESH_INTERVAL", flag: nil,
                apply: { config, value throws(ConfigError) in config.refreshInterval = try integer(value, in: 1...86_400) },
                render: { String($0.refreshInterval) }),
        Setting(key: "rates.retry_min", environment: "SAVINGSD_RATES_RETRY_MIN", flag: nil,
                apply: { config, value throws(ConfigError) in config.retryMin = try integer(value, in: 1...86_400) },
                render: { String($0.retryMin) }),
        Setting(key: "rates.retry_max", environment: "SAVINGSD_RATES_RETRY_MAX", flag: nil,
                apply: { config, value throws(ConfigError) in config.retryMax = try integer(value, in: 1...604_800) },
                render: { String($0.retryMax) }),
        Setting(key: "rates.stale_after", environment: "SAVINGSD_RATES_STALE_AFTER", flag: nil,
                apply: { config, value throws(ConfigError) in config.staleAfter = try integer(value, in: 1...(366 * 86_400)) },
                render: { String($0.staleAfter) }),
        Setting(key: "onchain.interval", environment: "SAVINGSD_ONCHAIN_INTERVAL", flag: nil,
                apply: { config, value throws(ConfigError) in config.onchainInterval = try integer(value, in: 10...(7 * 86_400)) },
                render: { String($0.onchainInterval) }),
        Setting(key: "onchain.max_transactions", environment: "SAVINGSD_ONCHAIN_MAX_TRANSACTIONS", flag: nil,
                apply: { config, value throws(ConfigError) in config.onchainMaxTransactions = try integer(value, in: 100...10_000_000) },
                render: { String($0.onchainMaxTransactions) }),
        Setting(key: "planning.undo_window", environment: "SAVINGSD_UNDO_WINDOW", flag: nil,
                apply: { config, value throws(ConfigError) in config.undoWindow = try integer(value, in: 0...(366 * 86_400)) },
                render: { String($0.undoWindow) }),
        Setting(key: "planning.attention_threshold", environment: nil, flag: nil,
                apply: { config, value throws(ConfigError) in config.thresholds.attention = try amount(value) },
                render: { Amount.plainText($0.thresholds.attention) }),
        Setting(key: "planning.critical_threshold", environment: nil, flag: nil,
                apply: { config, value throws(ConfigError) in config.thresholds.critical = try amount(value) },
                render: { Amount.plainText($0.thresholds.critical) }),
        Setting(key: "planning.reminder_day", environment: nil, flag: nil,
                apply: { config, value throws(ConfigError) in config.reminderDay = try integer(value, in: 1...31) },
                render: { String($0.reminderDay) }),
        Setting(key: "planning.stale_page_size", environment: nil, flag: nil,
                apply: { config, value throws(ConfigError) in config.stalePageSize = try integer(value, in: 1...100) },
                render: { String($0.stalePageSize) }),
        Setting(key: "database.path", environment: "SAVINGSD_DATABASE", flag: ("--database", { $0.database }),
                apply: { config, value throws(ConfigError) in config.databasePath = try absolutePath(value) },
                render: { quoted($0.databasePath) }),
        Setting(key: "database.backup_dir", environment: "SAVINGSD_BACKUP_DIR", flag: nil,
                apply: { config, value throws(ConfigError) in config.backupDirectory = try absolutePath(value) },
                render: { quoted($0.backupPolicy.directory) }),
        Setting(key: "database.keep_backups", environment: "SAVINGSD_KEEP_BACKUPS", flag: nil,
                apply: { config, value throws(ConfigError) in config.keepBackups = try integer(value, in: 1...1000) },
                render: { String($0.keepBackups) }),
        Setting(key: "database.backup_interval", environment: "SAVINGSD_BACKUP_INTERVAL", flag: nil,
                apply: { config, value throws(ConfigError) in config.backupInterval = try integer(value, in: 0...(366 * 86_400)) },
                render: { String($0.backupInterval) }),
    ] + linkedSettings

    /// Loads the configuration. `readFile` returns nil when the file does not exist.
    public static func load(
        options: DaemonOptions, environment: [String: String], uid: UInt32,
        readFile: (String) throws -> String?
    ) throws(ConfigError) -> DaemonConfig {
        let defaults = DefaultPaths.resolve(environment: environment, system: options.system, uid: uid)
        let explicitFile = options.config ?? environment["SAVINGSD_CONFIG"].flatMap { $0.isEmpty ? nil : $0 }
        let filePath = explicitFile ?? defaults.config
        let text: String?
        do {
            text = try readFile(filePath)
        } catch {
            throw ConfigError(message: "\(filePath): cannot read: \(error)")
        }
        if text == nil, explicitFile != nil {
            throw ConfigError(message: "\(filePath): configuration file not found")
        }
        var config = DaemonConfig(mode: defaults.mode, socketPath: defaults.socket, databasePath: defaults.database,
                                  configFile: text == nil ? nil : filePath)
        let settingsByKey = Dictionary(uniqueKeysWithValues: settings.map { ($0.key, $0) })

        if let text {
            let entries: [TOMLReader.Entry]
            do {
                entries = try TOMLReader.read(text)
            } catch {
                throw ConfigError(message: "\(filePath):\(error.line): \(error.reason)")
            }
            for entry in entries {
                // Tables whose keys are the user's own (coin ids, chains) are read by their handler.
                let ownKeys = entry.key.hasPrefix(coinGeckoIDsPrefix) || isChainKey(entry.key) || isLinkedServiceKey(entry.key)
                if ownKeys {
                    do throws(ConfigError) {
                        if isChainKey(entry.key) {
                            try chainEntry(entry, into: &config)
                        } else if isLinkedServiceKey(entry.key) {
                            try linkedServiceEntry(entry, into: &config)
                        } else {
                            try coinGeckoID(entry, into: &config)
                        }
                    } catch {
                        throw ConfigError(message: "\(filePath):\(entry.line): \(entry.key): \(error.message)")
                    }
                    config.sources[entry.key] = "\(filePath):\(entry.line)"
                    continue
                }
                guard let setting = settingsByKey[entry.key] else {
                    throw ConfigError(message: "\(filePath):\(entry.line): unknown key '\(entry.key)' (known: \(settings.map(\.key).joined(separator: ", ")))")
                }
                do {
                    try setting.apply(&config, entry.value)
                } catch {
                    throw ConfigError(message: "\(filePath):\(entry.line): \(entry.key): \(error.message)")
                }
                config.sources[entry.key] = "\(filePath):\(entry.line)"
            }
        }
        for setting in settings {
            if let name = setting.environment, let raw = environment[name], !raw.isEmpty {
                do {
                    try setting.apply(&config, .fromText(raw))
                } catch {
                    throw ConfigError(message: "environment \(name): \(error.message)")
                }
                config.sources[setting.key] = "environment \(name)"
            }
            if let flag = setting.flag, let raw = flag.value(options) {
                do {
                    try setting.apply(&config, .fromText(raw))
                } catch {
                    throw ConfigError(message: "\(flag.name): \(error.message)")
                }
                config.sources[setting.key] = "command line"
            }
        }
        if config.apiKeyFile == nil, let credentials = environment["CREDENTIALS_DIRECTORY"], credentials.hasPrefix("/") {
            // systemd's LoadCredential=coingecko_api_key:/path puts the key here.
            let candidate = credentials + "/coingecko_api_key"
            if FileManager.default.fileExists(atPath: candidate) {
                config.apiKeyFile = candidate
                config.sources["rates.api_key_file"] = "environment CREDENTIALS_DIRECTORY"
            }
        }
        try checkChains(config)
        if config.ratesProvider == "file", config.ratesFile == nil {
            throw ConfigError(message: "rates.provider = \"file\" needs rates.file (the JSON file to read)")
        }
        return config
    }

    static func httpURL(_ value: TOMLReader.Value) throws(ConfigError) -> String {
        var text = try string(value)
        guard let url = URL(string: text), ["http", "https"].contains(url.scheme ?? ""), url.host != nil, url.query == nil else {
            throw ConfigError(message: "'\(text)' is not an http(s) URL without a query")
        }
        while text.hasSuffix("/") { text.removeLast() }
        return text
    }

    // MARK: - Value checks

    static func string(_ value: TOMLReader.Value) throws(ConfigError) -> String {
        guard case .string(let s) = value else { throw ConfigError(message: "must be a string, not \(value.typeName)") }
        return s
    }

    /// A list of uids: an array of integers, or (from the environment) "1000,1001".
    private static func uids(_ value: TOMLReader.Value) throws(ConfigError) -> Set<UInt32> {
        let items: [TOMLReader.Value]
        switch value {
        case .array(let values): items = values
        case .integer: items = [value]
        case .string(let text): items = text.split(separator: ",").map { .fromText($0.trimmingCharacters(in: .whitespaces)) }
        default: throw ConfigError(message: "must be a list of user ids")
        }
        var result = Set<UInt32>()
        for item in items {
            guard case .integer(let n) = item, n >= 0, n < Int(UInt32.max) else { throw ConfigError(message: "must be a list of user ids (numbers)") }
            result.insert(UInt32(n))
        }
        return result
    }

    /// A list of group names that exist: an array of strings, or "wheel,staff".
    private static func names(_ value: TOMLReader.Value) throws(ConfigError) -> [String] {
        let items: [String]
        switch value {
        case .array(let values):
            items = try values.map { value throws(ConfigError) -> String in try string(value) }
        case .string(let text): items = text.split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
        default: throw ConfigError(message: "must be a list of group names")
        }
        for name in items where getgrnam(name) == nil { throw ConfigError(message: "no group named '\(name)'") }
        return items
    }

    private static func currency(_ value: TOMLReader.Value) throws(ConfigError) -> CurrencyCode {
        let text = try string(value)
        guard let code = try? CurrencyCode(text) else {
            throw ConfigError(message: "'\(text)' is not a currency code (2-10 letters or digits, e.g. EUR)")
        }
        return code
    }

    /// A positive exact amount: an integer, a float literal (kept exact) or a string.
    private static func amount(_ value: TOMLReader.Value) throws(ConfigError) -> Decimal {
        let text: String
        switch value {
        case .integer(let n): text = String(n)
        case .float(let literal): text = literal
        case .string(let s): text = s
        default: throw ConfigError(message: "must be a number, not \(value.typeName)")
        }
        guard let amount = try? Amount.parse(text), amount > 0 else { throw ConfigError(message: "'\(text)' is not a positive amount") }
        return amount
    }

    static func absolutePath(_ value: TOMLReader.Value) throws(ConfigError) -> String {
        let path = try string(value)
        guard path.hasPrefix("/") else { throw ConfigError(message: "'\(path)' must be an absolute path") }
        return path
    }

    static func integer(_ value: TOMLReader.Value, in range: ClosedRange<Int>) throws(ConfigError) -> Int {
        guard case .integer(let n) = value else { throw ConfigError(message: "must be an integer, not \(value.typeName)") }
        guard range.contains(n) else { throw ConfigError(message: "\(n) is out of range \(range.lowerBound)...\(range.upperBound)") }
        return n
    }

    private static func logLevel(_ value: TOMLReader.Value) throws(ConfigError) -> Logger.Level {
        let name = try string(value).lowercased()
        guard let level = Logger.Level(rawValue: name == "warn" ? "warning" : name) else {
            throw ConfigError(message: "'\(name)' is not a log level (trace, debug, info, notice, warning, error, critical)")
        }
        return level
    }

    static func quoted(_ text: String) -> String {
        "\"" + text.replacingOccurrences(of: "\\", with: "\\\\").replacingOccurrences(of: "\"", with: "\\\"") + "\""
    }
}

extension TOMLReader.Value {
    /// Environment variables and flags are text; integers written there are read as integers.
    static func fromText(_ text: String) -> TOMLReader.Value {
        if let n = Int(text) { return .integer(n) }
        return .string(text)
    }
}
