import Foundation
import SavingsCore
import SavingsStore

/// What method handlers share: the database, the clock, the live configuration, run facts.
public struct DaemonContext: Sendable {
    public let database: SavingsDatabase
    public let clock: any WallClock
    public let liveConfig: LiveConfig
    public let startedAt: ContinuousClock.Instant
    public let pid: Int32

    public init(database: SavingsDatabase, clock: any WallClock, liveConfig: LiveConfig,
                startedAt: ContinuousClock.Instant = .now, pid: Int32 = getpid()) {
        self.database = database
        self.clock = clock
        self.liveConfig = liveConfig
        self.startedAt = startedAt
        self.pid = pid
    }

    /// Today's date in the configured time zone.
    public var today: CalendarDate { CalendarDate(clock.now(), in: liveConfig.current.timeZone) }
}
