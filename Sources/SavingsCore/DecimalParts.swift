import Foundation

/// A Decimal's sign, significand and exponent, read from the value's own fields.
///
/// Foundation keeps a Decimal in 20 bytes: the exponent (a signed byte), a byte of length
/// (in 16-bit words, high nibble), sign (0x8) and compactness (0x4), two reserved bytes, then
/// eight little-endian 16-bit words of significand. The fields are not public API; the public
/// way to the significand as an integer goes through `NSDecimalNumber` (an object) or the text
/// (`description` divides the 128-bit significand by ten digit by digit), and amounts are
/// written and summed by the thousand. Whether this Foundation lays a Decimal out so is checked
/// once against its public `exponent`, `sign` and `significand`; where it does not, there are
/// no parts and callers take the public way.
struct DecimalParts: Equatable {
    var negative: Bool
    var significand: UInt128
    var exponent: Int

    /// The parts of `value`; nil for NaN, or where the layout is not the one checked.
    init?(_ value: Decimal) {
        guard Self.layoutHolds, let parts = Self.read(value) else { return nil }
        self = parts
    }

    private init(negative: Bool, significand: UInt128, exponent: Int) {
        self.negative = negative
        self.significand = significand
        self.exponent = exponent
    }

    private static func read(_ value: Decimal) -> DecimalParts? {
        guard MemoryLayout<Decimal>.size == 20 else { return nil }
        return withUnsafeBytes(of: value) { raw -> DecimalParts? in
            let exponent = Int(Int8(bitPattern: raw[0])), length = Int(raw[1] >> 4), negative = raw[1] & 0x8 != 0
            guard length > 0 || !negative else { return nil }  // NaN
            var significand: UInt128 = 0
            for word in stride(from: length - 1, through: 0, by: -1) {
                significand = significand << 16 | UInt128(raw[4 + 2 * word]) | UInt128(raw[5 + 2 * word]) << 8
            }
            return DecimalParts(negative: negative, significand: significand, exponent: exponent)
        }
    }

    /// Whether `read` gives this Foundation's own exponent, sign and significand, on values of
    /// every shape (one to eight words, both signs, exponents either way), and nothing for NaN.
    static let layoutHolds: Bool = {
        let samples = ["0", "1", "-1", "12345", "-1.5", "0.000000000000000001", "-123456789.123456789", "65536", "4294967296.5",
                       "18446744073709551616", "170141183460469231731.687303715884105727", "1e-19", "123456789012345678901234567890.123",
                       "-99999999999999999999.999999999999999999", "1000000000000000000000000000000", "0.1234567890123456789"]
        return samples.allSatisfy { text in
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")), let parts = read(value) else { return false }
            return parts.exponent == value.exponent && parts.negative == (value.sign == .minus)
                && String(parts.significand) == value.significand.description
        } && read(.nan) == nil
    }()
}
