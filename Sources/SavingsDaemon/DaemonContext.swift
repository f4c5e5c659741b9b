import Foundation
import SavingsCore
import SavingsRPC
import SavingsStore
import Synchronization

/// What method handlers share: the database, the clock, the live configuration, run facts.
public struct DaemonContext: Sendable {
    public let database: SavingsDatabase
    public let clock: any WallClock
    public let liveConfig: LiveConfig
    public let events: EventBus
    public let startedAt: ContinuousClock.Instant
    public let pid: Int32
    let figures = FiguresCache()
    let windowEvents = WindowEvents()

    public init(database: SavingsDatabase, clock: any WallClock, liveConfig: LiveConfig, events: EventBus,
                startedAt: ContinuousClock.Instant = .now, pid: Int32 = getpid()) {
        self.database = database
        self.clock = clock
        self.liveConfig = liveConfig
        self.events = events
        self.startedAt = startedAt
        self.pid = pid
    }

    /// Today's date in the configured time zone.
    public var today: CalendarDate { CalendarDate(clock.now(), in: liveConfig.current.timeZone) }

    public var timeZone: TimeZone { liveConfig.current.timeZone }

    var planner: Planner { Planner(context: self) }

    /// The current snapshot as stored (assets, balances, allocations, rates), without valuing
    /// every goal: enough for figures that need only rates and assets.
    public func portfolio() async throws -> Portfolio {
        try await requestPortfolio().value()
    }

    /// The current snapshot, asked for now and awaited later (see `SavingsDatabase.requestPortfolio`).
    func requestPortfolio() -> PortfolioRequest {
        database.requestPortfolio(now: clock.now(), pivot: liveConfig.current.ratesPivot)
    }

    /// The one valuation behind every figure, from the current snapshot. Built once per stored snapshot (a write or the next dated transaction makes a new one)
    /// and judged at the current `staleBefore` on every call.
    public func valuation() async throws -> Valuation {
        let portfolio = try await portfolio()
        let staleBefore = self.staleBefore
        if let known = figures.valuation(of: portfolio.snapshot) { return known.judged(staleBefore: staleBefore) }
        let valuation = Valuation(portfolio, reusing: figures.latestValuation()).judged(staleBefore: staleBefore)
        figures.keep(valuation)
        return valuation
    }

    /// `dashboard.get`'s figures and goal lines, reused while the snapshot, the currency and the
    /// set of stale rates stay the same; ages are always computed from now.
    /// With `goalFields`, each goal has only those fields (rendered once per goal's figures too).
    func dashboard(currency: CurrencyCode, goalFields: Set<String>? = nil) async throws -> JSONValue {
        let (key, entry) = try await dashboardEntry(currency: currency)
        guard let goalFields else { return Self.dashboard(entry, now: clock.now()) }
        var slim = entry
        slim.goals = figures.selectedGoals(key, goalFields) { selected in
            .serialized(SerializedJSON(.array(entry.figures.goals.map { goal in
                selected.render(goal.goal.id, goal) { .object(Wire.goal($0).objectValue?.filter { goalFields.contains($0.key) } ?? [:]) }
            })))
        }
        return Self.dashboard(slim, now: clock.now())
    }

    private func dashboardEntry(currency: CurrencyCode) async throws -> (FiguresCache.DashboardKey, FiguresCache.Dashboard) {
        let month = planner.currentMonth
        func key(_ valuation: Valuation) -> FiguresCache.DashboardKey {
            FiguresCache.DashboardKey(snapshot: valuation.portfolio.snapshot, currency: currency, stale: valuation.staleRateCount, month: month)
        }
        if let snapshot = requestPortfolio().cached?.snapshot, let kept = figures.valuation(of: snapshot),
           case let cached = key(kept.judged(staleBefore: staleBefore)), let known = figures.dashboard(cached) {
            return (cached, known)
        }
        // The month's plans exist the first time the month is looked at, by any view (the
        // seeds' get-or-create): a goal without this month's plan gets it now, as plan.list
        // would give it. Creating plans is a write, so a dashboard kept from before is not reused.
        _ = try await planner.plans(for: month)
        // After a write the month's progress and the stale drafts are read (and the month
        // walked) while the snapshot loads and the goals' figures are worked out: none of the
        // three waits for another (the snapshot they share is loaded once).
        async let progress = ExecutionProgress.summary(month, currency: currency, context: self)
        async let stale = database.stalePlans(current: month, offset: 0, limit: 1).total
        let valuation = try await valuation()
        let computed = valuation.dashboard(currency: currency, goals: activeGoals(valuation))
        let goals = JSONValue.array(computed.goals.map(goalJSON))
        let entry = FiguresCache.Dashboard(figures: computed, goals: goals, month: try await progress, staleDrafts: try await stale)
        figures.keep(key(valuation), entry)
        return (key(valuation), entry)
    }

    /// Every active goal's figures in `valuation`: kept for its snapshot, and after a write
    /// worked out again only for the goals the write touched (the others are taken over).
    func activeGoals(_ valuation: Valuation) -> [GoalFigures] {
        let latest = figures.latestGoals()
        if let latest, valuation.portfolio.snapshot != 0, latest.valuation.portfolio.snapshot == valuation.portfolio.snapshot,
           latest.valuation.staleRateCount == valuation.staleRateCount {
            return latest.goals
        }
        let goals = valuation.activeGoals(reusing: latest)
        figures.keep(goals: goals, of: valuation)
        return goals
    }

    /// A goal with its figures (`Wire.goal`), rendered again only when they moved.
    func goalJSON(_ goal: GoalFigures) -> JSONValue { figures.goals.render(goal.goal.id, goal, Wire.goal) }

    static func dashboard(_ entry: FiguresCache.Dashboard, now: Date) -> JSONValue {
        guard case .object(var object) = Wire.dashboard(entry.figures, now: now, goals: entry.goals) else { return .null }
        object["month"] = entry.month
        object["stale_drafts"] = .int(entry.staleDrafts)
        return .object(object)
    }

    /// Each asset's derived contribution events in the window (start, end], in the store's
    /// asset order. An asset the store reports unchanged keeps the walk over that same reading
    /// (by stamp), and one it reports extended goes on walking from there: after a write only
    /// the accounts it touched are walked, and after a deposit made now only that deposit.
    /// With `remember` false nothing is kept for this window (past months looked at once).
    func events(start: Date, end: Date, remember: Bool = true) async throws -> [(assetID: UUID, events: [DerivedEvent])] {
        let known = remember ? windowEvents.walks(start: start) : [:]
        var result: [(assetID: UUID, events: [DerivedEvent])] = []
        var walks: WindowEvents.Walks = [:]
        for timeline in try await database.timelines(start: start, end: end, known: known.mapValues(\.stamp), remember: remember) {
            var walk: DerivedContributionWalk
            switch timeline.reading {
            case .full(let whole):
                walk = DerivedContributionWalk(whole)
            case .unchanged:
                walk = try Self.held(known[timeline.assetID], stamp: timeline.stamp)
            case .extended(let since, let later):
                walk = try Self.held(known[timeline.assetID], stamp: since)
                walk.walk(later)
            }
            walks[timeline.assetID] = (timeline.stamp, walk)
            result.append((timeline.assetID, walk.events))
        }
        if remember { windowEvents.keep(start: start, walks) }
        return result
    }

    private static func held(_ known: (stamp: UInt64, walk: DerivedContributionWalk)?, stamp: UInt64) throws -> DerivedContributionWalk {
        // Unreachable otherwise: the store builds only on the stamps it was given.
        guard let known, known.stamp == stamp else { throw UnknownReading() }
        return known.walk
    }

    /// Rates with an `as_of` before this are reported as stale.
    public var staleBefore: Date { clock.now().addingTimeInterval(-TimeInterval(liveConfig.current.staleAfter)) }

    /// An effective date parameter: now when absent; a plain date (YYYY-MM-DD) is the start of
    /// that day in the configured zone; never more than a minute in the future.
    public func effectiveDate(_ text: String?, field: String = "date") throws -> Date {
        let now = clock.now()
        guard let text else { return now }
        let date = try bound(text, field: field)!
        guard date.timeIntervalSince(now) <= 60 else {
            throw DomainError.invalidField(field, "\(text) is in the future")
        }
        return date
    }

    /// An optional range bound: a timestamp or a plain date (start of that day in the
    /// configured zone; `to` dates include the whole day).
    public func bound(_ text: String?, field: String, endOfDay: Bool = false) throws -> Date? {
        guard let text else { return nil }
        // "YYYY-MM-DD" is a day (one that does not exist is refused as a date, not a timestamp).
        if text.count == 10, text.utf8.filter({ $0 == UInt8(ascii: "-") }).count == 2 {
            let day = try CalendarDate(parsing: text, field: field)
            var calendar = Calendar(identifier: .gregorian)
            calendar.timeZone = timeZone
            let start = calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day))!
            return endOfDay ? calendar.date(byAdding: .day, value: 1, to: start)!.addingTimeInterval(-0.001) : start
        }
        return try Timestamp.parse(text, field: field)
    }
}

/// The store said "unchanged" of a reading the daemon was not holding.
struct UnknownReading: Error {}

/// The walk over each asset's latest reading (`SavingsDatabase.timelines` stamp) in the few
/// windows asked for last. A stamp names one reading of the store, so its walk never goes
/// stale; the store says when a reading still holds.
final class WindowEvents: Sendable {
    typealias Walks = [UUID: (stamp: UInt64, walk: DerivedContributionWalk)]
    static let windowLimit = 4
    private let state = Mutex<(windows: [Date: Walks], recent: [Date])>(([:], []))

    func walks(start: Date) -> Walks { state.withLock { $0.windows[start] ?? [:] } }

    func keep(start: Date, _ walks: Walks) {
        state.withLock { state in
            state.windows[start] = walks
            state.recent.removeAll { $0 == start }
            state.recent.append(start)
            while state.recent.count > Self.windowLimit { state.windows[state.recent.removeFirst()] = nil }
        }
    }
}

/// The valuation and dashboard of the newest snapshot. Keyed by the snapshot number, so a
/// write (which makes the store load a new snapshot) can never be answered from here.
final class FiguresCache: Sendable {
    struct DashboardKey: Hashable, Sendable {
        var snapshot: UInt64
        var currency: CurrencyCode
        var stale: Int
        /// The current month: its figures and the stale drafts change when it rolls over.
        var month: MonthLabel
    }

    struct Dashboard: Sendable {
        var figures: DashboardFigures
        var goals: JSONValue
        var month: JSONValue
        var staleDrafts: Int
    }

    /// An executing month's live figures (`ExecutionProgress.live`) of one snapshot.
    struct ProgressKey: Hashable, Sendable {
        var snapshot: UInt64
        var month: MonthLabel
        var currency: CurrencyCode
    }

    private struct Progress {
        /// The document is nil when only the lines were asked for.
        var computed: (document: JSONValue?, lines: [ExecutionProgress.Line])
        var at: Date
    }

    private let state = Mutex<(valuation: Valuation?, dashboards: [DashboardKey: Dashboard], progress: [ProgressKey: Progress],
                               goals: (valuation: Valuation, goals: [GoalFigures])?)>((nil, [:], [:], nil))
    /// The executing month's planned lines, parsed once from its frozen snapshot text.
    private let planned = Mutex<(text: String, lines: [ExecutionProgress.Line])?>(nil)
    /// Each goal's last rendered progress line and figures: after a write, only goals whose
    /// figures moved are rendered again.
    let goalLines = RenderedGoals<ExecutionProgress.Line>()
    let goals = RenderedGoals<GoalFigures>()
    /// The same with only some fields (`dashboard.get`'s `goal_fields`), for the last set asked
    /// for: each goal's, and the whole list of the last dashboard.
    private let selected = Mutex<(fields: Set<String>, goals: RenderedGoals<GoalFigures>, list: (key: DashboardKey, json: JSONValue)?)?>(nil)

    /// The goal list of the dashboard `key` with only `fields`, made by `make` (from each goal's
    /// rendering kept) when it is not the one kept.
    func selectedGoals(_ key: DashboardKey, _ fields: Set<String>, make: (RenderedGoals<GoalFigures>) -> JSONValue) -> JSONValue {
        let goals: RenderedGoals<GoalFigures> = selected.withLock { selected in
            if let known = selected, known.fields == fields { return known.goals }
            let goals = RenderedGoals<GoalFigures>()
            selected = (fields, goals, nil)
            return goals
        }
        if let list = selected.withLock({ $0?.fields == fields ? $0?.list : nil }), list.key == key { return list.json }
        let json = make(goals)
        selected.withLock { selected in
            if key.snapshot != 0, selected?.fields == fields, (selected?.list?.key.snapshot ?? 0) <= key.snapshot { selected?.list = (key, json) }
        }
        return json
    }

    /// nil when the text does not parse.
    func plannedLines(of text: String, parse: (JSONValue) -> [ExecutionProgress.Line]) -> [ExecutionProgress.Line]? {
        if let known = planned.withLock({ $0 }), known.text == text { return known.lines }
        guard let snapshot = try? JSONParser.parse(text) else { return nil }
        let lines = parse(snapshot)
        planned.withLock { $0 = (text, lines) }
        return lines
    }

    func valuation(of snapshot: UInt64) -> Valuation? {
        guard snapshot != 0 else { return nil }
        return state.withLock { $0.valuation?.portfolio.snapshot == snapshot ? $0.valuation : nil }
    }

    /// The newest valuation kept, of whichever snapshot: what a new one may take over from.
    func latestValuation() -> Valuation? { state.withLock { $0.valuation } }

    /// The active goals' figures worked out last, with the valuation they came from.
    func latestGoals() -> (valuation: Valuation, goals: [GoalFigures])? { state.withLock { $0.goals } }

    func keep(goals: [GoalFigures], of valuation: Valuation) {
        guard valuation.portfolio.snapshot != 0 else { return }
        state.withLock { state in
            if (state.goals?.valuation.portfolio.snapshot ?? 0) <= valuation.portfolio.snapshot { state.goals = (valuation, goals) }
        }
    }

    func keep(_ valuation: Valuation) {
        guard valuation.portfolio.snapshot != 0 else { return }
        state.withLock { state in
            if (state.valuation?.portfolio.snapshot ?? 0) < valuation.portfolio.snapshot { state.valuation = valuation }
        }
    }

    func progress(_ key: ProgressKey, now: Date) -> (document: JSONValue?, lines: [ExecutionProgress.Line])? {
        state.withLock { state in
            // A clock set back could see a window that ended later than now: computed again.
            guard let entry = state.progress[key], now >= entry.at else { return nil }
            return entry.computed
        }
    }

    func keep(_ key: ProgressKey, _ computed: (document: JSONValue?, lines: [ExecutionProgress.Line]), at: Date) {
        guard key.snapshot != 0 else { return }
        state.withLock { state in
            // Lines alone do not replace the same snapshot's document.
            if computed.document == nil, state.progress[key]?.computed.document != nil { return }
            state.progress = state.progress.filter { $0.key.snapshot >= key.snapshot }
            state.progress[key] = Progress(computed: computed, at: at)
        }
    }

    func dashboard(_ key: DashboardKey) -> Dashboard? {
        state.withLock { $0.dashboards[key] }
    }

    func keep(_ key: DashboardKey, _ value: Dashboard) {
        guard key.snapshot != 0 else { return }
        state.withLock { state in
            // Only the newest snapshot's dashboards are worth keeping.
            state.dashboards = state.dashboards.filter { $0.key.snapshot >= key.snapshot }
            state.dashboards[key] = value
        }
    }
}

/// The JSON last rendered for each goal from a value (its figures, its progress line): a value
/// equal to the one rendered gets the same JSON without rendering it again.
final class RenderedGoals<Value: Equatable & Sendable>: Sendable {
    private let rendered = Mutex<[UUID: (value: Value, json: JSONValue)]>([:])

    func render(_ goalID: UUID, _ value: Value, _ render: (Value) -> JSONValue) -> JSONValue {
        if let known = rendered.withLock({ $0[goalID] }), known.value == value { return known.json }
        // Kept serialized: every answer that shows the goal copies its bytes.
        let json = JSONValue.serialized(SerializedJSON(render(value)))
        rendered.withLock { rendered in
            if rendered.count >= 100_000 { rendered = [:] }  // goals come and go over the years
            rendered[goalID] = (value, json)
        }
        return json
    }
}
