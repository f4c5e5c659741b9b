import Foundation
import SavingsCore

extension Wire {
    public static func plan(_ plan: MonthlyPlan, goalName: String) -> JSONValue {
        let currency = plan.currency
        return [
            "id": id(plan.id),
            "goal_id": id(plan.goalID),
            "goal_name": .string(goalName),
            "month": .string(plan.month.description),
            "currency": .string(currency.code),
            "required_monthly": money(plan.requirement.requiredMonthly, currency),
            "remaining_amount": money(plan.requirement.remaining, currency),
            "months_remaining": .int(plan.requirement.monthsRemaining),
            "status": .string(plan.requirement.status.rawValue),
            "state": .string(plan.state.rawValue),
            "custom_amount": plan.customAmount.map { money($0, currency) } ?? .null,
            "effective_amount": money(plan.effectiveAmount, currency),
            "planned_amount": money(plan.plannedAmount, currency),
            "is_protected": .bool(plan.isProtected),
            "is_skipped": .bool(plan.isSkipped),
            "flex_state": .string(plan.flexState.rawValue),
            "needs_review": .bool(plan.needsReview),
            "created_at": timestamp(plan.createdAt),
            "updated_at": timestamp(plan.updatedAt),
        ]
    }
}
