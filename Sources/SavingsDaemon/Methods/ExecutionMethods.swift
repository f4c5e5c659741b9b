import Foundation
import SavingsCore
import SavingsRPC
import SavingsStore

/// The live or frozen result of a month's execution: one computation for month.progress,
/// month.complete (which freezes it), reminders and goal.contribute "plan".
enum ExecutionProgress {
    struct Line: Sendable, Equatable {
        var goalID: UUID
        var goalName: String
        var currency: CurrencyCode
        var planned: Decimal
        var contributed: Decimal
    }

    /// The tracked goals and their planned amounts, frozen at month.start.
    static func snapshot(_ plans: [MonthlyPlan], names: [UUID: String]) -> JSONValue {
        ["goals": .array(plans.map { plan in
            ["goal_id": Wire.id(plan.goalID), "goal_name": .string(names[plan.goalID] ?? ""), "currency": .string(plan.currency.code),
             "planned": .string(Amount.plainText(plan.plannedAmount)), "is_protected": .bool(plan.isProtected),
             "is_skipped": .bool(plan.isSkipped)]
        })]
    }

    /// The tracked goals and their planned amounts, read back from the snapshot; nothing contributed yet.
    static func plannedLines(_ snapshot: JSONValue) -> [Line] {
        var lines: [Line] = []
        for goal in snapshot["goals"]?.arrayValue ?? [] {
            guard let id = goal["goal_id"]?.stringValue.flatMap(UUID.init(uuidString:)),
                  let currency = goal["currency"]?.stringValue.flatMap({ try? CurrencyCode($0) }),
                  let planned = goal["planned"]?.stringValue.flatMap({ try? Amount.parse($0) }) else { continue }
            lines.append(Line(goalID: id, goalName: goal["goal_name"]?.stringValue ?? "", currency: currency, planned: planned, contributed: 0))
        }
        return lines
    }

    /// Derives the month's figures between `started_at` and `end` at current rates.
    static func document(_ record: ExecutionRecord, end: Date, status: String, completedAt: Date?, canUndoUntil: Date?,
                         context: DaemonContext) async throws -> (document: JSONValue, lines: [Line]) {
        let startedAt = try started(record)
        let portfolio = try await context.portfolio()
        let computed = try document(record, startedAt: startedAt, end: end, status: status, completedAt: completedAt, canUndoUntil: canUndoUntil,
                                    portfolio: portfolio, events: try await context.events(start: startedAt, end: end), context: context)
        return (computed.document ?? .null, computed.lines)
    }

    private static func started(_ record: ExecutionRecord) throws -> Date {
        guard let startedAt = record.startedAt else { throw DomainError(.invalidState, "\(record.month) has not been started") }
        return startedAt
    }

    /// The document from a snapshot and the window's events read no earlier than it.
    /// `rendering` false: the lines only (the dashboard and the reminders), no document.
    private static func document(_ record: ExecutionRecord, startedAt: Date, end: Date, status: String, completedAt: Date?,
                                 canUndoUntil: Date?, portfolio: Portfolio, events windowEvents: [(assetID: UUID, events: [DerivedEvent])],
                                 context: DaemonContext, rendering: Bool = true) throws -> (document: JSONValue?, lines: [Line]) {
        guard let snapshotText = record.snapshot, var lines = context.figures.plannedLines(of: snapshotText, parse: plannedLines) else {
            throw DomainError(.invalidState, "\(record.month) has not been started")
        }
        let rates = portfolio.rates
        let assets = Dictionary(uniqueKeysWithValues: portfolio.assets.map { ($0.id, $0) })
        let tracked = Dictionary(uniqueKeysWithValues: lines.enumerated().map { ($1.goalID, $0) })
        var events: [JSONValue] = []
        var used: [String: Conversion] = [:]
        var missing = Set<String>()
        // One lookup per currency pair: a month has thousands of events and a handful of pairs.
        var conversions: [Pair: Conversion?] = [:]
        func conversion(from: CurrencyCode, to: CurrencyCode) -> Conversion? {
            if let known = conversions[Pair(from: from, to: to)] { return known }
            let found = rates.conversion(from: from, to: to)
            conversions[Pair(from: from, to: to)] = found
            return found
        }
        for (assetID, assetEvents) in windowEvents {
            guard let asset = assets[assetID] else { continue }
            for event in assetEvents {
                guard let index = tracked[event.goalID] else { continue }
                let currency = lines[index].currency
                let conversion = conversion(from: asset.currency, to: currency)
                if let conversion {
                    lines[index].contributed += event.assetAmount * conversion.rate
                    if !conversion.path.isEmpty { used["\(asset.currency)/\(currency)"] = conversion }
                } else {
                    missing.insert(RateTable.missingPair(asset.currency, currency))
                }
                guard rendering else { continue }
                events.append([
                    "at": Wire.timestamp(event.at), "asset_id": Wire.id(event.assetID), "goal_id": Wire.id(event.goalID),
                    "asset_amount": .string(asset.format(event.assetAmount)),
                    "goal_amount": conversion.map { Wire.money(event.assetAmount * $0.rate, currency) } ?? .null,
                    "kind": .string(event.kind.rawValue),
                ])
            }
        }
        guard rendering else { return (nil, lines) }
        let display = context.liveConfig.current.displayCurrency
        let (plannedTotal, contributedTotal, unconverted) = totals(lines, in: display, rates: rates)
        missing.formUnion(unconverted)
        let document: JSONValue = [
            "month": .string(record.month.description),
            "status": .string(status),
            "started_at": Wire.timestamp(startedAt),
            "completed_at": completedAt.map(Wire.timestamp) ?? .null,
            "can_undo_until": canUndoUntil.map(Wire.timestamp) ?? .null,
            "goals": .array(lines.map { context.figures.goalLines.render($0.goalID, $0, goal) }),
            "totals": ["currency": .string(display.code), "planned": Wire.money(plannedTotal, display),
                       "contributed": Wire.money(contributedTotal, display),
                       "remaining": Wire.money(max(0, plannedTotal - contributedTotal), display)],
            "events": .array(events),
            "rates": .array(used.keys.sorted().map { pair in
                ["pair": .string(pair), "rate": .string(Amount.plainText(used[pair]!.rate)),
                 "as_of": used[pair]!.asOf.map(Wire.timestamp) ?? .null]
            }),
            "incomplete": .bool(!missing.isEmpty),
            "missing_rates": .array(missing.sorted().map(JSONValue.string)),
        ]
        return (document, lines)
    }

    /// An executing month's document and lines as of now, shared by month.progress,
    /// dashboard.get and the reminders, which status bars poll. A snapshot lasts until a write
    /// or until the clock reaches the next transaction's date, and history rows dated ahead of
    /// their writing always belong to such a transaction (auto-allocation, contribution):
    /// within one snapshot the window's change points stay the same, so it is computed once.
    ///
    /// After a write the snapshot has to be loaded and the window read: both go side by side.
    /// The window's read begins after the snapshot was asked for, so it is never older than
    /// the snapshot it is kept under.
    static func live(_ record: ExecutionRecord, context: DaemonContext) async throws -> (document: JSONValue, lines: [Line]) {
        let computed = try await live(record, context: context, rendering: true)
        return (computed.document ?? .null, computed.lines)
    }

    /// The lines only: what the dashboard and the reminders show (the month's events are not rendered).
    static func liveLines(_ record: ExecutionRecord, context: DaemonContext) async throws -> [Line] {
        try await live(record, context: context, rendering: false).lines
    }

    private static func live(_ record: ExecutionRecord, context: DaemonContext, rendering: Bool) async throws -> (document: JSONValue?, lines: [Line]) {
        let now = context.clock.now()
        let currency = context.liveConfig.current.displayCurrency
        let request = context.requestPortfolio()
        if let cached = request.cached,
           let known = context.figures.progress(FiguresCache.ProgressKey(snapshot: cached.snapshot, month: record.month, currency: currency),
                                                now: now), known.document != nil || !rendering {
            return known
        }
        let startedAt = try started(record)
        async let windowEvents = context.events(start: startedAt, end: now)
        let portfolio = try await request.value()
        let key = FiguresCache.ProgressKey(snapshot: portfolio.snapshot, month: record.month, currency: currency)
        let computed = try document(record, startedAt: startedAt, end: now, status: "executing", completedAt: nil,
                                    canUndoUntil: record.canUndoUntil, portfolio: portfolio, events: try await windowEvents, context: context,
                                    rendering: rendering)
        context.figures.keep(key, computed, at: now)
        return computed
    }

    private struct Pair: Hashable {
        var from: CurrencyCode
        var to: CurrencyCode
    }

    /// The month's planned and contributed sums in `currency`, and the pairs without a rate.
    static func totals(_ lines: [Line], in currency: CurrencyCode, rates: RateTable)
        -> (planned: Decimal, contributed: Decimal, missing: Set<String>) {
        // Summed in each goal's own currency first, then converted once per currency: a
        // thousand goals in three currencies are three conversions, not two thousand.
        var sums: [CurrencyCode: (planned: RunningTotal, contributed: RunningTotal)] = [:]
        for line in lines {
            sums[line.currency, default: (RunningTotal(0), RunningTotal(0))].planned.add(line.planned)
            sums[line.currency, default: (RunningTotal(0), RunningTotal(0))].contributed.add(line.contributed)
        }
        var planned = Decimal(0), contributed = Decimal(0)
        var missing = Set<String>()
        for (code, sum) in sums.sorted(by: { $0.key.code < $1.key.code }) {
            guard let conversion = rates.conversion(from: code, to: currency) else {
                missing.insert(RateTable.missingPair(code, currency))
                continue
            }
            planned += sum.planned.value * conversion.rate
            contributed += sum.contributed.value * conversion.rate
        }
        return (planned, contributed, missing)
    }

    /// `dashboard.get`'s `month`: the current month's planned, contributed and remaining in
    /// `currency`. Executing: derived as in month.progress; closed: from its frozen record;
    /// not started: the plans, nothing contributed yet.
    static func summary(_ month: MonthLabel, currency: CurrencyCode, context: DaemonContext) async throws -> JSONValue {
        let rates = try await context.portfolio().rates
        var lines: [Line] = []
        var status = "draft"
        if let record = try await context.database.execution(month), record.status != .draft {
            status = record.status.rawValue
            if record.status == .closed, let frozen = record.completed.flatMap({ try? JSONParser.parse($0) }) {
                lines = (frozen["goals"]?.arrayValue ?? []).compactMap { goal in
                    guard let id = goal["goal_id"]?.stringValue.flatMap(UUID.init(uuidString:)),
                          let code = goal["currency"]?.stringValue.flatMap({ try? CurrencyCode($0) }),
                          let planned = goal["planned"]?.stringValue.flatMap({ try? Amount.parse($0) }),
                          let contributed = goal["contributed"]?.stringValue.flatMap({ try? Amount.parse($0) }) else { return nil }
                    return Line(goalID: id, goalName: goal["goal_name"]?.stringValue ?? "", currency: code, planned: planned, contributed: contributed)
                }
            } else {
                lines = try await liveLines(record, context: context)
            }
        } else {
            lines = try await context.database.plans(month: month).map {
                Line(goalID: $0.goalID, goalName: "", currency: $0.currency, planned: $0.plannedAmount, contributed: 0)
            }
        }
        let (planned, contributed, missing) = totals(lines, in: currency, rates: rates)
        return ["month": .string(month.description), "status": .string(status), "currency": .string(currency.code),
                "planned": Wire.money(planned, currency), "contributed": Wire.money(contributed, currency),
                "remaining": Wire.money(max(0, planned - contributed), currency), "goals": .int(lines.count),
                "incomplete": .bool(!missing.isEmpty)]
    }

    static func goal(_ line: Line) -> JSONValue {
        var percent: JSONValue = .null
        if line.planned > 0 {
            var exact = line.contributed / line.planned * 100
            var rounded = Decimal()
            NSDecimalRound(&rounded, &exact, 1, .bankers)
            percent = .string(Amount.format(rounded, scale: 1))
        }
        return [
            "goal_id": Wire.id(line.goalID), "goal_name": .string(line.goalName), "currency": .string(line.currency.code),
            "planned": Wire.money(line.planned, line.currency), "contributed": Wire.money(line.contributed, line.currency),
            "remaining": Wire.money(max(0, line.planned - line.contributed), line.currency), "percent": percent,
            "fulfilled": .bool(line.contributed >= line.planned),
        ]
    }
}

/// `month.*`: start a month, follow it, close it into an immutable record, undo, history.
enum ExecutionMethods {
    static let monthParam = ParamSpec.optional("month", .string, "YYYY-MM (default the current month)")
    static let progressResult = ResultSpec("progress", "month, status, goals, totals, events, rates", schema: Schema.ref("MonthProgress"))

    static func progress(_ month: MonthLabel, context: DaemonContext) async throws -> JSONValue {
        guard let record = try await context.database.execution(month), record.status != .draft else {
            throw DomainError(.notFound, "\(month) has not been started (month.start)", details: ["month": month.description])
        }
        if record.status == .closed, let frozen = record.completed, let document = try? JSONParser.parse(frozen) {
            return document
        }
        return try await ExecutionProgress.live(record, context: context).document
    }

    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        let database = context.database
        let window: @Sendable () -> TimeInterval = { TimeInterval(context.liveConfig.current.undoWindow) }

        registry.register(MethodSpec("month.start", summary: "Start executing the current month: freeze the plans, lock them.",
                                     params: [monthParam], result: progressResult, writes: true)) { params, _ in
            let month = try PlanMethods.month(params, context: context)
            guard month == context.planner.currentMonth else {
                throw DomainError(.invalidState, "only the current month (\(context.planner.currentMonth)) can be started")
            }
            let plans = try await context.planner.plans(for: month)
            let names = Dictionary(uniqueKeysWithValues: try await database.goals(includeArchived: true).map { ($0.id, $0.name) })
            let snapshot = JSONSerializer.serialize(ExecutionProgress.snapshot(plans, names: names))
            _ = try await database.startExecution(month, snapshot: snapshot, goalIDs: plans.map(\.goalID), now: context.clock.now(),
                                                  undoWindow: window(), timeZone: context.timeZone)
            context.events.publish("month.started", ["month": .string(month.description)])
            return try await progress(month, context: context)
        }

        registry.register(MethodSpec("month.progress", summary: "Live progress of an executing month, or the frozen record of a closed one.",
                                     params: [monthParam], result: progressResult, writes: false)) { params, _ in
            try await progress(try PlanMethods.month(params, context: context), context: context)
        }

        registry.register(MethodSpec("month.complete", summary: "Close the month into an immutable record.",
                                     params: [monthParam], result: progressResult, writes: true)) { params, _ in
            let month = try PlanMethods.month(params, context: context)
            guard let record = try await database.execution(month), record.status == .executing else {
                throw DomainError(.invalidState, "\(month) is not being executed")
            }
            let now = Timestamp.truncatedToMilliseconds(context.clock.now())
            let frozen = try await ExecutionProgress.document(record, end: now, status: "closed", completedAt: now,
                                                              canUndoUntil: now.addingTimeInterval(window()), context: context).document
            _ = try await database.completeExecution(month, frozen: JSONSerializer.serialize(frozen), completedAt: now, undoWindow: window())
            context.events.publish("month.completed", ["month": .string(month.description)])
            return frozen
        }

        for (name, status, summary) in [("month.undo_start", ExecutionRecord.Status.executing, "Return a started month to draft (within the undo window)."),
                                        ("month.undo_complete", .closed, "Reopen a closed month (within the undo window).")] {
            registry.register(MethodSpec(name, summary: summary, params: [monthParam],
                                         result: ResultSpec("execution", "{\"month\", \"status\", \"can_undo_until\"}", schema: Schema.object([
                                             "month": Schema.month, "status": Wire.executionStatus,
                                             "can_undo_until": Schema.nullable(Schema.timestamp),
                                         ])),
                                         writes: true)) { params, _ in
                let month = try PlanMethods.month(params, context: context)
                let record = try await database.undoExecution(month, from: status, now: context.clock.now(), undoWindow: window())
                return ["month": .string(month.description), "status": .string(record.status.rawValue),
                        "can_undo_until": record.canUndoUntil.map(Wire.timestamp) ?? .null]
            }
        }

        registry.register(MethodSpec(
            "goal.history", summary: "Contributions derived month by month for any range, with the planned amount where a plan exists.",
            params: [.required("goal", .reference, "the goal's id or name"),
                     .optional("from", .string, "first month, YYYY-MM (default the goal's start month)"),
                     .optional("to", .string, "last month, YYYY-MM (default the current month)")],
            result: ResultSpec("history", "{\"months\": [{month, contributed, planned}]}", schema: Schema.object([
                "goal_id": Schema.id, "goal_name": Schema.string, "currency": Schema.currency,
                "months": Schema.array(Schema.object([
                    "month": Schema.month, "contributed": Schema.decimal,
                    "planned": Schema.described(Schema.nullable(Schema.decimal), "null for a month without a plan"),
                ])),
            ])),
            writes: false)) { params, _ in
            let goal = try await database.goal(try params.requiredString("goal"))
            let current = context.planner.currentMonth
            let from = try params.string("from").map { try MonthLabel(parsing: $0, field: "from") }
                ?? MonthLabel(year: goal.startDate.year, month: goal.startDate.month)
            let to = try params.string("to").map { try MonthLabel(parsing: $0, field: "to") } ?? current
            guard from <= to, to.index - from.index < 240 else {
                throw DomainError.invalidField("to", "give a range of 1 to 240 months with from <= to")
            }
            let valuation = try await context.valuation()
            let assets = Dictionary(uniqueKeysWithValues: valuation.portfolio.assets.map { ($0.id, $0) })
            let now = context.clock.now()
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = context.timeZone
            // Months before a legacy import show what the earlier app recorded.
            let legacy = try await database.legacyContributions(goal: goal.id, currency: goal.currency)
            var months: [JSONValue] = []
            for index in from.index...to.index {
                let month = MonthLabel(year: index / 12, month: index % 12 + 1)
                let first = calendar.date(from: DateComponents(year: month.year, month: month.month, day: 1))!
                guard first <= now else { break }
                let next = calendar.date(byAdding: .month, value: 1, to: first)!
                // (start, end]: everything from the month's first millisecond to its last, or now.
                let start = first.addingTimeInterval(-0.001), end = min(next.addingTimeInterval(-0.001), now)
                var contributed = Decimal(0)
                if let importMonth = legacy.importMonth, !legacy.byMonth.isEmpty, month < importMonth {
                    contributed = legacy.byMonth[month] ?? 0
                } else {
                    for (assetID, events) in try await context.events(start: start, end: end, remember: false) {
                        guard let asset = assets[assetID],
                              let conversion = valuation.portfolio.rates.conversion(from: asset.currency, to: goal.currency) else { continue }
                        let total = DerivedContributionCalculator.totals(events)[goal.id] ?? 0
                        contributed += total * conversion.rate
                    }
                }
                let plan = try? await database.plan(.goal(goal.id.uuidString, month))
                months.append(["month": .string(month.description), "contributed": Wire.money(contributed, goal.currency),
                               "planned": plan.map { Wire.money($0.plannedAmount, goal.currency) } ?? .null])
            }
            return ["goal_id": Wire.id(goal.id), "goal_name": .string(goal.name), "currency": .string(goal.currency.code),
                    "months": .array(months)]
        }

        registry.register(MethodSpec(
            "month.history", summary: "Closed months: planned against contributed per goal, and overall fulfilment.",
            params: [.optional("from", .string, "first month, YYYY-MM"), .optional("to", .string, "last month, YYYY-MM")],
            result: ResultSpec("history", "{\"months\": [{month, goals, totals, fulfilment_percent}]}", schema: Schema.object([
                "months": Schema.array(Schema.object([
                    "month": Schema.month, "goals": Schema.array(Schema.ref("MonthGoal")),
                    "totals": Schema.described(Schema.nullable(Schema.ref("MonthTotals")), "null for an imported month whose goals had several currencies"),
                    "fulfilment_percent": Schema.decimal,
                ])),
            ])), writes: false)) { params, _ in
            let records = try await database.closedExecutions(
                from: try params.string("from").map { try MonthLabel(parsing: $0, field: "from") },
                to: try params.string("to").map { try MonthLabel(parsing: $0, field: "to") })
            return ["months": .array(records.compactMap { record in
                guard let frozen = record.completed.flatMap({ try? JSONParser.parse($0) }) else { return nil }
                let planned = frozen["totals"]?["planned"]?.stringValue.flatMap { try? Amount.parse($0) } ?? 0
                let contributed = frozen["totals"]?["contributed"]?.stringValue.flatMap { try? Amount.parse($0) } ?? 0
                var ratio = planned > 0 ? contributed / planned * 100 : 100
                var percent = Decimal()
                NSDecimalRound(&percent, &ratio, 1, .bankers)
                return ["month": frozen["month"] ?? .null, "goals": frozen["goals"] ?? .array([]), "totals": frozen["totals"] ?? .null,
                        "fulfilment_percent": .string(Amount.format(percent, scale: 1))]
            })]
        }
    }
}
