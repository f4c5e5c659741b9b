import Foundation

/// Checks a file's running balance column for one asset, streaming, in either order: files
/// oldest first say balance(n) = balance(n−1) + amount(n); files newest first (many banks)
/// say balance(n) = balance(n+1) + amount(n), the row below being older. Both readings are
/// followed as the rows come, and the file's dates choose between them at the end. The oldest
/// row with a balance then ties the file to the asset's history: its balance must be the
/// asset's balance before the file plus the amounts up to it.
///
/// A row whose balance cell is empty says nothing about the balance: it is not compared. A
/// stored one still moves the balance (the asset holds it); a skipped one (a deposit listed
/// before it was credited) is outside the check altogether. Skipped rows with a balance still
/// move the file's balance: they are fed too, and what they moved is reported
/// (`skippedAmount`), since the asset will not hold it.
public struct RunningBalanceCheck: Sendable {
    public struct Mismatch: Sendable, Equatable {
        public var line: Int
        public var expected: Decimal
        public var found: Decimal
    }

    /// Oldest first: the last balance read, and the amounts of the rows after it. Sums are
    /// `RunningTotal`s: integers while they fit, a row's worth of `Decimal` additions showed in
    /// an import's profile.
    private struct Forward: Sendable {
        var balance: RunningTotal?
        var since = RunningTotal(0)
        /// The first row with a balance, and the amounts up to and including it.
        var first: (line: Int, balance: Decimal, amounts: RunningTotal)?
        var mismatch: Mismatch?

        mutating func add(line: Int, amount: Decimal, units: Int128?, balance found: Decimal?) {
            since.add(amount, units: units)
            guard let found else { return }
            let reading = RunningTotal(found)
            if var expected = balance {
                expected.add(since)
                if !reading.equals(expected), mismatch == nil { mismatch = Mismatch(line: line, expected: expected.value, found: found) }
            } else {
                first = (line, found, since)
            }
            balance = reading
            since = RunningTotal(0)
        }

        func verdict(opening: Decimal) -> Mismatch? {
            if let mismatch { return mismatch }
            guard let first else { return nil }
            let expected = opening + first.amounts.value
            return first.balance == expected ? nil : Mismatch(line: first.line, expected: expected, found: first.balance)
        }
    }

    /// Newest first: the last row read with a balance (newer than what follows), and the
    /// amounts from it down to the row being read. A disagreement names the newer row: its
    /// balance is not the older one's plus the amounts between, as oldest first names the row
    /// whose balance is not the one before it plus its amount.
    private struct Backward: Sendable {
        var newer: (line: Int, balance: Decimal, reading: RunningTotal)?
        var between = RunningTotal(0)
        var mismatch: Mismatch?

        mutating func add(line: Int, amount: Decimal, units: Int128?, balance found: Decimal?) {
            guard let found else {
                between.add(amount, units: units)
                return
            }
            let reading = RunningTotal(found)
            if let newer {
                var expected = reading
                expected.add(between)
                if !newer.reading.equals(expected), mismatch == nil {
                    mismatch = Mismatch(line: newer.line, expected: expected.value, found: newer.balance)
                }
            }
            newer = (line, found, reading)
            between = RunningTotal(0)
            between.add(amount, units: units)
        }

        /// The oldest row with a balance must hold the opening plus its amount and those of
        /// the older rows below it.
        func verdict(opening: Decimal) -> Mismatch? {
            if let mismatch { return mismatch }
            guard let newer else { return nil }
            let expected = opening + between.value
            return newer.balance == expected ? nil : Mismatch(line: newer.line, expected: expected, found: newer.balance)
        }
    }

    private var oldestFirst = Forward()
    private var newestFirst = Backward()
    private var firstDate: Date?, lastDate: Date?
    private var fed = false
    public private(set) var skippedAmount: Decimal = 0

    public init() {}

    /// Feeds one row of the asset, in file order. `date` is nil for a skipped row whose date
    /// was not read; `balance` nil when the row's balance cell is empty.
    public mutating func add(line: Int, date: Date?, amount: Decimal, units: Int128? = nil, balance: Decimal?, skipped: Bool) {
        if skipped {
            // A skipped row without a balance is outside the check.
            guard balance != nil else { return }
            skippedAmount += amount
        }
        if !fed { firstDate = date }
        fed = true
        lastDate = date
        oldestFirst.add(line: line, amount: amount, units: units, balance: balance)
        newestFirst.add(line: line, amount: amount, units: units, balance: balance)
    }

    /// The oldest row's date: the asset's balance before it is what `verdict` needs.
    public var oldestDate: Date? {
        guard fed else { return nil }
        return isNewestFirst ? lastDate : firstDate
    }

    /// Newest first when the last dated row is older than the first; on one day, whichever
    /// reading holds.
    private var isNewestFirst: Bool {
        guard let firstDate, let lastDate else { return false }
        if lastDate != firstDate { return lastDate < firstDate }
        return oldestFirst.mismatch != nil && newestFirst.mismatch == nil
    }

    /// The first row that disagrees, given the asset's balance before the oldest row.
    public func verdict(opening: Decimal) -> Mismatch? {
        isNewestFirst ? newestFirst.verdict(opening: opening) : oldestFirst.verdict(opening: opening)
    }
}
