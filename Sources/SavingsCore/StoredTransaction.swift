import Foundation

/// A transaction row as the store keeps it (`date` in integer milliseconds, `amount` as text),
/// the amount read straight from the bytes a database column hands over: no String is made,
/// and its digits are read once for both its Decimal and its `RunningTotal` units. Reading a busy account's month
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

    /// The row's values when the amount's text is in the stored form (a plain decimal of at
    /// most 19 digits): what `Amount.parse` and `RunningTotal.units` make of it. Nil for
    /// anything else; the caller then parses the text with those.
    public init?(milliseconds: Int64, amount: UnsafeBufferPointer<UInt8>) {
        guard amount.first != UInt8(ascii: "+"), let plain = PlainDecimal(amount, maxDigits: 19), let value = Amount.decimal(plain) else { return nil }
        self.init(milliseconds: milliseconds, amount: value, units: RunningTotal.units(plain))
    }

    /// The same from the text, for an amount not in the stored form.
    public init(milliseconds: Int64, amount: String) throws {
        self.init(milliseconds: milliseconds, amount: try Amount.parse(amount), units: RunningTotal.units(amount))
    }

    public var date: Date { Timestamp.date(milliseconds: milliseconds) }
}

/// The public id of a row stored by integer key: a version 8 UUID (RFC 9562's custom layout)
/// whose first four bytes spell "savd", whose sixth names the table (`tag`) and whose last
/// seven hold the row's integer key. Random (version 4), name-based (version 5) and
/// time-ordered (version 7) ids never take this form, so the ids of rows from before keep
/// naming their own rows.
public struct DerivedID: Sendable {
    /// The table byte: 0 transactions (schema v12), 1 allocation history (v14), 2 monthly plans (v16),
    /// 3 contributions (v17).
    public let tag: UInt8

    public init(tag: UInt8) { self.tag = tag }

    public func derived(ref: Int64) -> UUID {
        var value: uuid_t = (0x73, 0x61, 0x76, 0x64, 0, tag, 0x80, 0, 0x80, 0, 0, 0, 0, 0, 0, 0)
        withUnsafeMutableBytes(of: &value) { raw in
            for index in 9..<16 { raw[index] = UInt8(truncatingIfNeeded: UInt64(ref) >> (8 * (15 - index))) }
        }
        return UUID(uuid: value)
    }

    /// The key an id derived with this tag holds; nil for any other id.
    public func ref(_ uuid: UUID) -> Int64? {
        withUnsafeBytes(of: uuid.uuid) { raw -> Int64? in
            guard raw[0] == 0x73, raw[1] == 0x61, raw[2] == 0x76, raw[3] == 0x64, raw[4] == 0, raw[5] == tag, raw[6] == 0x80,
                  raw[7] == 0, raw[8] == 0x80 else { return nil }
            var ref: UInt64 = 0
            for index in 9..<16 { ref = ref << 8 | UInt64(raw[index]) }
            return ref > 0 ? Int64(ref) : nil
        }
    }
}

extension DerivedID {
    /// Transactions' public ids (schema v12 on).
    public static let transactions = DerivedID(tag: 0)
    /// Allocation-history rows' public ids (schema v14 on).
    public static let history = DerivedID(tag: 1)
    /// Monthly plans' public ids (schema v16 on).
    public static let plans = DerivedID(tag: 2)
    /// Contributions' public ids (schema v17 on).
    public static let contributions = DerivedID(tag: 3)
}
