import Foundation
import Logging
import SavingsCore
import SavingsRPC
import SavingsStore
import Synchronization
import Testing
@testable import SavingsDaemon

/// A clock tests move by hand.
final class ManualClock: WallClock {
    private let instant: Mutex<Date>
    init(_ text: String) { instant = Mutex(try! Timestamp.parse(text, field: "t")) }
    func now() -> Date { instant.withLock { $0 } }
    func set(_ text: String) { instant.withLock { $0 = try! Timestamp.parse(text, field: "t") } }
}

@Suite struct SchedulerTests {
    func makeContext(_ clock: ManualClock) throws -> DaemonContext {
        var config = DaemonConfig(mode: .user, socketPath: "/unused", databasePath: ":memory:", configFile: nil)
        config.timeZone = TimeZone(identifier: "Europe/Berlin")!
        let logger = Logger(label: "test")
        return DaemonContext(database: try SavingsDatabase.inMemory(), clock: clock, liveConfig: LiveConfig(config),
                             events: EventBus(clock: clock, logger: logger))
    }

    func drain(_ stream: AsyncStream<DaemonEvent>, _ bus: EventBus, _ id: UInt64) async -> [DaemonEvent] {
        bus.unsubscribe(id)
        var events: [DaemonEvent] = []
        for await event in stream { events.append(event) }
        return events
    }

    @Test func rolloverAcrossTheYearBoundaryInTheConfiguredZone() async throws {
        // 23:30 UTC on Dec 31 is already January in Berlin.
        let clock = ManualClock("2026-12-31T12:00:00Z")
        let context = try makeContext(clock)
        let scheduler = MonthScheduler(context: context, logger: Logger(label: "test"))
        for name in ["A", "B"] {
            _ = try await context.database.createGoal(try NewGoal(name: name, currency: "EUR", targetAmount: "1200", deadline: "2027-12-31",
                                                                  startDate: nil, notes: nil, today: context.today), now: clock.now())
        }
        let (id, stream) = context.events.subscribe(topics: nil, label: "test")
        await scheduler.check()
        #expect(try await context.database.metadata(MonthScheduler.lastRolloverKey) == "2026-12")
        let december = try await context.database.plans(month: MonthLabel(year: 2026, month: 12))
        #expect(december.map(\.requirement.requiredMonthly) == [Decimal(string: "92.31")!, Decimal(string: "92.31")!], "1200 over 13 months, rounded up")
        await scheduler.check()
        #expect(try await context.database.plans(month: MonthLabel(year: 2026, month: 12)).map(\.id) == december.map(\.id), "idempotent")

        clock.set("2026-12-31T23:30:00Z")
        await scheduler.check()
        #expect(try await context.database.metadata(MonthScheduler.lastRolloverKey) == "2027-01")
        let january = try await context.database.plans(month: MonthLabel(year: 2027, month: 1))
        #expect(january.count == 2)
        #expect(january.first?.requirement.monthsRemaining == 12)
        #expect(january.first?.requirement.requiredMonthly == 100)
        let stale = try await context.database.stalePlans(current: MonthLabel(year: 2027, month: 1), offset: 0, limit: 10)
        #expect(stale.total == 2)

        let events = await drain(stream, context.events, id)
        let topics = events.map(\.topic)
        #expect(topics.filter { $0 == "month.rolled_over" }.count == 2)
        #expect(topics.filter { $0 == "plans.created" }.count == 2)
        #expect(events.last { $0.topic == "plans.stale" }?.data["count"] == 2)
        #expect(events.last { $0.topic == "month.rolled_over" }?.data == ["from": "2026-12", "to": "2027-01"])
        // Dec 31 is past the reminder day: one reminder for December, none again that day.
        #expect(topics.filter { $0 == "reminder.due" }.count == 1)
    }

    @Test func remindersStartOnTheReminderDayAndComeOnceADay() async throws {
        let clock = ManualClock("2026-11-20T10:00:00Z")
        let context = try makeContext(clock)
        let scheduler = MonthScheduler(context: context, logger: Logger(label: "test"))
        _ = try await context.database.createGoal(try NewGoal(name: "Trip", currency: "EUR", targetAmount: "500", deadline: "2027-03-31",
                                                              startDate: nil, notes: nil, today: context.today), now: clock.now())
        let (id, stream) = context.events.subscribe(topics: ["reminder.due"], label: "test")
        await scheduler.check()
        clock.set("2026-11-25T08:00:00Z")
        await scheduler.check()
        await scheduler.check()
        clock.set("2026-11-26T08:00:00Z")
        _ = try await context.database.contribute(goal: "Trip", amount: 50, asset: nil, date: clock.now(), note: nil,
                                                  now: clock.now(), timeZone: context.timeZone)
        await scheduler.check()
        clock.set("2026-11-27T08:00:00Z")
        _ = try await context.database.contribute(goal: "Trip", amount: 50, asset: nil, date: clock.now(), note: nil,
                                                  now: clock.now(), timeZone: context.timeZone)
        await scheduler.check()
        let events = await drain(stream, context.events, id)
        #expect(events.count == 2, "the 25th and the 26th; on the 27th the plan of 100.00 is covered")
        #expect(events.first?.data["goals"]?.arrayValue?.first?["remaining"] == "100.00")
        #expect(events.last?.data["goals"]?.arrayValue?.first?["remaining"] == "50.00")
    }

    @Test func nextBoundaryIsMidnightOfTheFirstInTheZone() throws {
        let berlin = TimeZone(identifier: "Europe/Berlin")!
        let boundary = MonthScheduler.nextBoundary(after: try Timestamp.parse("2026-12-15T12:00:00Z", field: "t"), in: berlin)
        #expect(Timestamp.format(boundary) == "2026-12-31T23:00:00.000Z")
    }
}
