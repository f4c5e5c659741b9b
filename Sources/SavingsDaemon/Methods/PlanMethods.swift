import Foundation
import SavingsCore
import SavingsRPC
import SavingsStore

/// `plan.*`: persisted monthly plans, their overrides, flex, and stale drafts.
enum PlanMethods {
    static let planAddress: [ParamSpec] = [
        .optional("plan", .string, "the plan id"),
        .optional("goal", .reference, "or: the goal's id or name..."),
        .optional("month", .string, "...and the month, YYYY-MM (default the current month)"),
    ]
    static let planResult = ResultSpec("plan", "a monthly plan", schema: Schema.ref("Plan"))

    static func reference(_ params: Params, context: DaemonContext) throws -> PlanReference {
        if let plan = params.string("plan") {
            guard !params.has("goal"), !params.has("month") else {
                throw RPCError.invalidParams("give either plan, or goal (and month), not both", param: "plan")
            }
            return .id(plan)
        }
        guard let goal = params.string("goal") else {
            throw RPCError.invalidParams("give plan, or goal (and month)", param: "plan")
        }
        return .goal(goal, try month(params, context: context))
    }

    static func month(_ params: Params, context: DaemonContext) throws -> MonthLabel {
        try params.string("month").map { try MonthLabel(parsing: $0) } ?? context.planner.currentMonth
    }

    /// Plans with goal names, from one read of the goals.
    static func encode(_ plans: [MonthlyPlan], context: DaemonContext) async throws -> [JSONValue] {
        let names = Dictionary(uniqueKeysWithValues: try await context.database.goals(includeArchived: true).map { ($0.id, $0.name) })
        return plans.map { Wire.plan($0, goalName: names[$0.goalID] ?? "") }
    }

    static func encode(_ plan: MonthlyPlan, context: DaemonContext) async throws -> JSONValue {
        try await encode([plan], context: context)[0]
    }

    /// Converts amounts to the display currency with current rates; a missing rate is an error.
    static func converter(_ rates: RateTable, to currency: CurrencyCode) -> (Decimal, CurrencyCode) throws -> Decimal {
        { amount, from in
            guard let conversion = rates.conversion(from: from, to: currency) else {
                let pair = RateTable.missingPair(from, currency)
                throw DomainError(.rateUnavailable, "no rate for \(pair) to total the plans", details: ["missing": pair])
            }
            return amount * conversion.rate
        }
    }

    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        let database = context.database

        registry.register(MethodSpec(
            "plan.list", summary: "The month's plans; missing ones are created for the current and future months.",
            params: [.optional("month", .string, "YYYY-MM (default the current month)")],
            result: ResultSpec("plans", "month, plans, totals, stale_count", schema: Schema.object([
                "month": Schema.month, "plans": Schema.array(Schema.ref("Plan")),
                "totals": Schema.object(["planned": Schema.decimal, "currency": Schema.currency, "incomplete": Schema.boolean,
                                         "missing_rates": Schema.array(Schema.pair)]),
                "stale_count": Schema.count,
            ])),
            // Creating missing plans is idempotent get-or-create, not a change a reader makes.
            writes: false)) { params, _ in
            let month = try month(params, context: context)
            let plans = try await context.planner.plans(for: month)
            let currency = context.liveConfig.current.displayCurrency
            let rates = try await context.valuation().portfolio.rates
            var missing = Set<String>()
            var total = Decimal(0)
            for plan in plans {
                if let conversion = rates.conversion(from: plan.currency, to: currency) {
                    total += plan.plannedAmount * conversion.rate
                } else if plan.plannedAmount > 0 {
                    missing.insert(RateTable.missingPair(plan.currency, currency))
                }
            }
            let stale = try await database.stalePlans(current: context.planner.currentMonth, offset: 0, limit: 0).total
            return [
                "month": .string(month.description),
                "plans": .array(try await encode(plans, context: context)),
                "totals": ["planned": Wire.money(total, currency), "currency": .string(currency.code),
                           "incomplete": .bool(!missing.isEmpty), "missing_rates": .array(missing.sorted().map(JSONValue.string))],
                "stale_count": .int(stale),
            ]
        }

        registry.register(MethodSpec("plan.get", summary: "One plan, by id or by goal and month.", params: planAddress,
                                     result: planResult, writes: false)) { params, _ in
            try await encode(try await database.plan(try reference(params, context: context)), context: context)
        }

        func override(_ name: String, summary: String, extra: [ParamSpec],
                      change: @escaping @Sendable (Params) throws -> @Sendable (inout MonthlyPlan) throws -> Void) {
            registry.register(MethodSpec(name, summary: summary, params: planAddress + extra, result: planResult, writes: true)) { params, _ in
                let apply = try change(params)
                let plan = try await database.updatePlan(try reference(params, context: context), now: context.clock.now(), apply)
                return try await encode(plan, context: context)
            }
        }

        override("plan.set_amount", summary: "Set the plan's own amount (null returns to the requirement).",
                 extra: [ParamSpec("amount", .decimal, required: true, nullable: true, "the amount, >= 0, or null")]) { params in
            let amount = try params.isNull("amount") ? nil : Allocation.validAmount(try params.requiredDecimalText("amount"))
            return { $0.customAmount = amount }
        }
        override("plan.protect", summary: "Protect a plan from flex adjustments (or unprotect it).",
                 extra: [ParamSpec("protected", .boolean, required: true, "true protects")]) { params in
            let value = params.bool("protected") ?? true
            return { $0.isProtected = value }
        }
        override("plan.skip", summary: "Skip this month for the goal (planned 0), or un-skip it.",
                 extra: [ParamSpec("skipped", .boolean, required: true, "true skips")]) { params in
            let value = params.bool("skipped") ?? true
            return { $0.isSkipped = value }
        }

        registry.register(MethodSpec(
            "plan.recalculate", summary: "Recompute the requirement from today's figures and clear the custom amount.",
            params: planAddress, result: planResult, writes: true)) { params, _ in
            let reference = try reference(params, context: context)
            let current = try await database.plan(reference)
            let valuation = try await context.valuation()
            guard let goal = valuation.portfolio.goals.first(where: { $0.id == current.goalID }) else {
                throw DomainError.notFound("goal", current.goalID.uuidString)
            }
            let requirement = context.planner.requirement(for: goal, month: current.month, valuation: valuation)
            let plan = try await database.updatePlan(reference, now: context.clock.now()) { plan in
                plan.requirement = requirement
                plan.customAmount = nil
                plan.needsReview = false
            }
            return try await encode(plan, context: context)
        }

        for (name, writes) in [("plan.flex_preview", false), ("plan.flex_apply", true)] {
            registry.register(MethodSpec(
                name, summary: writes ? "Scale the month's flexible plans and save their new amounts."
                    : "Show what scaling the month's flexible plans would do (writes nothing).",
                params: [
                    .optional("month", .string, "YYYY-MM (default the current month)"),
                    .optional("factor", .decimal, "0.5 to 1.5"),
                    .optional("budget", .decimal, "or: the total to fit, in the display currency"),
                ],
                result: ResultSpec("flex", "plans, factor, total, shortfall, surplus", schema: Self.flexResult),
                writes: writes)) { params, _ in
                try await flex(params, apply: writes, context: context)
            }
        }

        registry.register(MethodSpec(
            "plan.stale", summary: "Drafts of past months nobody executed, a page at a time.",
            params: [.optional("page", .integer(min: 1, max: nil), "1-based page"),
                     .optional("page_size", .integer(min: 1, max: 100), "items per page (default [planning] stale_page_size)")],
            result: ResultSpec("stale", "items, total, page, pages, actions", schema: Schema.object([
                "items": Schema.array(Schema.ref("Plan")), "total": Schema.count, "page": Schema.count, "page_size": Schema.count,
                "pages": Schema.count,
                "executing_months": Schema.described(Schema.array(Schema.month), "months still executing after they ended"),
                "actions": Schema.described(Schema.object(["complete": Schema.string, "skip": Schema.string, "delete": Schema.string]),
                                            "what each action of plan.resolve_stale does"),
            ])),
            writes: false)) { params, _ in
            let page = params.int("page") ?? 1
            let size = params.int("page_size") ?? context.liveConfig.current.stalePageSize
            let result = try await database.stalePlans(current: context.planner.currentMonth, offset: (page - 1) * size, limit: size)
            return [
                "items": .array(try await encode(result.items, context: context)),
                "total": .int(result.total), "page": .int(page), "page_size": .int(size),
                "pages": .int((result.total + size - 1) / size),
                // A month still executing after it ended is reported, never closed for the user.
                "executing_months": .array(try await database.overdueExecutions(current: context.planner.currentMonth)
                    .map { .string($0.description) }),
                "actions": [
                    "complete": "counted as fulfilled: the month is closed as if the plan was met",
                    "skip": "counted as intentionally skipped: the month is closed with nothing planned",
                    "delete": "no record of that month is kept for the goal",
                ],
            ]
        }

        registry.register(MethodSpec(
            "plan.resolve_stale", summary: "Resolve a stale draft: complete, skip or delete it.",
            params: [.required("plan", .string, "the plan id"), .required("action", .string, "complete, skip or delete")],
            result: ResultSpec("resolved", "{\"resolved\": action, \"plan\": plan|null}", schema: Schema.object([
                "resolved": Schema.enumeration(StaleAction.self),
                "plan": Schema.described(Schema.nullable(Schema.ref("Plan")), "null after delete"),
            ])),
            writes: true)) { params, _ in
            let actionText = try params.requiredString("action")
            guard let action = StaleAction(rawValue: actionText) else {
                throw DomainError.invalidField("action", "must be complete, skip or delete, not '\(actionText)'")
            }
            let plan = try await database.resolveStale(try params.requiredString("plan"), action: action,
                                                       current: context.planner.currentMonth, now: context.clock.now())
            return ["resolved": .string(action.rawValue), "plan": try await plan.asyncMap { try await encode($0, context: context) } ?? .null]
        }
    }

    static let flexResult = Schema.object([
        "month": Schema.month, "factor": Schema.decimal,
        "plans": Schema.array(Schema.object([
            "plan_id": Schema.id, "goal_id": Schema.id, "goal_name": Schema.string,
            "flex_state": Schema.enumeration(MonthlyPlan.FlexState.self), "currency": Schema.currency,
            "effective_amount": Schema.decimal, "adjusted_amount": Schema.described(Schema.decimal, "the amount after scaling"),
        ])),
        "total": Schema.described(Schema.decimal, "the adjusted plans' total in `currency`"), "currency": Schema.currency,
        "shortfall": Schema.described(Schema.nullable(Schema.decimal), "how far the total stays above the budget"),
        "surplus": Schema.described(Schema.nullable(Schema.decimal), "how far the total stays below the budget"),
        "applied": Schema.boolean,
    ])

    static func flex(_ params: Params, apply: Bool, context: DaemonContext) async throws -> JSONValue {
        let month = try month(params, context: context)
        let plans = try await context.planner.plans(for: month)
        let currency = context.liveConfig.current.displayCurrency
        let toDisplay = converter(try await context.valuation().portfolio.rates, to: currency)
        let outcome: FlexCalculator.Outcome
        switch (params.decimalText("factor"), params.decimalText("budget")) {
        case (let factor?, nil):
            outcome = try FlexCalculator.byFactor(plans, factor: try FlexCalculator.validFactor(factor), toDisplay: toDisplay)
        case (nil, let budget?):
            let amount = try Allocation.validAmount(budget, field: "budget")
            outcome = try FlexCalculator.byBudget(plans, budget: amount, toDisplay: toDisplay)
        default:
            throw RPCError.invalidParams("give exactly one of factor or budget", param: "factor")
        }
        if apply {
            for line in outcome.lines where line.plan.flexState == .flexible {
                _ = try await context.database.updatePlan(.id(line.plan.id.uuidString), now: context.clock.now()) { plan in
                    plan.customAmount = line.adjusted
                }
            }
        }
        let names = Dictionary(uniqueKeysWithValues: try await context.database.goals(includeArchived: true).map { ($0.id, $0.name) })
        return [
            "month": .string(month.description),
            "factor": .string(Amount.plainText(outcome.factor)),
            "plans": .array(outcome.lines.map { line in
                ["plan_id": Wire.id(line.plan.id), "goal_id": Wire.id(line.plan.goalID), "goal_name": .string(names[line.plan.goalID] ?? ""),
                 "flex_state": .string(line.plan.flexState.rawValue), "currency": .string(line.plan.currency.code),
                 "effective_amount": Wire.money(line.plan.effectiveAmount, line.plan.currency),
                 "adjusted_amount": Wire.money(line.adjusted, line.plan.currency)]
            }),
            "total": Wire.money(outcome.total, currency), "currency": .string(currency.code),
            "shortfall": outcome.shortfall.map { Wire.money($0, currency) } ?? .null,
            "surplus": outcome.surplus.map { Wire.money($0, currency) } ?? .null,
            "applied": .bool(apply),
        ]
    }
}
