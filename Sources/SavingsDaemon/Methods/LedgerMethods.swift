import Foundation
import SavingsStore
import SavingsCore
import SavingsRPC

/// `tx.*` and `allocation.*`: the movements of money and its assignment to goals.
enum LedgerMethods {
    static let maxPage = 1000

    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        let database = context.database

        registry.register(MethodSpec(
            "tx.add", summary: "Record a deposit (positive) or withdrawal (negative) on an asset.",
            params: [
                .required("asset", .reference, "the asset's id or name"),
                .required("amount", .decimal, "signed amount in the asset's units"),
                .optional("date", .string, "when it happened: an ISO 8601 timestamp, or a date YYYY-MM-DD (the start of that day in the configured zone); default now; may be in the past"),
                .optional("note", .string, "free text"),
                .optional("external_id", .string, "your id for it; unique per asset (idempotent imports)"),
            ],
            result: ResultSpec("transaction", "the transaction and auto_allocated_goal_id", schema: Self.addedResult),
            writes: true)) { params, _ in
            let amount = try AssetTransaction.validAmount(try params.requiredDecimalText("amount"))
            let recorded = try await database.addTransaction(
                asset: try params.requiredString("asset"), amount: amount, date: try context.effectiveDate(params.string("date")),
                note: try GoalRules.validNotes(params.string("note")), externalID: params.string("external_id"),
                now: context.clock.now(), timeZone: context.timeZone)
            let asset = try await database.asset(recorded.transaction.assetID.uuidString)
            guard case .object(var object) = Wire.transaction(recorded.transaction, asset: asset) else { return .null }
            object["auto_allocated_goal_id"] = recorded.autoAllocatedGoalID.map(Wire.id) ?? .null
            return .object(object)
        }

        registry.register(MethodSpec(
            "tx.list", summary: "Transactions, newest first, by asset, goal or date range; paginated.",
            params: [
                .optional("asset", .reference, "only this asset"),
                .optional("goal", .reference, "only assets allocated to this goal"),
                .optional("from", .string, "from this date or timestamp"),
                .optional("to", .string, "up to this date (whole day) or timestamp"),
                .optional("limit", .integer(min: 1, max: maxPage), "page size (default 100)"),
                .optional("cursor", .string, "next_cursor of the previous page"),
                .optional("search", .string, "only transactions whose note or external_id holds this text (ASCII letters in any case), or whose amount is this number, either sign (at most 200 characters)"),
            ],
            result: ResultSpec("transactions", "{\"transactions\": [...], \"next_cursor\": string|null}", schema: Schema.object([
                "transactions": Schema.array(Schema.ref("Transaction")),
                "next_cursor": Schema.described(Schema.nullable(Schema.string), "pass as cursor for the next page; null on the last"),
            ])),
            writes: false)) { params, _ in
            let limit = params.int("limit") ?? 100
            var filter = TransactionFilter(asset: params.string("asset"), goal: params.string("goal"),
                                           from: try context.bound(params.string("from"), field: "from"),
                                           to: try context.bound(params.string("to"), field: "to", endOfDay: true), limit: limit,
                                           search: try Self.search(params.string("search")))
            if let cursor = params.string("cursor") {
                let parts = cursor.split(separator: "|", maxSplits: 1).map(String.init)
                guard parts.count == 2, (try? Timestamp.parse(parts[0], field: "cursor")) != nil, UUID(uuidString: parts[1]) != nil else {
                    throw DomainError.invalidField("cursor", "not a cursor returned by tx.list")
                }
                filter.after = (parts[0], parts[1])
            }
            let transactions = try await database.transactions(filter)
            let assets = try await database.assetsByID()
            let next: JSONValue = transactions.count == limit
                ? transactions.last.map { .string(Timestamp.format($0.date) + "|" + $0.id.uuidString.lowercased()) } ?? .null
                : .null
            return ["transactions": .array(transactions.map { Wire.transaction($0, asset: assets[$0.assetID]) }), "next_cursor": next]
        }

        registry.register(MethodSpec(
            "tx.delete", summary: "Delete a transaction.",
            params: [.required("transaction", .string, "the transaction id")],
            result: ResultSpec("deleted", "{\"deleted\": true, \"transaction\": ...}",
                               schema: Schema.object(["deleted": Schema.constant(true), "transaction": Schema.ref("Transaction")])),
            writes: true)) { params, _ in
            let transaction = try await database.deleteTransaction(try params.requiredString("transaction"))
            return ["deleted": true, "transaction": Wire.transaction(transaction, asset: nil)]
        }

        registry.register(MethodSpec(
            "tx.get", summary: "One transaction by its id.",
            params: [.required("transaction", .string, "the transaction id")],
            result: ResultSpec("transaction", "the transaction", schema: Schema.ref("Transaction")),
            writes: false)) { params, _ in
            let transaction = try await database.transaction(try params.requiredString("transaction"))
            return Wire.transaction(transaction, asset: try await database.asset(transaction.assetID.uuidString))
        }

        registry.register(MethodSpec(
            "tx.update", summary: "Change a transaction's amount, date or note; its id, asset and external_id stay.",
            params: [
                .required("transaction", .string, "the transaction id"),
                .optional("amount", .decimal, "the new signed amount in the asset's units"),
                .optional("date", .string, "the new date: an ISO 8601 timestamp, or a date YYYY-MM-DD (the start of that day in the configured zone)"),
                ParamSpec("note", .string, nullable: true, "the new note; null or \"\" removes it"),
            ],
            result: ResultSpec("updated", "{\"transaction\": ..., \"before\": ...}",
                               schema: Schema.object(["transaction": Schema.ref("Transaction"), "before": Schema.ref("Transaction")])),
            writes: true)) { params, _ in
            var change = SavingsDatabase.TransactionChange()
            if let amount = params.decimalText("amount") { change.amount = try AssetTransaction.validAmount(amount) }
            if let date = params.string("date") { change.date = try context.effectiveDate(date) }
            if params.isNull("note") || params.string("note") == "" {
                change.note = .some(nil)
            } else if let note = params.string("note") {
                change.note = .some(try GoalRules.validNotes(note))
            }
            guard change != SavingsDatabase.TransactionChange() else {
                throw RPCError.invalidParams("nothing to update: give at least one of amount, date, note")
            }
            let (before, after) = try await database.updateTransaction(try params.requiredString("transaction"), change: change)
            let asset = try await database.asset(after.assetID.uuidString)
            return ["transaction": Wire.transaction(after, asset: asset), "before": Wire.transaction(before, asset: asset)]
        }

        registry.register(MethodSpec(
            "allocation.set", summary: "Set how much of an asset is reserved for a goal (0 removes it).",
            params: [
                .required("asset", .reference, "the asset's id or name"),
                .required("goal", .reference, "the goal's id or name"),
                .required("amount", .decimal, "target in the asset's units, >= 0"),
            ],
            result: ResultSpec("allocation", "{\"allocation\": line, \"asset\": asset}",
                               schema: Schema.object(["allocation": Schema.ref("Allocation"), "asset": Schema.ref("Asset")])),
            writes: true)) { params, _ in
            let amount = try Allocation.validAmount(try params.requiredDecimalText("amount"))
            let allocation = try await database.setAllocation(
                asset: try params.requiredString("asset"), goal: try params.requiredString("goal"), amount: amount,
                now: context.clock.now(), timeZone: context.timeZone)
            return try await allocationResult(assetID: allocation.assetID, goals: [("allocation", allocation.goalID)], context: context)
        }

        registry.register(MethodSpec(
            "allocation.move", summary: "Move part of an asset's allocation from one goal to another, atomically.",
            params: [
                .required("asset", .reference, "the asset's id or name"),
                .required("from_goal", .reference, "the goal giving"),
                .required("to_goal", .reference, "the goal receiving"),
                .required("amount", .decimal, "amount in the asset's units, > 0"),
            ],
            result: ResultSpec("move", "{\"from\": line, \"to\": line, \"asset\": asset}", schema: Schema.object([
                "from": Schema.ref("Allocation"), "to": Schema.ref("Allocation"), "asset": Schema.ref("Asset"),
            ])),
            writes: true)) { params, _ in
            let amount = try Allocation.validAmount(try params.requiredDecimalText("amount"))
            let moved = try await database.moveAllocation(
                asset: try params.requiredString("asset"), from: try params.requiredString("from_goal"),
                to: try params.requiredString("to_goal"), amount: amount, now: context.clock.now(), timeZone: context.timeZone)
            return try await allocationResult(assetID: moved.from.assetID,
                                              goals: [("from", moved.from.goalID), ("to", moved.to.goalID)], context: context)
        }

        registry.register(MethodSpec(
            "allocation.list", summary: "Allocations with their funded amounts, by asset or goal.",
            params: [.optional("asset", .reference, "only this asset"), .optional("goal", .reference, "only this goal")],
            result: ResultSpec("allocations", "{\"allocations\": [line]}", schema: Schema.object(["allocations": Schema.array(Schema.ref("Allocation"))])),
            writes: false)) { params, _ in
            let assetID = try await params.string("asset").asyncMap { try await database.asset($0).id }
            let goalID = try await params.string("goal").asyncMap { try await database.goal($0).id }
            let valuation = try await context.valuation()
            var lines: [JSONValue] = []
            for asset in valuation.portfolio.assets where assetID == nil || asset.id == assetID {
                guard let figures = valuation.asset(asset.id, valueCurrency: context.liveConfig.current.displayCurrency) else { continue }
                for line in figures.allocations where goalID == nil || line.goalID == goalID {
                    lines.append(Self.line(line, asset: asset))
                }
            }
            return ["allocations": .array(lines)]
        }

        registry.register(MethodSpec(
            "allocation.history", summary: "Every change of allocations over time, oldest first.",
            params: [
                .optional("asset", .reference, "only this asset"), .optional("goal", .reference, "only this goal"),
                .optional("from", .string, "from this date or timestamp"), .optional("to", .string, "up to this date or timestamp"),
            ],
            result: ResultSpec("history", "{\"history\": [entry]}", schema: Schema.object(["history": Schema.array(Schema.ref("AllocationHistoryEntry"))])),
            writes: false)) { params, _ in
            let entries = try await database.allocationHistory(
                asset: params.string("asset"), goal: params.string("goal"),
                from: try context.bound(params.string("from"), field: "from"),
                to: try context.bound(params.string("to"), field: "to", endOfDay: true))
            let assets = try await database.assetsByID()
            return ["history": .array(entries.map { Wire.historyEntry($0, asset: assets[$0.assetID]) })]
        }
    }

    /// A search text, bounded: it runs against every row in range.
    static func search(_ text: String?) throws -> String? {
        guard let text = text?.trimmingCharacters(in: .whitespaces), !text.isEmpty else { return nil }
        guard text.count <= 200 else { throw DomainError.invalidField("search", "at most 200 characters") }
        return text
    }

    /// `tx.add`: the transaction, and the goal a dedicated account gave the deposit to.
    static let addedResult = Schema.extending(Wire.transactionSchema, [
        "auto_allocated_goal_id": Schema.described(Schema.nullable(Schema.id),
                                                   "the goal the deposit was allocated to (an account dedicated to one goal), or null"),
    ])

    static func line(_ line: AssetFigures.Line, asset: Asset) -> JSONValue {
        ["asset_id": Wire.id(asset.id), "asset_name": .string(asset.name), "goal_id": Wire.id(line.goalID),
         "goal_name": .string(line.goalName), "amount": .string(asset.format(line.amount)), "funded": .string(asset.format(line.funded))]
    }

    /// The changed allocation lines and the asset after the change, from one valuation.
    static func allocationResult(assetID: UUID, goals: [(key: String, goalID: UUID)], context: DaemonContext) async throws -> JSONValue {
        let valuation = try await context.valuation()
        guard let figures = valuation.asset(assetID, valueCurrency: context.liveConfig.current.displayCurrency) else { return .null }
        var result: [String: JSONValue] = ["asset": try await AssetMethods.encode(figures, context: context)]
        for (key, goalID) in goals {
            let existing = figures.allocations.first { $0.goalID == goalID }
            let goalName = valuation.portfolio.goals.first { $0.id == goalID }?.name ?? ""
            result[key] = line(existing ?? AssetFigures.Line(goalID: goalID, goalName: goalName, amount: 0, funded: 0), asset: figures.asset)
        }
        return .object(result)
    }
}

extension Optional {
    func asyncMap<T>(_ transform: (Wrapped) async throws -> T) async rethrows -> T? {
        guard let value = self else { return nil }
        return try await transform(value)
    }
}
