import Foundation

/// A transaction row as the store keeps it (`date` and `amount` texts), read straight from the
/// bytes a database column hands over: no String is made, and the amount's digits are read
/// once for both its Decimal and its `RunningTotal` units. Reading a busy account's month
/// reads one of these per row.
public struct StoredTransaction: Sendable, Equatable {
    /// Milliseconds since 1970-01-01T00:00:00Z.
    public var milliseconds: Int64
    public var amount: Decimal
    /// `RunningTotal.units(amount)`.
    public var units: Int128?

    public init(milliseconds: Int64, amount: Decimal, units: Int128?) {
        self.milliseconds = milliseconds
        self.amount = amount
        self.units = units
    }

    /// The row's values when both texts are in the stored form (`YYYY-MM-DDTHH:MM:SS.mmmZ`, a
    /// plain decimal of at most 19 digits): what `Timestamp.parse`, `Amount.parse` and
    /// `RunningTotal.units` make of them. Nil for anything else; the caller then parses the
    /// texts with those.
    public init?(date: UnsafeBufferPointer<UInt8>, amount: UnsafeBufferPointer<UInt8>) {
        guard let milliseconds = Timestamp.canonicalMilliseconds(bytes: date), amount.first != UInt8(ascii: "+"),
              let plain = PlainDecimal(amount, maxDigits: 19), let value = Amount.decimal(plain) else { return nil }
        self.init(milliseconds: milliseconds, amount: value, units: RunningTotal.units(plain))
    }

    /// The same from the texts, for rows not in the stored form.
    public init(date: String, amount: String) throws {
        self.init(milliseconds: Timestamp.milliseconds(try Timestamp.parse(date, field: "date")),
                  amount: try Amount.parse(amount), units: RunningTotal.units(amount))
    }

    public var date: Date { Timestamp.date(milliseconds: milliseconds) }
}
