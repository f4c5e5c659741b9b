import Foundation
import GRDB
import SavingsCore

/// The `monthly_plan` row.
struct PlanRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "monthly_plan"
    var id: String
    var goalID: String
    var monthLabel: String
    var currency: String
    var requiredMonthly: String
    var remainingAmount: String
    var monthsRemaining: Int
    var status: String
    var state: String
    var customAmount: String?
    var isProtected: Bool
    var isSkipped: Bool
    var needsReview: Bool
    var createdAt: String
    var updatedAt: String

    enum CodingKeys: String, CodingKey {
        case id, currency, status, state
        case goalID = "goal_id"
        case monthLabel = "month_label"
        case requiredMonthly = "required_monthly"
        case remainingAmount = "remaining_amount"
        case monthsRemaining = "months_remaining"
        case customAmount = "custom_amount"
        case isProtected = "is_protected"
        case isSkipped = "is_skipped"
        case needsReview = "needs_review"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    init(_ plan: MonthlyPlan) {
        id = StoreKey.id(plan.id)
        goalID = StoreKey.id(plan.goalID)
        monthLabel = plan.month.description
        currency = plan.currency.code
        requiredMonthly = Amount.plainText(plan.requirement.requiredMonthly)
        remainingAmount = Amount.plainText(plan.requirement.remaining)
        monthsRemaining = plan.requirement.monthsRemaining
        status = plan.requirement.status.rawValue
        state = plan.state.rawValue
        customAmount = plan.customAmount.map(Amount.plainText)
        isProtected = plan.isProtected
        isSkipped = plan.isSkipped
        needsReview = plan.needsReview
        createdAt = Timestamp.format(plan.createdAt)
        updatedAt = Timestamp.format(plan.updatedAt)
    }

    /// Read by column name (the month's plans are read after each write for its progress;
    /// Decodable took most of that read).
    init(row: Row) throws {
        id = row["id"]
        goalID = row["goal_id"]
        monthLabel = row["month_label"]
        currency = row["currency"]
        requiredMonthly = row["required_monthly"]
        remainingAmount = row["remaining_amount"]
        monthsRemaining = row["months_remaining"]
        status = row["status"]
        state = row["state"]
        customAmount = row["custom_amount"]
        isProtected = row["is_protected"]
        isSkipped = row["is_skipped"]
        needsReview = row["needs_review"]
        createdAt = row["created_at"]
        updatedAt = row["updated_at"]
    }

    func plan() throws -> MonthlyPlan {
        try StoreKey.decoding("plan \(id)") {
            guard let status = Requirement.Status(rawValue: status), let state = MonthlyPlan.State(rawValue: state) else {
                throw StoreError.corrupt("plan status \(status)/\(state)")
            }
            return MonthlyPlan(
                id: try StoreKey.uuid(id), goalID: try StoreKey.uuid(goalID), month: try MonthLabel(parsing: monthLabel),
                currency: try CurrencyCode(currency),
                requirement: Requirement(monthsRemaining: monthsRemaining, requiredMonthly: try Amount.parse(requiredMonthly),
                                         remaining: try Amount.parse(remainingAmount), status: status),
                state: state, customAmount: try customAmount.map { try Amount.parse($0) }, isProtected: isProtected,
                isSkipped: isSkipped, needsReview: needsReview, createdAt: try Timestamp.parse(createdAt, field: "created_at"),
                updatedAt: try Timestamp.parse(updatedAt, field: "updated_at"))
        }
    }
}
