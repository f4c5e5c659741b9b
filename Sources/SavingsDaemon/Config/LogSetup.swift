import Foundation
import Logging
import Synchronization

/// The daemon-wide log level, changeable at runtime (SIGHUP reload).
public final class LogLevelControl: Sendable {
    private let level: Mutex<Logger.Level>

    public init(_ level: Logger.Level) {
        self.level = Mutex(level)
    }

    public var current: Logger.Level {
        get { level.withLock { $0 } }
        set { level.withLock { $0 = newValue } }
    }
}

/// One line per event on stderr. Under journald (`JOURNAL_STREAM` set) each line starts with
/// the `<N>` syslog priority so the journal records the right level and adds its own time.
public struct JournalLogHandler: LogHandler {
    public var metadata: Logger.Metadata = [:]
    public var metadataProvider: Logger.MetadataProvider?
    private let label: String
    private let control: LogLevelControl
    private let journal: Bool

    public init(label: String, control: LogLevelControl, journal: Bool) {
        self.label = label
        self.control = control
        self.journal = journal
    }

    public var logLevel: Logger.Level {
        get { control.current }
        set { control.current = newValue }
    }

    public subscript(metadataKey key: String) -> Logger.Metadata.Value? {
        get { metadata[key] }
        set { metadata[key] = newValue }
    }

    public func log(event: LogEvent) {
        var merged = metadata
        if let provided = metadataProvider?.get() { merged.merge(provided, uniquingKeysWith: { _, new in new }) }
        if let extra = event.metadata { merged.merge(extra, uniquingKeysWith: { _, new in new }) }
        var line = journal
            ? "<\(Self.priority(event.level))>"
            : "\(Date().formatted(.iso8601)) \(event.level.rawValue.uppercased()) "
        line += Self.oneLine(event.message.description)
        for key in merged.keys.sorted() {
            line += " \(key)=\(Self.oneLine("\(merged[key]!)"))"
        }
        line += "\n"
        FileHandle.standardError.write(Data(line.utf8))
    }

    /// Bootstraps swift-log once for the process.
    public static func bootstrap(control: LogLevelControl, environment: [String: String]) {
        let journal = environment["JOURNAL_STREAM"] != nil
        LoggingSystem.bootstrap { label in JournalLogHandler(label: label, control: control, journal: journal) }
    }

    static func priority(_ level: Logger.Level) -> Int {
        switch level {
        case .trace, .debug: 7
        case .info: 6
        case .notice: 5
        case .warning: 4
        case .error: 3
        case .critical: 2
        }
    }

    static func oneLine(_ text: String) -> String {
        text.replacingOccurrences(of: "\n", with: "\\n").replacingOccurrences(of: "\r", with: "\\r")
    }
}
