import Foundation
import Logging
import SavingsCore

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
    public var refreshInterval: Int = 300
    public var retryMin: Int = 30
    public var retryMax: Int = 3600
    /// Rates older than this are still used but flagged stale.
    public var staleAfter: Int = 86_400
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
        merged.displayCurrency = new.displayCurrency
        merged.ratesPivot = new.ratesPivot
        merged.undoWindow = new.undoWindow
        merged.thresholds = new.thresholds
        merged.reminderDay = new.reminderDay
        merged.stalePageSize = new.stalePageSize
        merged.onEvent = new.onEvent
        merged.ratesProvider = new.ratesProvider
        merged.ratesFile = new.ratesFile
        merged.refreshInterval = new.refreshInterval
        merged.retryMin = new.retryMin
        merged.retryMax = new.retryMax
        merged.staleAfter = new.staleAfter
        merged.sources = new.sources
        return merged
    }

    /// Settings that differ in `new` but only take effect after a restart.
    public func restartOnlyChanges(in new: DaemonConfig) -> [String] {
        var keys: [String] = []
        if new.socketPath != socketPath { keys.append("rpc.socket") }
        if new.databasePath != databasePath { keys.append("database.path") }
        return keys
    }

    /// The effective configuration as TOML, each line annotated with its source.
    public var rendered: String {
        var lines = ["# effective configuration (mode: \(mode.rawValue)\(configFile.map { ", file: \($0)" } ?? ", no file"))"]
        for setting in ConfigLoader.settings {
            let value = setting.render(self)
            lines.append("\(setting.key) = \(value)  # \(sources[setting.key] ?? "default")")
        }
        return lines.joined(separator: "\n")
    }
}
