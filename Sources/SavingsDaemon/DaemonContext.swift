import Foundation
import SavingsCore
import SavingsStore

/// What method handlers share: the database, the clock, the live configuration, run facts.
public struct DaemonContext: Sendable {
    public let database: SavingsDatabase
    public let clock: any WallClock
    public let liveConfig: LiveConfig
    public let events: EventBus
    public let startedAt: ContinuousClock.Instant
    public let pid: Int32

    public init(database: SavingsDatabase, clock: any WallClock, liveConfig: LiveConfig, events: EventBus,
                startedAt: ContinuousClock.Instant = .now, pid: Int32 = getpid()) {
        self.database = database
        self.clock = clock
        self.liveConfig = liveConfig
        self.events = events
        self.startedAt = startedAt
        self.pid = pid
    }

    /// Today's date in the configured time zone.
    public var today: CalendarDate { CalendarDate(clock.now(), in: liveConfig.current.timeZone) }

    public var timeZone: TimeZone { liveConfig.current.timeZone }

    var planner: Planner { Planner(context: self) }

    /// The one valuation behind every figure, from a fresh snapshot.
    public func valuation() async throws -> Valuation {
        var portfolio = try await database.portfolio(now: clock.now(), pivot: liveConfig.current.ratesPivot)
        portfolio.staleBefore = staleBefore
        return Valuation(portfolio)
    }

    /// Rates with an `as_of` before this are reported as stale.
    public var staleBefore: Date { clock.now().addingTimeInterval(-TimeInterval(liveConfig.current.staleAfter)) }

    /// An effective date parameter: now when absent; never more than a minute in the future.
    public func effectiveDate(_ text: String?, field: String = "date") throws -> Date {
        let now = clock.now()
        guard let text else { return now }
        let date = try Timestamp.parse(text, field: field)
        guard date.timeIntervalSince(now) <= 60 else {
            throw DomainError.invalidField(field, "\(text) is in the future")
        }
        return date
    }

    /// An optional range bound: a timestamp or a plain date (start of that day in the
    /// configured zone; `to` dates include the whole day).
    public func bound(_ text: String?, field: String, endOfDay: Bool = false) throws -> Date? {
        guard let text else { return nil }
        if text.count == 10, let day = try? CalendarDate(parsing: text, field: field) {
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            let start = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day))!
            return endOfDay ? calendar.date(byAdding: .day, value: 1, to: start)!.addingTimeInterval(-0.001) : start
        }
        return try Timestamp.parse(text, field: field)
    }
}
