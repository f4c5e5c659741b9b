import Foundation

/// What happened to one asset inside an execution window (SPEC 4.5): its state at the start
/// and every change point after it, up to the end.
public struct AssetTimeline: Sendable, Equatable {
    public enum Change: Sendable, Equatable {
        /// A transaction dated inside the window; `units` is `RunningTotal.units` of its
        /// stored text when the reader has it (the sums then stay in integers).
        case transaction(at: Date, amount: Decimal, units: Int128? = nil)
        /// An allocation-history row inside the window: the pair's new target.
        case target(at: Date, createdAt: Date, goalID: UUID, amount: Decimal)

        public var at: Date {
            switch self {
            case .transaction(let at, _, _), .target(let at, _, _, _): at
            }
        }
    }

    public var assetID: UUID
    /// Balance at `start` (transactions dated at or before it: backdated ones are baseline).
    public var balanceAtStart: Decimal
    /// Each goal's target at `start`.
    public var targetsAtStart: [UUID: Decimal]
    public var changes: [Change]

    public init(assetID: UUID, balanceAtStart: Decimal, targetsAtStart: [UUID: Decimal], changes: [Change]) {
        self.assetID = assetID
        self.balanceAtStart = balanceAtStart
        self.targetsAtStart = targetsAtStart
        self.changes = changes
    }
}

/// A change of one goal's funded amount, derived from timestamps (never stored while executing).
public struct DerivedEvent: Sendable, Equatable {
    public enum Kind: String, Sendable, CaseIterable {
        case deposit
        case withdrawal
        /// Value moved between goals: the deltas of the change point sum to zero.
        case reallocation
        /// Previously unallocated money assigned (or released).
        case allocation
    }

    public var at: Date
    public var assetID: UUID
    public var goalID: UUID
    /// Change of the funded amount, in asset units.
    public var assetAmount: Decimal
    public var kind: Kind
}

/// SPEC 4.5: walks an asset's change points in time order and reports every non-zero change
/// of a goal's funded amount. Cost is linear in the number of change points in the window
/// (times the asset's goals), independent of how much history lies before it.
public enum DerivedContributionCalculator {
    public static func events(for timeline: AssetTimeline) -> [DerivedEvent] {
        DerivedContributionWalk(timeline).events
    }

    /// Within one instant, history rows in the order they were written.
    static func order(_ change: AssetTimeline.Change) -> Date {
        switch change {
        case .transaction(let at, _, _): at
        case .target(_, let createdAt, _, _): createdAt
        }
    }

    /// Per-goal sum of the events' asset amounts.
    public static func totals(_ events: [DerivedEvent]) -> [UUID: Decimal] {
        events.reduce(into: [:]) { $0[$1.goalID, default: 0] += $1.assetAmount }
    }
}

/// A walk over one asset's change points, where it stands: the events so far and what the
/// next points need (balance, targets, funded amounts). Points that come later than every
/// point walked continue it exactly as walking the whole sequence again would.
public struct DerivedContributionWalk: Sendable {
    public let assetID: UUID
    public private(set) var events: [DerivedEvent] = []
    private var balance: RunningTotal
    private var targets: [UUID: Decimal]
    private var funded: [UUID: Decimal]
    private var targetSum: RunningTotal
    private var covered: Bool

    /// Walks the timeline from its start.
    public init(_ timeline: AssetTimeline) {
        assetID = timeline.assetID
        balance = RunningTotal(timeline.balanceAtStart)
        targets = timeline.targetsAtStart
        funded = FundingCalculator.split(balance: timeline.balanceAtStart, targets: targets).funded
        // While every target is covered, a transaction that leaves them covered changes no
        // goal's funded amount: such change points need no split (the common case, and what
        // keeps a busy account's month cheap).
        targetSum = RunningTotal(FundingCalculator.positiveSum(targets))
        covered = targetSum.isCovered(by: balance)
        walk(timeline.changes)
    }

    /// Goes on with `changes`, all dated after every point walked so far.
    public mutating func walk(_ changes: [AssetTimeline.Change]) {
        // Rows written together (a move, an auto-allocated deposit) share a timestamp and form
        // one change point, so a reallocation nets to zero instead of showing two halves.
        // The store reads them in time order: then only the positions are sorted, and only if
        // the target rows interleave with the transactions (no copy of the changes).
        func precedes(_ a: Int, _ b: Int) -> Bool {
            let first = changes[a], second = changes[b]
            if first.at != second.at { return first.at < second.at }
            let x = DerivedContributionCalculator.order(first), y = DerivedContributionCalculator.order(second)
            return x != y ? x < y : a < b
        }
        var sequence = Array(changes.indices)
        if zip(sequence, sequence.dropFirst()).contains(where: { !precedes($0, $1) }) { sequence.sort(by: precedes) }
        var index = 0
        while index < sequence.count {
            let at = changes[sequence[index]].at
            var transacted = RunningTotal(0)
            var hasTransaction = false, retargeted = false
            while index < sequence.count, changes[sequence[index]].at == at {
                switch changes[sequence[index]] {
                case .transaction(_, let amount, let units):
                    balance.add(amount, units: units)
                    transacted.add(amount, units: units)
                    hasTransaction = true
                case .target(_, _, let goalID, let amount):
                    targets[goalID] = amount
                    retargeted = true
                }
                index += 1
            }
            if retargeted { targetSum = RunningTotal(FundingCalculator.positiveSum(targets)) }
            let stillCovered = targetSum.isCovered(by: balance)
            defer { covered = stillCovered }
            if covered, stillCovered, !retargeted { continue }
            let next = FundingCalculator.split(balance: balance.value, targets: targets).funded
            var deltas: [(UUID, Decimal)] = []
            for goal in Set(next.keys).union(funded.keys) {
                let delta = (next[goal] ?? 0) - (funded[goal] ?? 0)
                if delta != 0 { deltas.append((goal, delta)) }
            }
            funded = next
            guard !deltas.isEmpty else { continue }
            let kind: DerivedEvent.Kind = hasTransaction
                ? (transacted.isNegative ? .withdrawal : .deposit)
                : (deltas.reduce(Decimal(0)) { $0 + $1.1 } == 0 ? .reallocation : .allocation)
            for (goal, delta) in deltas.sorted(by: { $0.0.uuidString < $1.0.uuidString }) {
                events.append(DerivedEvent(at: at, assetID: assetID, goalID: goal, assetAmount: delta, kind: kind))
            }
        }
    }
}
