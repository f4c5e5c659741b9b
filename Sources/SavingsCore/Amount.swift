import Foundation

/// Exact decimal amounts: strict parsing from wire/config text and fixed-scale formatting.
///
/// Amounts are `Foundation.Decimal` (38 significant digits). Text is parsed by hand so that
/// `0.1` is exactly one tenth and sloppy inputs ("1,5", "NaN", " 12", "1e400") are refused.
public enum Amount {
    /// Most fractional digits an amount may carry (asset units).
    public static let maxFractionDigits = 18
    /// Most significant digits `Decimal` holds exactly.
    public static let maxSignificantDigits = 38

    /// Parses a JSON-number-shaped decimal literal (`-12.50`, `0.1`, `1e3`).
    public static func parse(_ text: String, field: String = "amount") throws -> Decimal {
        if let plain = plainFastPath(text) { return plain }
        return try parseGeneral(text, field: field)
    }

    /// Every accepted shape (signs, exponents, long digit strings) and every refusal.
    static func parseGeneral(_ text: String, field: String) throws -> Decimal {
        func fail(_ reason: String) -> DomainError {
            DomainError(.invalidAmount, "\(field): \(reason)", details: ["field": field])
        }
        var bytes = Array(text.utf8)[...]
        if bytes.isEmpty { throw fail("an amount is required, got an empty string") }
        var negative = false
        if bytes.first == UInt8(ascii: "-") {
            negative = true
            bytes = bytes.dropFirst()
        } else if bytes.first == UInt8(ascii: "+") {
            bytes = bytes.dropFirst()
        }
        let isDigit: (UInt8) -> Bool = { $0 >= 48 && $0 <= 57 }
        let intPart = bytes.prefix(while: isDigit)
        bytes = bytes.dropFirst(intPart.count)
        var fracPart = ArraySlice<UInt8>()
        if bytes.first == UInt8(ascii: ".") {
            bytes = bytes.dropFirst()
            fracPart = bytes.prefix(while: isDigit)
            bytes = bytes.dropFirst(fracPart.count)
            if fracPart.isEmpty { throw fail("'\(text)' is not a decimal number (digits must follow the point)") }
        }
        if intPart.isEmpty && fracPart.isEmpty {
            throw fail("'\(text)' is not a decimal number")
        }
        var exponent = 0
        if let e = bytes.first, e == UInt8(ascii: "e") || e == UInt8(ascii: "E") {
            bytes = bytes.dropFirst()
            var expNegative = false
            if let s = bytes.first, s == UInt8(ascii: "-") || s == UInt8(ascii: "+") {
                expNegative = s == UInt8(ascii: "-")
                bytes = bytes.dropFirst()
            }
            let expDigits = bytes.prefix(while: isDigit)
            bytes = bytes.dropFirst(expDigits.count)
            guard !expDigits.isEmpty, expDigits.count <= 3, let value = Int(String(decoding: expDigits, as: UTF8.self)), value <= 60 else {
                throw fail("'\(text)' has an exponent out of range")
            }
            exponent = expNegative ? -value : value
        }
        if !bytes.isEmpty { throw fail("'\(text)' is not a decimal number") }

        // Normalise to plain digits and a scale, then check the limits.
        var digits = Array(intPart) + Array(fracPart)
        var scale = fracPart.count - exponent
        if scale < 0 {
            digits += Array(repeating: UInt8(ascii: "0"), count: -scale)
            scale = 0
        }
        while scale > 0, digits.last == UInt8(ascii: "0") {
            digits.removeLast()
            scale -= 1
        }
        while digits.count > 1, digits.first == UInt8(ascii: "0") { digits.removeFirst() }
        if digits.isEmpty { digits = [UInt8(ascii: "0")] }  // ".0", ".00": zero, as ".5" is a half
        if scale > maxFractionDigits {
            throw fail("'\(text)' has more than \(maxFractionDigits) decimal places")
        }
        let significant = digits.drop(while: { $0 == UInt8(ascii: "0") }).count
        if significant > maxSignificantDigits {
            throw fail("'\(text)' has more than \(maxSignificantDigits) significant digits")
        }
        // Up to 19 digits the value is built from an integer, exactly and without text.
        if digits.count <= 19, let significand = UInt64(String(decoding: digits, as: UTF8.self)) {
            return Decimal(sign: negative && significand != 0 ? .minus : .plus, exponent: -scale, significand: Decimal(significand))
        }
        var plain = String(decoding: digits, as: UTF8.self)
        if scale > 0 {
            if plain.count <= scale { plain = String(repeating: "0", count: scale - plain.count + 1) + plain }
            plain.insert(".", at: plain.index(plain.endIndex, offsetBy: -scale))
        }
        guard var value = Decimal(string: plain, locale: Locale(identifier: "en_US_POSIX")) else {
            throw fail("'\(text)' is not a decimal number")
        }
        if negative { value.negate() }
        return value
    }

    /// The common shape ("-1234.50": optional minus, at most 19 digits, at most 18 of them after
    /// the point) without allocating; the same value and representation as the general path
    /// (trailing fractional zeros dropped). Anything else returns nil for the general path.
    static func plainFastPath(_ text: String) -> Decimal? {
        var text = text
        return text.withUTF8 { bytes -> Decimal? in
            guard bytes.first != UInt8(ascii: "+"), let plain = PlainDecimal(bytes, maxDigits: 19) else { return nil }
            return decimal(plain)
        }
    }

    /// The Decimal of a plain decimal of at most 19 digits and 18 decimals (nil otherwise),
    /// trailing zeros of the fraction dropped.
    static func decimal(_ plain: PlainDecimal) -> Decimal? {
        guard plain.decimals <= maxFractionDigits, plain.digits >= 0, plain.digits < 10_000_000_000_000_000_000 else { return nil }
        var significand = UInt64(plain.digits)
        var exponent = plain.decimals
        while exponent > 0, significand % 10 == 0 {
            significand /= 10
            exponent -= 1
        }
        return Decimal(sign: plain.negative && significand != 0 ? .minus : .plus, exponent: -exponent, significand: Decimal(significand))
    }

    /// Number of fractional digits the value carries once trailing zeros are ignored.
    public static func fractionDigits(of value: Decimal) -> Int {
        fractionDigits(ofPlain: plainText(value))
    }

    static func fractionDigits(ofPlain text: String) -> Int {
        guard let dot = text.utf8.firstIndex(of: UInt8(ascii: ".")) else { return 0 }
        return text.utf8.distance(from: text.utf8.index(after: dot), to: text.utf8.endIndex)
    }

    /// Rounds half-even to `scale` places and prints exactly `scale` fractional digits.
    public static func format(_ value: Decimal, scale: Int) -> String {
        // A value with no more than `scale` decimals is its own rounding: printed as it is.
        guard value.exponent < -scale else { return padded(plainText(value), scale: scale) }
        var input = value
        var rounded = Decimal()
        NSDecimalRound(&rounded, &input, scale, .bankers)
        return padded(plainText(rounded), scale: scale)
    }

    /// Plain text with exactly `scale` fractional digits, given one with at most that many.
    static func padded(_ plain: String, scale: Int) -> String {
        var text = plain
        if text == "-0" { text = "0" }
        guard scale > 0 else { return text }
        if let dot = text.utf8.firstIndex(of: UInt8(ascii: ".")) {
            let have = text.utf8.distance(from: text.utf8.index(after: dot), to: text.utf8.endIndex)
            return text + String(repeating: "0", count: max(0, scale - have))
        }
        return text + "." + String(repeating: "0", count: scale)
    }

    /// The shortest exact decimal text of the value (no exponent): `value.description`, which
    /// takes about 2 µs (it divides the 128-bit significand by ten digit by digit); a value
    /// whose significand fits 64 bits is written from that integer instead, about ten times
    /// faster (imports and answers write amounts by the thousand).
    public static func plainText(_ value: Decimal) -> String {
        plainTextFromSignificand(value) ?? value.description
    }

    /// `value.description` for a value whose significand fits 64 bits, nil for any other (and
    /// where `DecimalParts` has none). A significand ending in zero with a negative exponent
    /// (which arithmetic does not leave: Decimal drops such zeros) also goes to `description`,
    /// so the two never differ on how trailing zeros are shown.
    static func plainTextFromSignificand(_ value: Decimal) -> String? {
        guard let parts = DecimalParts(value) else { return nil }
        if parts.significand == 0 { return "0" }
        let exponent = parts.exponent
        guard exponent >= -40, exponent <= 40, parts.significand <= UInt128(UInt64.max) else { return nil }
        var magnitude = UInt64(parts.significand)
        guard exponent >= 0 || magnitude % 10 != 0 else { return nil }
        var digits: (UInt64, UInt64, UInt64) = (0, 0, 0)  // 20 digits at most, backwards
        let count = withUnsafeMutableBytes(of: &digits) { buffer in
            var count = 0
            repeat {
                buffer[count] = UInt8(truncatingIfNeeded: 48 + magnitude % 10)
                magnitude /= 10
                count += 1
            } while magnitude > 0
            return count
        }
        let negative = parts.negative
        let decimals = max(0, -exponent), zeros = max(0, exponent)
        let length = (negative ? 1 : 0) + max(1, count - decimals) + zeros + (decimals > 0 ? 1 + decimals : 0)
        return withUnsafeBytes(of: &digits) { reversed in
            String(unsafeUninitializedCapacity: length) { text in
                var at = 0
                func put(_ byte: UInt8) {
                    text[at] = byte
                    at += 1
                }
                if negative { put(UInt8(ascii: "-")) }
                // reversed[i] is the digit worth 10^(i - decimals).
                if count > decimals {
                    for index in stride(from: count - 1, through: decimals, by: -1) { put(reversed[index]) }
                } else {
                    put(UInt8(ascii: "0"))
                }
                for _ in 0..<zeros { put(UInt8(ascii: "0")) }
                if decimals > 0 {
                    put(UInt8(ascii: "."))
                    for index in stride(from: decimals - 1, through: 0, by: -1) { put(index < count ? reversed[index] : UInt8(ascii: "0")) }
                }
                return at
            }
        }
    }

    /// `plainText(parse(text))` for plain amounts (optional minus, up to 38 digits, at most 18
    /// after the point), worked out on the digits without a `Decimal`; nil for every other shape.
    public static func plainText(parsing text: String) -> String? {
        var copy = text
        // Already in its stored form: the same text, without making another.
        let canonical: String?? = copy.withUTF8 { bytes in
            guard bytes.first != UInt8(ascii: "+"), let plain = PlainDecimal(bytes, maxDigits: 38),
                  plain.decimals <= maxFractionDigits else { return String??.none }
            return isCanonical(bytes) ? String?.none : plain.canonicalText
        }
        guard let canonical else { return nil }
        return canonical ?? text
    }

    /// A stored amount read once from its text: `parse(text)`, `plainText(parsing: text)` and
    /// `RunningTotal.units(of:)` of it, for the plain shape with at most 19 digits (nil for any
    /// other, which takes those paths one by one).
    public static func stored(parsing text: String) -> (value: Decimal, text: String, units: Int128?)? {
        var copy = text
        let read: (Decimal, String?, Int128?)? = copy.withUTF8 { bytes in
            guard bytes.first != UInt8(ascii: "+"), let plain = PlainDecimal(bytes, maxDigits: 19), let value = decimal(plain) else {
                return nil
            }
            return (value, isCanonical(bytes) ? nil : plain.canonicalText, RunningTotal.units(plain))
        }
        guard let read else { return nil }
        return (read.0, read.1 ?? text, read.2)
    }

    /// Whether the text of an amount `PlainDecimal` reads is already what `plainText` prints
    /// (most files' amounts are): no plus, no leading or trailing zeros, no bare point, no
    /// minus on zero.
    private static func isCanonical(_ bytes: UnsafeBufferPointer<UInt8>) -> Bool {
        func digit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }
        let negative = bytes.first == UInt8(ascii: "-")
        var index = negative ? 1 : 0
        let integerStart = index
        while index < bytes.count, digit(bytes[index]) { index += 1 }
        let integerDigits = index - integerStart
        guard integerDigits > 0, integerDigits == 1 || bytes[integerStart] != UInt8(ascii: "0") else { return false }
        guard index < bytes.count else { return !(negative && bytes[integerStart] == UInt8(ascii: "0")) }
        guard bytes[index] == UInt8(ascii: "."), index + 1 < bytes.count, bytes[bytes.count - 1] != UInt8(ascii: "0") else { return false }
        return bytes[(index + 1)...].allSatisfy(digit)
    }

    /// The plain text of the sum of two stored amounts, each optionally prefixed with any number
    /// of minus signs (a trigger negates by prefixing one), worked out on the digits; nil when
    /// either is another shape or the sum leaves 128 bits, for the `Decimal` path.
    public static func plainSum(_ first: String, _ second: String) -> String? {
        func read(_ text: String) -> PlainDecimal? {
            var text = text
            return text.withUTF8 { bytes in
                var negate = false, start = 0
                while start < bytes.count, bytes[start] == UInt8(ascii: "-") {
                    negate.toggle()
                    start += 1
                }
                let rest = UnsafeBufferPointer(rebasing: bytes[start...])
                guard rest.first != UInt8(ascii: "+"), var plain = PlainDecimal(rest, maxDigits: 38),
                      plain.decimals <= maxFractionDigits else { return nil }
                if negate { plain.negative.toggle() }
                return plain
            }
        }
        guard let a = read(first), let b = read(second) else { return nil }
        return a.adding(b)?.canonicalText
    }
}

/// Plain decimal text read without allocating: an optional sign, digits with at most one
/// point, digits after it. The shape both fast paths accept.
struct PlainDecimal {
    var negative: Bool
    /// The digits as an integer, the point ignored.
    var digits: Int128
    /// How many of them follow the point.
    var decimals: Int

    /// Nil for any other shape, or more than `maxDigits` digits (at most 38, which stay below 2¹²⁷).
    init?(_ bytes: UnsafeBufferPointer<UInt8>, maxDigits: Int) {
        var index = 0
        negative = false
        if index < bytes.count, bytes[index] == UInt8(ascii: "-") || bytes[index] == UInt8(ascii: "+") {
            negative = bytes[index] == UInt8(ascii: "-")
            index += 1
        }
        digits = 0
        var count = 0, fraction = -1
        while index < bytes.count {
            let byte = bytes[index]
            index += 1
            if byte == UInt8(ascii: ".") {
                guard fraction < 0 else { return nil }
                fraction = 0
                continue
            }
            guard byte >= 48, byte <= 57 else { return nil }
            count += 1
            guard count <= min(maxDigits, 38) else { return nil }
            digits = digits &* 10 &+ Int128(byte &- 48)
            if fraction >= 0 { fraction += 1 }
        }
        guard count > 0, fraction != 0 else { return nil }
        decimals = max(fraction, 0)
    }

    init(negative: Bool, digits: Int128, decimals: Int) {
        self.negative = negative
        self.digits = digits
        self.decimals = decimals
    }

    /// 10ⁿ for n ≤ 38 (10³⁸ < 2¹²⁷).
    static let powersOfTen: [Int128] = (0...38).map { power in (0..<power).reduce(Int128(1)) { value, _ in value * 10 } }

    /// The exact sum, nil when it leaves 128 bits.
    func adding(_ other: PlainDecimal) -> PlainDecimal? {
        let decimals = max(self.decimals, other.decimals)
        func signed(_ value: PlainDecimal) -> Int128? {
            let (scaled, overflow) = value.digits.multipliedReportingOverflow(by: Self.powersOfTen[decimals - value.decimals])
            return overflow ? nil : (value.negative ? -scaled : scaled)
        }
        guard let a = signed(self), let b = signed(other), case (let sum, false) = a.addingReportingOverflow(b),
              sum != .min else { return nil }
        return PlainDecimal(negative: sum < 0, digits: Int128(sum.magnitude), decimals: decimals)
    }

    /// What `Amount.plainText` prints for this value: trailing fractional zeros dropped, a
    /// zero point dropped with them, no sign on zero.
    var canonicalText: String {
        var digits = self.digits, decimals = self.decimals
        while decimals > 0, digits % 10 == 0 {
            digits /= 10
            decimals -= 1
        }
        if digits == 0 { return "0" }
        // At most 39 digits, a point, a leading "0." and decimals' zeros, and a sign.
        return String(unsafeUninitializedCapacity: 64) { buffer in
            var end = 64
            var written = 0
            func put(_ byte: UInt8) {
                end -= 1
                buffer[end] = byte
            }
            while digits > 0 || written <= decimals {
                if written == decimals, decimals > 0 { put(UInt8(ascii: ".")) }
                put(UInt8(48 + Int(digits % 10)))
                digits /= 10
                written += 1
            }
            if negative { put(UInt8(ascii: "-")) }
            let count = 64 - end
            for index in 0..<count { buffer[index] = buffer[end + index] }
            return count
        }
    }
}
