import Foundation
import SavingsCore
import SavingsRPC

/// `goal.contribute` and its undo: "I saved 200 EUR" in one call.
enum ContributionMethods {
    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        let database = context.database

        registry.register(MethodSpec(
            "goal.contribute", summary: "Record money saved for a goal: a deposit plus the same allocation increase.",
            params: [
                .required("goal", .reference, "the goal's id or name"),
                .required("amount", .decimal, "amount in the asset's units (the goal's currency by default), > 0"),
                .optional("asset", .reference, "which asset received it (default: the goal's one asset in its currency, else \"<CUR> savings\")"),
                .optional("date", .string, "when, ISO 8601 (default now; a past date shifts later history)"),
                .optional("note", .string, "free text"),
            ],
            result: ResultSpec("contribution", "contribution_id, transaction, asset, asset_created, goal", schema: ["type": "object"]),
            writes: true)) { params, _ in
            let amount = try Amount.parse(try params.requiredDecimalText("amount"))
            let contribution = try await database.contribute(
                goal: try params.requiredString("goal"), amount: amount, asset: params.string("asset"),
                date: try context.effectiveDate(params.string("date")), note: try GoalRules.validNotes(params.string("note")),
                now: context.clock.now(), timeZone: context.timeZone)
            let valuation = try await context.valuation()
            let currency = context.liveConfig.current.displayCurrency
            return [
                "contribution_id": Wire.id(contribution.id),
                "transaction": Wire.transaction(contribution.transaction, asset: contribution.asset),
                "asset": valuation.asset(contribution.asset.id, valueCurrency: currency).map(Wire.asset) ?? .null,
                "asset_created": .bool(contribution.assetCreated),
                "goal": Wire.goal(valuation.figures(for: contribution.goal)),
            ]
        }

        registry.register(MethodSpec(
            "goal.undo_contribution", summary: "Revert a contribution (deposit and allocation) within the undo window.",
            params: [.required("contribution_id", .string, "the id goal.contribute returned")],
            result: ResultSpec("undone", "{\"undone\": true, \"goal\": goal}", schema: ["type": "object"]),
            writes: true)) { params, _ in
            let goal = try await database.undoContribution(
                try params.requiredString("contribution_id"),
                undoWindow: TimeInterval(context.liveConfig.current.undoWindow), now: context.clock.now())
            return ["undone": true, "goal": try await GoalMethods.encode(goal, context: context)]
        }
    }
}
