import Foundation

/// The earlier app's export (`"format": "cryptosavings-legacy"`), already type-checked. Ids are
/// the app's own strings; `raw` keeps each entity's original JSON for the archive.
public struct LegacyDocument: Sendable {
    public struct Goal: Sendable {
        public var id: String
        public var name: String
        public var currency: CurrencyCode
        public var targetAmount: Decimal
        public var deadline: CalendarDate
        public var startDate: CalendarDate?
        public var createdAt: Date?
        public init(id: String, name: String, currency: CurrencyCode, targetAmount: Decimal, deadline: CalendarDate,
                    startDate: CalendarDate?, createdAt: Date?) {
            self.id = id; self.name = name; self.currency = currency; self.targetAmount = targetAmount
            self.deadline = deadline; self.startDate = startDate; self.createdAt = createdAt
        }
    }

    public struct Transaction: Sendable {
        public var id: String
        public var amount: Decimal
        public var date: Date
        public var source: String?
        public init(id: String, amount: Decimal, date: Date, source: String?) {
            self.id = id; self.amount = amount; self.date = date; self.source = source
        }
    }

    public struct Asset: Sendable {
        public var id: String
        public var name: String
        public var currency: CurrencyCode
        public var createdAt: Date?
        public var balance: Decimal?
        public var transactions: [Transaction]
        public init(id: String, name: String, currency: CurrencyCode, createdAt: Date?, balance: Decimal?, transactions: [Transaction]) {
            self.id = id; self.name = name; self.currency = currency; self.createdAt = createdAt
            self.balance = balance; self.transactions = transactions
        }
    }

    public struct Allocation: Sendable {
        public var assetID: String
        public var goalID: String
        /// A fraction: 0.5 is 50 %.
        public var percentage: Decimal
        public init(assetID: String, goalID: String, percentage: Decimal) {
            self.assetID = assetID; self.goalID = goalID; self.percentage = percentage
        }
    }

    public struct Plan: Sendable {
        public var id: String
        public var goalID: String?
        public var month: MonthLabel?
        public var requiredMonthly: Decimal
        public var customAmount: Decimal?
        public var isProtected: Bool
        public var isSkipped: Bool
        public var state: String?
        public var createdDate: Date?
        public var lastModified: Date?
        public var executionRecordID: String?
        public var raw: String
        public init(id: String, goalID: String?, month: MonthLabel?, requiredMonthly: Decimal, customAmount: Decimal?, isProtected: Bool,
                    isSkipped: Bool, state: String?, createdDate: Date?, lastModified: Date?, executionRecordID: String?, raw: String) {
            self.id = id; self.goalID = goalID; self.month = month; self.requiredMonthly = requiredMonthly
            self.customAmount = customAmount; self.isProtected = isProtected; self.isSkipped = isSkipped; self.state = state
            self.createdDate = createdDate; self.lastModified = lastModified; self.executionRecordID = executionRecordID; self.raw = raw
        }
    }

    public struct Contribution: Sendable {
        public var id: String
        public var goalID: String?
        public var assetID: String?
        public var amount: Decimal
        public var date: Date
        public var month: MonthLabel?
        public var currency: CurrencyCode?
        public var sourceType: String?
        public var planID: String?
        public var raw: String
        public init(id: String, goalID: String?, assetID: String?, amount: Decimal, date: Date, month: MonthLabel?,
                    currency: CurrencyCode?, sourceType: String?, planID: String?, raw: String) {
            self.id = id; self.goalID = goalID; self.assetID = assetID; self.amount = amount; self.date = date; self.month = month
            self.currency = currency; self.sourceType = sourceType; self.planID = planID; self.raw = raw
        }
    }

    public struct ExecutionRecord: Sendable {
        public var id: String
        public var month: MonthLabel
        public var status: String
        public var startedAt: Date?
        public var completedAt: Date?
        public init(id: String, month: MonthLabel, status: String, startedAt: Date?, completedAt: Date?) {
            self.id = id; self.month = month; self.status = status; self.startedAt = startedAt; self.completedAt = completedAt
        }
    }

    public var exportedAt: Date?
    public var goals: [Goal] = []
    public var assets: [Asset] = []
    public var allocations: [Allocation] = []
    public var plans: [Plan] = []
    public var contributions: [Contribution] = []
    public var executionRecords: [ExecutionRecord] = []

    public init() {}

    /// References must resolve; goals may be gone (their plans and contributions are archived),
    /// everything else must exist in the document.
    public func checkReferences() throws {
        func refuse(_ message: String) -> DomainError { DomainError.invalidField("document", message) }
        let goalIDs = Set(goals.map(\.id)), assetIDs = Set(assets.map(\.id))
        let planIDs = Set(plans.map(\.id)), recordIDs = Set(executionRecords.map(\.id))
        for (index, allocation) in allocations.enumerated() {
            guard assetIDs.contains(allocation.assetID) else { throw refuse("allocations[\(index)]: unknown asset_id '\(allocation.assetID)'") }
            guard goalIDs.contains(allocation.goalID) else { throw refuse("allocations[\(index)]: unknown goal_id '\(allocation.goalID)'") }
            guard allocation.percentage >= 0 else { throw refuse("allocations[\(index)]: percentage must not be negative") }
            guard allocation.percentage <= 1 else {
                throw refuse("allocations[\(index)]: percentage \(Amount.plainText(allocation.percentage)) is above 1 (a fraction: 0.5 is 50 %)")
            }
        }
        for (index, plan) in plans.enumerated() {
            if let record = plan.executionRecordID, !recordIDs.contains(record) {
                throw refuse("monthly_plans[\(index)]: unknown execution_record_id '\(record)'")
            }
        }
        for (index, contribution) in contributions.enumerated() {
            if let asset = contribution.assetID, !assetIDs.contains(asset) {
                throw refuse("contributions[\(index)]: unknown asset_id '\(asset)'")
            }
            if let plan = contribution.planID, !planIDs.contains(plan) {
                throw refuse("contributions[\(index)]: unknown plan_id '\(plan)'")
            }
        }
        for (kind, ids) in [("goals", goals.map(\.id)), ("assets", assets.map(\.id)), ("monthly_plans", plans.map(\.id)),
                            ("contributions", contributions.map(\.id))] where Set(ids).count != ids.count {
            throw refuse("\(kind): ids must be unique")
        }
    }

    /// A stable id in this database for an id of the earlier app: the same UUID when it is
    /// one, otherwise one derived from it, so importing twice finds the same rows.
    public static func uuid(_ legacyID: String, kind: String) -> UUID {
        if let uuid = UUID(uuidString: legacyID) { return uuid }
        let hex = Array(StableHash.hex128("legacy:\(kind):\(legacyID)"))
        let text = String(hex[0..<8]) + "-" + String(hex[8..<12]) + "-4" + String(hex[13..<16]) + "-a" + String(hex[17..<20])
            + "-" + String(hex[20..<32])
        return UUID(uuidString: text)!
    }
}
