import Foundation

/// Checks a file's running balance column for one asset, streaming, in either order: files
/// oldest first say balance(n) = balance(n−1) + amount(n); files newest first (many banks)
/// say balance(n) = balance(n−1) − amount(n−1). Both readings are followed as the rows come,
/// and the file's dates choose between them at the end. The oldest row then ties the file to
/// the asset's history: its balance must be the asset's balance before it plus its amount.
///
/// Rows a rule skips still move the file's balance: they are fed too, and what they moved
/// is reported (`skippedAmount`), since the asset will not hold it.
public struct RunningBalanceCheck: Sendable {
    public struct Mismatch: Sendable, Equatable {
        public var line: Int
        public var expected: Decimal
        public var found: Decimal
    }

    private struct Reading: Sendable {
        var balance: Decimal?
        var amount: Decimal = 0
        var mismatch: Mismatch?
    }

    private struct Row: Sendable {
        var line: Int
        var date: Date?
        var amount: Decimal
        var balance: Decimal?
    }

    private var oldestFirst = Reading()
    private var newestFirst = Reading()
    private var first: Row?
    private var last: Row?
    public private(set) var skippedAmount: Decimal = 0

    public init() {}

    /// Feeds one row of the asset, in file order. `date` is nil for a skipped row whose date
    /// was not read; `balance` nil when the row's balance field is empty.
    public mutating func add(line: Int, date: Date?, amount: Decimal, balance: Decimal?, skipped: Bool) {
        if skipped { skippedAmount += amount }
        let row = Row(line: line, date: date, amount: amount, balance: balance)
        if first == nil {
            first = row
        } else {
            if let previous = oldestFirst.balance {
                let expected = previous + amount
                if let balance, balance != expected, oldestFirst.mismatch == nil {
                    oldestFirst.mismatch = Mismatch(line: line, expected: expected, found: balance)
                }
            }
            if let previous = newestFirst.balance {
                let expected = previous - newestFirst.amount
                if let balance, balance != expected, newestFirst.mismatch == nil {
                    newestFirst.mismatch = Mismatch(line: line, expected: expected, found: balance)
                }
            }
        }
        oldestFirst.balance = balance ?? oldestFirst.balance.map { $0 + amount }
        newestFirst.balance = balance ?? newestFirst.balance.map { [amount = newestFirst.amount] in $0 - amount }
        newestFirst.amount = amount
        last = row
    }

    /// The oldest row's date: the asset's balance before it is what `verdict` needs.
    public var oldestDate: Date? {
        guard let first else { return nil }
        return isNewestFirst ? last?.date : first.date
    }

    /// Newest first when the last dated row is older than the first; on one day, whichever
    /// reading holds.
    private var isNewestFirst: Bool {
        guard let firstDate = first?.date, let lastDate = last?.date else { return false }
        if lastDate != firstDate { return lastDate < firstDate }
        return oldestFirst.mismatch != nil && newestFirst.mismatch == nil
    }

    /// The first row that disagrees, given the asset's balance before the oldest row.
    public func verdict(opening: Decimal) -> Mismatch? {
        let newest = isNewestFirst
        if let mismatch = (newest ? newestFirst : oldestFirst).mismatch { return mismatch }
        guard let oldest = newest ? last : first, let balance = oldest.balance else { return nil }
        let expected = opening + oldest.amount
        return balance == expected ? nil : Mismatch(line: oldest.line, expected: expected, found: balance)
    }
}
