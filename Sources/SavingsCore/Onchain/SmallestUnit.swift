import Foundation

/// Exact conversion of a chain's integer amounts (satoshi, wei, a token's base unit), which
/// providers send as decimal digit strings, into asset amounts. Nothing is ever rounded: a value
/// that cannot be held exactly is refused.
public enum SmallestUnit {
    /// Most decimals an asset amount keeps (a token with more cannot be held exactly).
    public static let maxDecimals = Amount.maxFractionDigits

    /// `digits` (an unsigned integer, up to 38 digits) divided by 10^`decimals`.
    public static func amount(_ digits: String, decimals: Int) throws -> Decimal {
        guard !digits.isEmpty, digits.utf8.count <= Amount.maxSignificantDigits, digits.utf8.allSatisfy({ $0 >= 48 && $0 <= 57 }) else {
            throw DomainError(.invalidAmount, "'\(digits.prefix(60))' is not an amount in the chain's smallest unit")
        }
        guard (0...maxDecimals).contains(decimals) else {
            throw DomainError(.invalidAmount, "a token with \(decimals) decimals cannot be held exactly (at most \(maxDecimals))")
        }
        let whole = try Amount.parse(digits)
        return Decimal(sign: .plus, exponent: -decimals, significand: whole)
    }

    /// `a + b` when it is exact (at most 38 significant digits); nil when it would be rounded.
    public static func exactSum(_ a: Decimal, _ b: Decimal) -> Decimal? {
        var left = a, right = b, result = Decimal()
        guard NSDecimalAdd(&result, &left, &right, .plain) == .noError else { return nil }
        // The sum's digits must be what the two amounts say: checked by taking one back out.
        var back = Decimal(), total = result
        guard NSDecimalSubtract(&back, &total, &right, .plain) == .noError, back == a else { return nil }
        return result
    }

    /// The smallest-unit digits of an amount of `decimals` (the inverse of `amount`).
    public static func digits(_ amount: Decimal, decimals: Int) -> String {
        var scaled = amount * Decimal(sign: .plus, exponent: decimals, significand: 1)
        var rounded = Decimal()
        NSDecimalRound(&rounded, &scaled, 0, .plain)
        return Amount.plainText(rounded)
    }
}
