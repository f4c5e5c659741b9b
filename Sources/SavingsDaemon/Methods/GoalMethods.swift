import SavingsCore
import SavingsRPC

/// `goal.*`: create, read, update, archive and delete savings goals.
enum GoalMethods {
    static let goalResult = ResultSpec("goal", "a goal with current_total, progress, remaining and funding",
                                       schema: Schema.ref("Goal"))
    static let reference = ParamSpec.required("goal", .reference, "the goal's id or unique name")

    /// A goal with its figures from the one valuation.
    static func encode(_ goal: Goal, context: DaemonContext) async throws -> JSONValue {
        context.goalJSON(try await context.valuation().figures(for: goal))
    }

    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        let database = context.database

        registry.register(MethodSpec(
            "goal.create", summary: "Create a savings goal.",
            params: [
                .required("name", .string, "unique name, 1-200 characters (case-insensitive)"),
                .required("currency", .string, "currency code, 2-10 letters or digits (EUR, BTC)"),
                .required("target_amount", .decimal, "the amount to reach, > 0"),
                .required("deadline", .date, "reach the target by this date (YYYY-MM-DD)"),
                .optional("start_date", .date, "when saving starts (default: today)"),
                .optional("notes", .string, "free text"),
            ],
            result: goalResult, writes: true)) { params, _ in
            let new = try NewGoal(
                name: try params.requiredString("name"), currency: try params.requiredString("currency"),
                targetAmount: try params.requiredDecimalText("target_amount"),
                deadline: try params.requiredString("deadline"), startDate: params.string("start_date"),
                notes: params.string("notes"), today: context.today)
            return try await encode(try await database.createGoal(new, now: context.clock.now()), context: context)
        }

        registry.register(MethodSpec(
            "goal.list", summary: "List goals, active ones unless include_archived is true.",
            params: [.optional("include_archived", .boolean, "also list archived goals")],
            result: ResultSpec("goals", "{\"goals\": [goal]}", schema: Schema.object(["goals": Schema.array(Schema.ref("Goal"))])),
            writes: false)) { params, _ in
            let includeArchived = params.bool("include_archived") ?? false
            let valuation = try await context.valuation()
            let goals = valuation.portfolio.goals.filter { includeArchived || !$0.archived }
            return ["goals": .array(goals.map { context.goalJSON(valuation.figures(for: $0)) })]
        }

        registry.register(MethodSpec(
            "goal.get", summary: "One goal by id or name.", params: [reference],
            result: goalResult, writes: false)) { params, _ in
            try await encode(try await database.goal(try params.requiredString("goal")), context: context)
        }

        registry.register(MethodSpec(
            "goal.update", summary: "Change a goal's name, currency, target, dates or notes.",
            params: [
                reference,
                .optional("name", .string, "new unique name"),
                .optional("currency", .string, "new currency code"),
                .optional("target_amount", .decimal, "new target, > 0"),
                .optional("deadline", .date, "new deadline (YYYY-MM-DD)"),
                .optional("start_date", .date, "new start date (YYYY-MM-DD)"),
                ParamSpec("notes", .string, nullable: true, "new notes; null or \"\" clears them"),
            ],
            result: goalResult, writes: true)) { params, _ in
            let changes = GoalChanges(
                name: params.string("name"), currency: params.string("currency"),
                targetAmount: params.decimalText("target_amount"), deadline: params.string("deadline"),
                startDate: params.string("start_date"), notes: params.isNull("notes") ? "" : params.string("notes"))
            guard !changes.isEmpty else {
                throw RPCError.invalidParams("nothing to update: give at least one of name, currency, target_amount, deadline, start_date, notes")
            }
            let goal = try await database.updateGoal(try params.requiredString("goal"), changes: changes, now: context.clock.now())
            return try await encode(goal, context: context)
        }

        registry.register(MethodSpec(
            "goal.archive", summary: "Archive a goal (or restore it with archived: false).",
            params: [reference, .optional("archived", .boolean, "false restores an archived goal (default true)")],
            result: goalResult, writes: true)) { params, _ in
            let goal = try await database.setGoalArchived(
                try params.requiredString("goal"), archived: params.bool("archived") ?? true, now: context.clock.now())
            return try await encode(goal, context: context)
        }

        registry.register(MethodSpec(
            "goal.delete", summary: "Delete a goal for good.", params: [reference],
            result: ResultSpec("deleted", "{\"deleted\": true, \"goal\": goal} (as stored, without figures)",
                               schema: Schema.object(["deleted": Schema.constant(true), "goal": Schema.ref("GoalRecord")])),
            writes: true)) { params, _ in
            let goal = try await database.deleteGoal(try params.requiredString("goal"))
            return ["deleted": true, "goal": Wire.goal(goal)]
        }
    }
}
