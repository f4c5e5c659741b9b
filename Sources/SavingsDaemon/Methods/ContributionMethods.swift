import Foundation
import SavingsCore
import SavingsRPC

/// `goal.contribute` and its undo: "I saved 200 EUR" in one call.
enum ContributionMethods {
    /// A decimal, or "plan"/"half": this month's planned amount not yet covered (or half of it).
    static func amount(_ params: Params, context: DaemonContext) async throws -> Decimal {
        let text = try params.requiredDecimalText("amount")
        guard text == "plan" || text == "half" else { return try Amount.parse(text) }
        let goal = try await context.database.goal(try params.requiredString("goal"))
        if let asset = params.string("asset"), try await context.database.asset(asset).currency != goal.currency {
            throw DomainError(.invalidAmount, "amount: \"\(text)\" is in \(goal.currency); give a number for an asset in another currency",
                              details: ["field": "amount"])
        }
        let month = context.planner.currentMonth
        let progress = try await MonthProgress.compute(month: month, context: context)
        guard let item = progress.first(where: { $0.plan.goalID == goal.id }), item.remaining > 0 else {
            throw DomainError(.invalidAmount, "amount: nothing of \(goal.name)'s \(month) plan is left to contribute",
                              details: ["field": "amount"])
        }
        guard text == "half" else { return item.remaining }
        var half = item.remaining / 2
        var rounded = Decimal()
        NSDecimalRound(&rounded, &half, goal.currency.minorUnits, .up)
        return rounded
    }

    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        let database = context.database

        registry.register(MethodSpec(
            "goal.contribute", summary: "Record money saved for a goal: a deposit plus the same allocation increase.",
            params: [
                .required("goal", .reference, "the goal's id or name"),
                .required("amount", .decimal, "amount in the asset's units (the goal's currency by default), > 0; or \"plan\" / \"half\" of this month's planned amount still missing"),
                .optional("asset", .reference, "which asset received it (default: the goal's one asset in its currency, else \"<CUR> savings\")"),
                .optional("date", .string, "when: an ISO 8601 timestamp, or a date YYYY-MM-DD (the start of that day in the configured zone); default now; a past date shifts later history"),
                .optional("note", .string, "free text"),
            ],
            result: ResultSpec("contribution", "contribution_id, transaction, asset, asset_created, goal", schema: Schema.object([
                "contribution_id": Schema.id, "transaction": Schema.ref("Transaction"), "asset": Schema.ref("Asset"),
                "asset_created": Schema.described(Schema.boolean, "the asset was made for this contribution"), "goal": Schema.ref("Goal"),
            ])),
            writes: true)) { params, _ in
            let amount = try await amount(params, context: context)
            let contribution = try await database.contribute(
                goal: try params.requiredString("goal"), amount: amount, asset: params.string("asset"),
                date: try context.effectiveDate(params.string("date")), note: try GoalRules.validNotes(params.string("note")),
                now: context.clock.now(), timeZone: context.timeZone)
            let valuation = try await context.valuation()
            let currency = context.liveConfig.current.displayCurrency
            return [
                "contribution_id": Wire.id(contribution.id),
                "transaction": Wire.transaction(contribution.transaction, asset: contribution.asset),
                "asset": try await valuation.asset(contribution.asset.id, valueCurrency: currency).asyncMap {
                    try await AssetMethods.encode($0, context: context)
                } ?? .null,
                "asset_created": .bool(contribution.assetCreated),
                "goal": context.goalJSON(valuation.figures(for: contribution.goal)),
            ]
        }

        registry.register(MethodSpec(
            "goal.undo_contribution", summary: "Revert a contribution (deposit and allocation) within the undo window.",
            params: [.required("contribution_id", .string, "the id goal.contribute returned")],
            result: ResultSpec("undone", "{\"undone\": true, \"goal\": goal}",
                               schema: Schema.object(["undone": Schema.constant(true), "goal": Schema.ref("Goal")])),
            writes: true)) { params, _ in
            let goal = try await database.undoContribution(
                try params.requiredString("contribution_id"),
                undoWindow: TimeInterval(context.liveConfig.current.undoWindow), now: context.clock.now())
            return ["undone": true, "goal": try await GoalMethods.encode(goal, context: context)]
        }
    }
}
