import Foundation

/// SPEC 4.1: how an asset's balance funds the goals it is allocated to.
///
/// If the targets fit in the balance each goal gets its full target and the rest is
/// unallocated; otherwise (after a withdrawal) every goal gets the same share of its target.
/// Shares are exact to 18 decimal places and always add up to the balance exactly.
public enum FundingCalculator {
    public struct Split: Sendable, Equatable {
        /// Funded amount per goal, in asset units.
        public var funded: [UUID: Decimal]
        /// Balance not funding any goal (never negative).
        public var unallocated: Decimal
        /// The sum of targets exceeds the balance, so goals are funded proportionally.
        public var overAllocated: Bool

        public var totalFunded: Decimal { funded.values.reduce(0, +) }
    }

    /// The sum of the positive targets: what the asset must hold for every goal to be funded.
    public static func positiveSum(_ targets: [UUID: Decimal]) -> Decimal {
        targets.values.reduce(Decimal(0)) { $1 > 0 ? $0 + $1 : $0 }
    }

    public static func split(balance: Decimal, targets: [UUID: Decimal]) -> Split {
        let available = max(balance, 0)
        let positive = targets.filter { $0.value > 0 }
        let sum = positiveSum(targets)
        var funded = targets.mapValues { _ in Decimal(0) }
        if sum <= available {
            for (goal, target) in positive { funded[goal] = target }
            return Split(funded: funded, unallocated: available - sum, overAllocated: false)
        }
        // Proportional shares, rounded down to the 18th place, then the leftover units go to
        // the largest remainders (ties by goal id, so the result is deterministic).
        let unit = Decimal(sign: .plus, exponent: -Amount.maxFractionDigits, significand: 1)
        var remainders: [(goal: UUID, remainder: Decimal)] = []
        var assigned = Decimal(0)
        for (goal, target) in positive {
            var exact = target * available / sum
            var down = Decimal()
            NSDecimalRound(&down, &exact, Amount.maxFractionDigits, .down)
            funded[goal] = down
            assigned += down
            remainders.append((goal, exact - down))
        }
        var leftover = available - assigned
        remainders.sort { $0.remainder != $1.remainder ? $0.remainder > $1.remainder : $0.goal.uuidString < $1.goal.uuidString }
        var index = 0
        while leftover >= unit, !remainders.isEmpty {
            funded[remainders[index % remainders.count].goal, default: 0] += unit
            leftover -= unit
            index += 1
        }
        return Split(funded: funded, unallocated: leftover, overAllocated: true)
    }
}

/// SPEC 5.1: a deposit into an asset fully allocated to exactly one goal grows that goal's
/// allocation; any other deposit stays unallocated (the passive model, no guessing).
public enum AutoAllocation {
    public static func goalToGrow(allocations: [UUID: Decimal], balanceBefore: Decimal, deposit: Decimal) -> UUID? {
        guard deposit > 0, let (goal, amount) = soleGoal(allocations), amount >= balanceBefore else { return nil }
        return goal
    }

    /// The one goal with a positive allocation of the asset, if exactly one has: the only goal a
    /// deposit can ever grow. (Growing it keeps it the only one, so an asset without one grows
    /// nothing for as long as its allocations stay as they are.)
    public static func soleGoal(_ allocations: [UUID: Decimal]) -> (goal: UUID, amount: Decimal)? {
        var sole: (UUID, Decimal)?
        for (goal, amount) in allocations where amount > 0 {
            guard sole == nil else { return nil }
            sole = (goal, amount)
        }
        return sole
    }
}

/// SPEC 5.1: history stays consistent with the present. A change dated `at` writes its row
/// there and shifts every later row of the pair by the same delta, so the newest row always
/// equals the current allocation.
public enum AllocationTimeline {
    /// The target of a pair at `instant` given its rows (any order): the newest row at or
    /// before it, ties broken by `createdAt`; 0 before the first row.
    public static func target(at instant: Date, in rows: [AllocationHistoryEntry]) -> Decimal {
        rows.filter { $0.timestamp <= instant }
            .max { ($0.timestamp, $0.createdAt) < ($1.timestamp, $1.createdAt) }?.amount ?? 0
    }

    /// The rows after applying `deltas` one after another, each change newer than every row
    /// before it: the new rows (in the order of `deltas`) and the existing rows that moved.
    /// `rows` must hold the row in force at the earliest change and every later row.
    /// `newRow(i, amount)` makes the row of `deltas[i]`.
    ///
    /// Applying the changes one at a time rewrites every later row each time; this visits each
    /// row once. A row ends up with its amount before plus every change ordered at or before it
    /// by (timestamp, creation), and a new row starts from the existing row in force at its instant.
    public static func applying(deltas: [(at: Date, delta: Decimal)], to rows: [AllocationHistoryEntry],
                                newRow: (Int, Decimal) -> AllocationHistoryEntry)
        -> (inserted: [AllocationHistoryEntry], shifted: [AllocationHistoryEntry]) {
        guard let earliest = deltas.lazy.map(\.at).min() else { return ([], []) }
        let order = deltas.indices.sorted { (deltas[$0].at, $0) < (deltas[$1].at, $1) }
        let instants = order.map { deltas[$0].at }
        var prefix = [Decimal(0)]
        prefix.reserveCapacity(order.count + 1)
        for index in order { prefix.append(prefix[prefix.count - 1] + deltas[index].delta) }

        let existing = rows.sorted { ($0.timestamp, $0.createdAt) < ($1.timestamp, $1.createdAt) }
        var made = [AllocationHistoryEntry?](repeating: nil, count: deltas.count)
        var cursor = 0, inForce = Decimal(0)
        for (position, index) in order.enumerated() {
            while cursor < existing.count, existing[cursor].timestamp <= deltas[index].at {
                inForce = existing[cursor].amount
                cursor += 1
            }
            made[index] = newRow(index, inForce + prefix[position + 1])
        }
        let shifted = rows.filter { $0.timestamp > earliest }.map { row -> AllocationHistoryEntry in
            var row = row
            row.amount += prefix[countBefore(row.timestamp, in: instants)]
            return row
        }
        return (made.compactMap { $0 }, shifted)
    }

    /// How many of the sorted `instants` are before `instant`.
    private static func countBefore(_ instant: Date, in instants: [Date]) -> Int {
        var low = 0, high = instants.count
        while low < high {
            let middle = (low + high) / 2
            if instants[middle] < instant { low = middle + 1 } else { high = middle }
        }
        return low
    }
}
