import Foundation
import Logging
import SavingsCore
import SavingsRPC
import ServiceLifecycle
import Synchronization

/// The monthly cycle (SPEC 5.4): at start-up, at each month boundary in the configured time
/// zone, and at least every 10 minutes (so suspend, clock jumps and downtime are caught up),
/// idempotently: current plans, rollover, stale drafts, reminders.
struct MonthScheduler: Service {
    static let recheck: TimeInterval = 600
    static let lastRolloverKey = "last_rollover_month"
    static let lastReminderKey = "last_reminder_date"

    let context: DaemonContext
    let logger: Logger

    /// The first check runs before READY (Daemon.run); this loop does the later ones.
    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                let now = context.clock.now()
                let wait = min(Self.recheck, Self.nextBoundary(after: now, in: context.timeZone).timeIntervalSince(now) + 1)
                try? await Pause.sleep(for: .milliseconds(Int64(max(wait, 1) * 1000)))
                guard !Task.isCancelled else { return }  // shutting down, not a due check
                await check()
            }
        }
    }

    /// The first instant of the next month in `timeZone`.
    static func nextBoundary(after instant: Date, in timeZone: TimeZone) -> Date {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let month = MonthLabel(instant, in: timeZone)
        let start = calendar.date(from: DateComponents(year: month.year, month: month.month, day: 1))!
        return calendar.date(byAdding: .month, value: 1, to: start)!
    }

    func check() async {
        do {
            try await rollover()
            try await remind()
        } catch is CancellationError {
            return
        } catch {
            logger.error("monthly check failed: \(error)")
        }
    }

    private func rollover() async throws {
        let database = context.database
        let month = context.planner.currentMonth
        _ = try await context.planner.plans(for: month)
        let last = try await database.metadata(Self.lastRolloverKey)
        guard last != month.description else { return }
        try await database.setMetadata(Self.lastRolloverKey, month.description)
        logger.notice("month rolled over", metadata: ["from": "\(last ?? "-")", "to": "\(month)"])
        context.events.publish("month.rolled_over", ["from": .optional(last), "to": .string(month.description)])
        let stale = try await database.stalePlans(current: month, offset: 0, limit: 1000)
        let overdue = try await database.overdueExecutions(current: month)
        if stale.total > 0 || !overdue.isEmpty {
            let months = Set(stale.items.map(\.month.description)).sorted()
            context.events.publish("plans.stale", ["count": .int(stale.total), "months": .array(months.map(JSONValue.string)),
                                                   "executing_months": .array(overdue.map { .string($0.description) })])
        }
    }

    /// From `reminder_day`, once a day: goals whose planned amount this month is not covered.
    private func remind() async throws {
        let database = context.database
        let today = context.today
        guard today.day >= context.liveConfig.current.reminderDay,
              try await database.metadata(Self.lastReminderKey) != today.description else { return }
        let month = context.planner.currentMonth
        let progress = try await MonthProgress.compute(month: month, context: context)
        let due = progress.filter { $0.remaining > 0 }
        guard !due.isEmpty else { return }
        // Marked only once sent: a goal that falls due later the same day is still reminded.
        try await database.setMetadata(Self.lastReminderKey, today.description)
        context.events.publish("reminder.due", [
            "month": .string(month.description),
            "goals": .array(due.map { item in
                ["goal_id": Wire.id(item.plan.goalID), "goal_name": .string(item.goalName),
                 "planned": Wire.money(item.plan.plannedAmount, item.plan.currency),
                 "contributed": Wire.money(item.contributed, item.plan.currency),
                 "remaining": Wire.money(item.remaining, item.plan.currency)]
            }),
        ])
    }
}

/// How much of each plan of a month is covered so far: the growth of the goal's allocations
/// since the month began, valued at current rates. (Month execution refines this with
/// timestamp-derived events.)
struct MonthProgress {
    var plan: MonthlyPlan
    var goalName: String
    var contributed: Decimal
    var remaining: Decimal { max(0, plan.plannedAmount - contributed) }

    static func compute(month: MonthLabel, context: DaemonContext) async throws -> [MonthProgress] {
        let plans = try await context.planner.plans(for: month)
        if let record = try await context.database.execution(month), record.status == .executing {
            let lines = try await ExecutionProgress.liveLines(record, context: context)
            return plans.compactMap { plan in
                lines.first { $0.goalID == plan.goalID }.map { MonthProgress(plan: plan, goalName: $0.goalName, contributed: $0.contributed) }
            }
        }
        let valuation = try await context.valuation()
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = context.timeZone
        let monthStart = calendar.date(from: DateComponents(year: month.year, month: month.month, day: 1))!
        var result: [MonthProgress] = []
        for plan in plans {
            guard let goal = valuation.portfolio.goals.first(where: { $0.id == plan.goalID }) else { continue }
            let rows = try await context.database.allocationHistory(asset: nil, goal: goal.id.uuidString, from: nil, to: nil)
            var contributed = Decimal(0)
            for (assetID, assetRows) in Dictionary(grouping: rows, by: \.assetID) {
                guard let asset = valuation.portfolio.assets.first(where: { $0.id == assetID }),
                      let conversion = valuation.portfolio.rates.conversion(from: asset.currency, to: goal.currency) else { continue }
                let now = AllocationTimeline.target(at: context.clock.now(), in: assetRows)
                let before = AllocationTimeline.target(at: monthStart.addingTimeInterval(-0.001), in: assetRows)
                contributed += (now - before) * conversion.rate
            }
            result.append(MonthProgress(plan: plan, goalName: goal.name, contributed: max(0, contributed)))
        }
        return result
    }
}

/// Publishes `goal.reached` the first time a goal's total reaches its target.
final class GoalWatcher: Sendable {
    private let reached: Mutex<Set<UUID>?> = Mutex(nil)
    let context: DaemonContext
    let logger: Logger

    init(context: DaemonContext, logger: Logger) {
        self.context = context
        self.logger = logger
    }

    func check() async {
        do {
            let valuation = try await context.valuation()
            let now = Set(context.activeGoals(valuation).filter { $0.currentTotal >= $0.goal.targetAmount }.map(\.goal.id))
            let newly: Set<UUID> = reached.withLock { known in
                defer { known = now }
                return known.map { now.subtracting($0) } ?? []
            }
            for id in newly {
                guard let goal = valuation.goal(id) else { continue }
                context.events.publish("goal.reached", ["goal_id": Wire.id(id), "goal_name": .string(goal.goal.name),
                                                         "current_total": Wire.money(goal.currentTotal, goal.goal.currency),
                                                         "target_amount": Wire.money(goal.goal.targetAmount, goal.goal.currency)])
            }
        } catch is CancellationError {
            return
        } catch {
            logger.error("goal check failed: \(error)")
        }
    }
}
