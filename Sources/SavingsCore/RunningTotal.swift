import Foundation

/// A running sum of amounts for loops over many change points, exact like `Decimal` but kept as
/// an integer count of 10⁻¹⁸ units while it fits in 128 bits (every stored amount has at most
/// 18 decimals; the range is ±1.7 × 10²⁰). Adding integers costs nothing next to `Decimal`
/// arithmetic, which allocates. Past that range it carries on in `Decimal`, so nothing is
/// ever rounded.
public struct RunningTotal: Sendable, Equatable {
    /// The total in 10⁻¹⁸ units, while it fits.
    public private(set) var units: Int128?
    private var exact: Decimal

    public init(_ value: Decimal) {
        units = Self.units(of: value)
        exact = units == nil ? value : 0
    }

    /// `value` × 10¹⁸ from its plain decimal text ("-12.5", "3"), or nil when it has more than
    /// 18 decimals, an exponent, or does not fit.
    public static func units(_ text: String) -> Int128? {
        var text = text
        return text.withUTF8 { units(bytes: $0) }
    }

    static func units(bytes: UnsafeBufferPointer<UInt8>) -> Int128? {
        PlainDecimal(bytes, maxDigits: 38).flatMap(units)
    }

    static func units(_ plain: PlainDecimal) -> Int128? {
        guard plain.decimals <= Amount.maxFractionDigits else { return nil }
        let (scaled, overflow) = plain.digits.multipliedReportingOverflow(by: PlainDecimal.powersOfTen[Amount.maxFractionDigits - plain.decimals])
        guard !overflow else { return nil }
        return plain.negative ? -scaled : scaled
    }

    /// `value` × 10¹⁸, or nil when it has more than 18 decimals or does not fit: from its
    /// significand and exponent (`DecimalParts`), else from its text.
    static func units(of value: Decimal) -> Int128? {
        guard let parts = DecimalParts(value) else { return units(Amount.plainText(value)) }
        var magnitude = parts.significand, shift = parts.exponent + Amount.maxFractionDigits
        // A significand with trailing zeros may hold more decimals than the value has.
        while shift < 0, magnitude % 10 == 0, magnitude != 0 {
            magnitude /= 10
            shift += 1
        }
        guard shift >= 0, shift < PlainDecimal.powersOfTen.count, magnitude <= UInt128(Int128.max) else { return nil }
        let (scaled, overflow) = Int128(magnitude).multipliedReportingOverflow(by: PlainDecimal.powersOfTen[shift])
        guard !overflow else { return nil }
        return parts.negative ? -scaled : scaled
    }

    /// The Decimal of `units` × 10⁻¹⁸, exactly (|units| < 2¹²⁷ has at most 39 digits, and
    /// Decimal's 128-bit significand holds them).
    static func decimal(units: Int128) -> Decimal {
        let magnitude = units.magnitude
        let low = Decimal(UInt64(truncatingIfNeeded: magnitude))
        let significand = magnitude >> 64 == 0 ? low : Decimal(UInt64(truncatingIfNeeded: magnitude >> 64)) * twoToThe64 + low
        return Decimal(sign: units < 0 ? .minus : .plus, exponent: -Amount.maxFractionDigits, significand: significand)
    }

    private static let twoToThe64 = Decimal(string: "18446744073709551616")!

    public var value: Decimal { units.map(Self.decimal(units:)) ?? exact }

    /// `Amount.plainText(value)`, written from the integer units when the total has them.
    public var plainText: String {
        guard let units, units != .min else { return Amount.plainText(value) }
        return PlainDecimal(negative: units < 0, digits: units < 0 ? -units : units, decimals: Amount.maxFractionDigits).canonicalText
    }

    public var isZero: Bool { units.map { $0 == 0 } ?? exact.isZero }

    /// Adds `amount`; `units` is its `RunningTotal.units` when the caller has it (parsed from
    /// the stored text), else it is worked out here.
    public mutating func add(_ amount: Decimal, units known: Int128? = nil) {
        if let current = units {
            if let addend = known ?? Self.units(of: amount), case (let sum, false) = current.addingReportingOverflow(addend) {
                units = sum
                return
            }
            exact = Self.decimal(units: current)
            units = nil
        }
        exact += amount
    }

    /// Adds another total (integers when both have them).
    public mutating func add(_ other: RunningTotal) {
        if let mine = units, let theirs = other.units, case (let sum, false) = mine.addingReportingOverflow(theirs) {
            units = sum
            return
        }
        self = RunningTotal(value + other.value)
    }

    /// Whether this total is `other`'s value (one may be held as units, the other not).
    public func equals(_ other: RunningTotal) -> Bool {
        if let mine = units, let theirs = other.units { return mine == theirs }
        return value == other.value
    }

    /// Whether this total is more than `other`.
    public func exceeds(_ other: RunningTotal) -> Bool {
        if let mine = units, let theirs = other.units { return mine > theirs }
        return value > other.value
    }

    public var isNegative: Bool { units.map { $0 < 0 } ?? (exact < 0) }

    /// Whether this total is at most `other`, or at most zero when `other` is negative
    /// (`self <= max(other, 0)`).
    public func isCovered(by other: RunningTotal) -> Bool {
        if let mine = units, let theirs = other.units { return mine <= max(theirs, 0) }
        return value <= max(other.value, 0)
    }
}
