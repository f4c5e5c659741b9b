import SavingsCore
import SavingsRPC

/// Amounts for people: digits grouped in thousands, the currency's decimal places, the code
/// after the number ("12,345.60 EUR", "0.01500000 BTC"). The daemon's exact decimal text is
/// only regrouped and padded, never rounded or passed through a float.
public enum Money {
    /// `value` (a decimal string) in `currency`; "-" when absent.
    public static func format(_ value: JSONValue?, _ currency: JSONValue?) -> String {
        guard let text = value?.stringValue else { return "-" }
        let code = currency?.stringValue
        let number = grouped(text, minimumFraction: code.flatMap { try? CurrencyCode($0).minorUnits } ?? 0)
        return code.map { number + " " + $0 } ?? number
    }

    /// A plain decimal text with thousands separators and at least `minimumFraction` decimals.
    /// Text that is not a plain decimal comes back unchanged.
    public static func grouped(_ text: String, minimumFraction: Int = 0) -> String {
        var digits = Substring(text)
        var sign = ""
        if digits.first == "-" || digits.first == "+" {
            sign = digits.first == "-" ? "-" : ""
            digits = digits.dropFirst()
        }
        let parts = digits.split(separator: ".", maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = parts.first, !whole.isEmpty, whole.allSatisfy(\.isASCIIDigit),
              parts.count == 1 || parts[1].allSatisfy(\.isASCIIDigit) else { return text }
        var fraction = parts.count == 2 ? String(parts[1]) : ""
        if fraction.count < minimumFraction { fraction += String(repeating: "0", count: minimumFraction - fraction.count) }
        var groups: [Substring] = []
        var end = whole.endIndex
        while end > whole.startIndex {
            let start = whole.index(end, offsetBy: -3, limitedBy: whole.startIndex) ?? whole.startIndex
            groups.insert(whole[start..<end], at: 0)
            end = start
        }
        return sign + groups.joined(separator: ",") + (fraction.isEmpty ? "" : "." + fraction)
    }
}

extension Character {
    var isASCIIDigit: Bool { ("0"..."9").contains(self) }
}
