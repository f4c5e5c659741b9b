import Foundation
import SavingsCore
import SavingsStore

/// The one path that creates monthly plans (plan.list, the scheduler, goal.contribute "plan"):
/// existing plans are never recalculated; missing ones get today's requirement.
struct Planner: Sendable {
    let context: DaemonContext

    var currentMonth: MonthLabel { MonthLabel(context.clock.now(), in: context.timeZone) }

    /// The month's plans, creating the missing ones for the current and future months.
    func plans(for month: MonthLabel) async throws -> [MonthlyPlan] {
        let database = context.database
        guard month >= currentMonth, !(try await database.goalsWithoutPlan(month: month)).isEmpty else {
            return try await database.plans(month: month)
        }
        let valuation = try await context.valuation()
        var requirements: [UUID: Requirement] = [:]
        for goal in valuation.portfolio.goals where !goal.archived {
            requirements[goal.id] = requirement(for: goal, month: month, valuation: valuation)
        }
        let result = try await database.createPlans(month: month, requirements: requirements, now: context.clock.now())
        if !result.created.isEmpty {
            context.events.publish("plans.created", ["month": .string(month.description),
                                              "plan_ids": .array(result.created.map { .string($0.uuidString.lowercased()) })])
        }
        return result.plans
    }

    func requirement(for goal: Goal, month: MonthLabel, valuation: Valuation) -> Requirement {
        RequirementCalculator.requirement(for: goal, currentTotal: valuation.figures(for: goal).currentTotal, month: month,
                                          thresholds: context.liveConfig.current.thresholds)
    }
}
