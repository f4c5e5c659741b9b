import Foundation

/// SPEC 4.3: what to put aside in a month to reach the target by the deadline.
public struct Requirement: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable {
        case onTrack = "on_track"
        case attention
        case critical
        case completed
    }

    public var monthsRemaining: Int
    public var requiredMonthly: Decimal
    public var remaining: Decimal
    public var status: Status

    public init(monthsRemaining: Int, requiredMonthly: Decimal, remaining: Decimal, status: Status) {
        self.monthsRemaining = monthsRemaining
        self.requiredMonthly = requiredMonthly
        self.remaining = remaining
        self.status = status
    }
}

/// Thresholds (in goal currency) above which a monthly requirement needs attention.
public struct PlanningThresholds: Sendable, Equatable {
    public var attention: Decimal
    public var critical: Decimal

    public init(attention: Decimal = 5000, critical: Decimal = 10000) {
        self.attention = attention
        self.critical = critical
    }
}

public enum RequirementCalculator {
    /// Calendar months from `month` to the deadline's month, both included; at least 1.
    public static func monthsRemaining(deadline: CalendarDate, month: MonthLabel) -> Int {
        max(1, MonthLabel(year: deadline.year, month: deadline.month).index - month.index + 1)
    }

    /// The requirement of a goal for `month`, given what it holds now. Rounded up to the
    /// currency's minor unit so that paying it every month reaches the target.
    public static func requirement(for goal: Goal, currentTotal: Decimal, month: MonthLabel,
                                   thresholds: PlanningThresholds) -> Requirement {
        // A total valued at rates carries up to twice the digits of an amount: the remaining
        // figure is kept to an amount's precision, so the plan that stores it reads back.
        var exactRemaining = max(0, goal.targetAmount - currentTotal)
        var remaining = Decimal()
        NSDecimalRound(&remaining, &exactRemaining, Amount.maxFractionDigits, .plain)
        let months = monthsRemaining(deadline: goal.deadline, month: month)
        var exact = remaining / Decimal(months)
        var required = Decimal()
        NSDecimalRound(&required, &exact, goal.currency.minorUnits, .up)
        let status: Requirement.Status
        if remaining == 0 {
            status = .completed
        } else if required > thresholds.critical {
            status = .critical
        } else if required > thresholds.attention || months <= 1 {
            status = .attention
        } else {
            status = .onTrack
        }
        return Requirement(monthsRemaining: months, requiredMonthly: required, remaining: remaining, status: status)
    }
}

/// One goal's plan for one month, persisted once and never recalculated behind the user's back.
public struct MonthlyPlan: Sendable, Equatable, Identifiable {
    public enum State: String, Sendable, CaseIterable {
        case draft
        case executing
        case completed
    }

    public enum FlexState: String, Sendable, CaseIterable {
        case flexible
        case protected
        case skipped
    }

    public var id: UUID
    public var goalID: UUID
    public var month: MonthLabel
    public var currency: CurrencyCode
    public var requirement: Requirement
    public var state: State
    public var customAmount: Decimal?
    public var isProtected: Bool
    public var isSkipped: Bool
    public var needsReview: Bool
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, goalID: UUID, month: MonthLabel, currency: CurrencyCode, requirement: Requirement, state: State,
                customAmount: Decimal?, isProtected: Bool, isSkipped: Bool, needsReview: Bool, createdAt: Date, updatedAt: Date) {
        self.id = id
        self.goalID = goalID
        self.month = month
        self.currency = currency
        self.requirement = requirement
        self.state = state
        self.customAmount = customAmount
        self.isProtected = isProtected
        self.isSkipped = isSkipped
        self.needsReview = needsReview
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// SPEC 4.4: the user's amount if set, else the requirement.
    public var effectiveAmount: Decimal { customAmount ?? requirement.requiredMonthly }
    /// What the month asks for: nothing when skipped.
    public var plannedAmount: Decimal { isSkipped ? 0 : effectiveAmount }
    public var flexState: FlexState { isSkipped ? .skipped : isProtected ? .protected : .flexible }

    /// A stale draft: a past month's plan nobody executed or resolved (SPEC 5.4).
    public func isStale(current: MonthLabel) -> Bool { state == .draft && month < current }
}

/// SPEC 4.4: scale this month's flexible plans by a factor, or to fit a budget.
public enum FlexCalculator {
    public static let factorRange: ClosedRange<Decimal> = 0.5...1.5

    public struct Line: Sendable, Equatable {
        public var plan: MonthlyPlan
        public var adjusted: Decimal
    }

    public struct Outcome: Sendable, Equatable {
        public var factor: Decimal
        public var lines: [Line]
        /// Sum of adjusted amounts in the display currency.
        public var total: Decimal
        public var shortfall: Decimal?
        public var surplus: Decimal?
    }

    public static func validFactor(_ text: String) throws -> Decimal {
        let factor = try Amount.parse(text, field: "factor")
        guard factorRange.contains(factor) else {
            throw DomainError.invalidField("factor", "must be between 0.5 and 1.5 (got \(text))")
        }
        return factor
    }

    /// Skipped plans count 0, protected ones keep their amount, flexible ones are scaled and
    /// rounded to their currency's minor units.
    public static func adjusted(_ plan: MonthlyPlan, factor: Decimal) -> Decimal {
        switch plan.flexState {
        case .skipped: return 0
        case .protected: return plan.effectiveAmount
        case .flexible:
            var exact = plan.effectiveAmount * factor
            var rounded = Decimal()
            NSDecimalRound(&rounded, &exact, plan.currency.minorUnits, .bankers)
            return rounded
        }
    }

    /// `toDisplay` converts an amount in a plan's currency to the display currency; nil
    /// means the rate is missing, which makes totals impossible (reported by the caller).
    public static func byFactor(_ plans: [MonthlyPlan], factor: Decimal,
                                toDisplay: (Decimal, CurrencyCode) throws -> Decimal) rethrows -> Outcome {
        let lines = plans.map { Line(plan: $0, adjusted: adjusted($0, factor: factor)) }
        let total = try lines.reduce(Decimal(0)) { $0 + (try toDisplay($1.adjusted, $1.plan.currency)) }
        return Outcome(factor: factor, lines: lines, total: total, shortfall: nil, surplus: nil)
    }

    /// Chooses f so that protected + f x flexible = budget, clamped to [0.5, 1.5], and reports
    /// what the clamp leaves uncovered (shortfall) or unused (surplus).
    public static func byBudget(_ plans: [MonthlyPlan], budget: Decimal,
                                toDisplay: (Decimal, CurrencyCode) throws -> Decimal) throws -> Outcome {
        var protected = Decimal(0), flexible = Decimal(0)
        for plan in plans {
            switch plan.flexState {
            case .skipped: continue
            case .protected: protected += try toDisplay(plan.effectiveAmount, plan.currency)
            case .flexible: flexible += try toDisplay(plan.effectiveAmount, plan.currency)
            }
        }
        var factor: Decimal = 1
        if flexible > 0 {
            var exact = (budget - protected) / flexible
            NSDecimalRound(&factor, &exact, 4, .down)
            factor = min(max(factor, factorRange.lowerBound), factorRange.upperBound)
        }
        var outcome = try byFactor(plans, factor: factor, toDisplay: toDisplay)
        let minimum = protected + flexible * factorRange.lowerBound
        let maximum = protected + flexible * factorRange.upperBound
        if budget < minimum { outcome.shortfall = minimum - budget }
        if budget > maximum { outcome.surplus = budget - maximum }
        return outcome
    }
}
