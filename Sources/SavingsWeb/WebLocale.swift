import Foundation
import Synchronization

/// The browser's locale (its `Accept-Language`) for the page being answered: amounts with its
/// decimal and grouping signs, every digit kept ("1.234,56" in German, "1,234.56" in English);
/// dates and months in its words and order. The pages' own words stay English. Without the
/// header (a script, a test) figures are shown as the daemon writes them.
///
/// An amount typed into a form may use the locale's signs too; it is written back as the
/// daemon reads it only where that is unambiguous (`input`).
struct WebLocale: Sendable, Equatable {
    /// The locale of the request being answered, set by the guard around each request.
    @TaskLocal static var current: WebLocale?

    let identifier: String
    let locale: Locale
    let decimal: String
    let grouping: String
    let groupSize: Int

    /// The longest header read, and the most tags looked at.
    static let maxHeaderBytes = 512
    static let maxTags = 16

    /// The first language of the header the machine knows, by preference (`q`); nil when none.
    static func preferred(_ header: String?) -> WebLocale? {
        guard let header, !header.isEmpty, header.utf8.count <= maxHeaderBytes else { return nil }
        var tags: [(tag: String, q: Double, order: Int)] = []
        for (order, entry) in header.split(separator: ",", omittingEmptySubsequences: true).prefix(maxTags).enumerated() {
            let parts = entry.split(separator: ";").map { $0.trimmingCharacters(in: .whitespaces) }
            guard let tag = parts.first, Self.wellFormed(tag) else { continue }
            var q = 1.0
            for parameter in parts.dropFirst() where parameter.hasPrefix("q=") {
                q = Double(parameter.dropFirst(2)).map { min(max($0, 0), 1) } ?? 0
            }
            if q > 0 { tags.append((tag, q, order)) }
        }
        for candidate in tags.sorted(by: { ($0.q, -$0.order) > ($1.q, -$1.order) }) {
            if let known = made(candidate.tag) { return known }
        }
        return nil
    }

    /// A language tag: letters, then subtags of letters and digits (`de`, `de-DE`, `zh-Hant-TW`).
    static func wellFormed(_ tag: String) -> Bool {
        let subtags = tag.split(separator: "-", omittingEmptySubsequences: false)
        guard let first = subtags.first, (2...8).contains(first.count), first.allSatisfy({ $0.isASCII && $0.isLetter }) else { return false }
        return subtags.count <= 4 && subtags.dropFirst().allSatisfy { (1...8).contains($0.count) && $0.allSatisfy { $0.isASCII && ($0.isLetter || $0.isNumber) } }
    }

    /// The languages this machine's Foundation has data for.
    private static let languages: Set<String> = Set(Locale.availableIdentifiers.compactMap { Locale(identifier: $0).language.languageCode?.identifier })

    /// Locales made so far, by tag (at most 64; a number formatter is not made per request).
    private static let made = Mutex<[String: WebLocale]>([:])

    private static func made(_ tag: String) -> WebLocale? {
        if let known = made.withLock({ $0[tag] }) { return known }
        let locale = Locale(identifier: tag)
        guard let language = locale.language.languageCode?.identifier, languages.contains(language) else { return nil }
        let numbers = NumberFormatter()
        numbers.locale = locale
        numbers.numberStyle = .decimal
        let made = WebLocale(identifier: tag, locale: locale, decimal: numbers.decimalSeparator ?? ".",
                             grouping: numbers.groupingSeparator ?? ",", groupSize: numbers.groupingSize > 0 ? numbers.groupingSize : 3)
        Self.made.withLock { if $0.count < 64 { $0[tag] = made } }
        return made
    }

    static func == (a: WebLocale, b: WebLocale) -> Bool { a.identifier == b.identifier }

    // MARK: Showing

    /// A plain decimal as the daemon writes it (`-1234.50`), in the current locale; any other
    /// text as it is.
    static func amount(_ text: String) -> String {
        guard let current, let parts = PlainDecimal(text) else { return text }
        var integer = ""
        let digits = Array(parts.integer)
        for (index, digit) in digits.enumerated() {
            if index > 0, (digits.count - index) % current.groupSize == 0 { integer += current.grouping }
            integer.append(digit)
        }
        return (parts.negative ? "-" : "") + integer + (parts.fraction.isEmpty ? "" : current.decimal + parts.fraction)
    }

    /// A day and time in the current locale's words ("25. Nov. 2026, 11:00"); nil without one.
    static func dateTime(_ date: Date, timeZone: TimeZone) -> String? {
        guard let current else { return nil }
        var style = Date.FormatStyle(date: .abbreviated, time: .shortened).locale(current.locale)
        style.timeZone = timeZone
        return date.formatted(style)
    }

    /// A month and year in the current locale's words ("Nov. 2026"); nil without one.
    static func month(year: Int, month: Int) -> String? {
        guard let current, let date = Calendar(identifier: .gregorian).date(from: DateComponents(timeZone: .gmt, year: year, month: month, day: 15)) else {
            return nil
        }
        var style = Date.FormatStyle().month(.abbreviated).year().locale(current.locale)
        style.timeZone = .gmt
        return date.formatted(style)
    }

    /// An amount for a form's field: the locale's decimal sign, no grouping, so that what is
    /// shown is read back as it was (`input`) whatever its digits ("1234,5" in German).
    static func field(_ text: String) -> String {
        guard let current, let parts = PlainDecimal(text) else { return text }
        return (parts.negative ? "-" : "") + parts.integer + (parts.fraction.isEmpty ? "" : current.decimal + parts.fraction)
    }

    // MARK: Reading

    /// An amount as typed, as the daemon reads it: the locale's decimal sign becomes a point and
    /// its grouping signs go, where they cannot be anything else: whole groups after a first
    /// group without a leading zero, and either a decimal sign after them (`1.234,56` in German
    /// is 1234.56) or more than one of them (`1.234.567`). Anything else is left as typed for the
    /// daemon to judge: in German "1.5", "0.125" and "1.085" stay what they say with a point,
    /// never 15, 125 or 1085; in English "0,125" is refused, never 125.
    static func input(_ text: String) -> String {
        let trimmed = text.trimmingCharacters(in: .whitespaces)
        guard let current, current.decimal != "." || current.grouping != "" else { return trimmed }
        var body = trimmed
        var sign = ""
        if body.hasPrefix("-") || body.hasPrefix("+") { sign = String(body.removeFirst()) }
        let decimalAt = body.range(of: current.decimal, options: .backwards)
        var integer = decimalAt.map { String(body[..<$0.lowerBound]) } ?? body
        let fraction = decimalAt.map { String(body[$0.upperBound...]) }
        // Grouping signs: a non-breaking or thin space is typed as a space too.
        let groupings = Set([current.grouping, " ", "\u{00A0}", "\u{202F}"].filter { !$0.isEmpty && $0 != current.decimal })
        if groupings.contains(where: { integer.contains($0) }) {
            var groups = [integer]
            for grouping in groupings { groups = groups.flatMap { $0.components(separatedBy: grouping) } }
            guard groups.count > 2 || fraction != nil, let first = groups.first, (1...current.groupSize).contains(first.count),
                  !first.hasPrefix("0"),
                  groups.dropFirst().allSatisfy({ $0.count == current.groupSize }),
                  groups.allSatisfy({ $0.allSatisfy(\.isASCII) && $0.allSatisfy(\.isNumber) }) else { return trimmed }
            integer = groups.joined()
        }
        guard let fraction else { return sign + integer }
        guard !fraction.isEmpty, fraction.allSatisfy({ $0.isASCII && $0.isNumber }) else { return trimmed }
        return sign + integer + "." + fraction
    }
}

/// A plain decimal's parts: `-1234.50` is negative, "1234" and "50".
struct PlainDecimal {
    var negative: Bool
    var integer: Substring
    var fraction: Substring

    init?(_ text: String) {
        var rest = text[...]
        negative = rest.hasPrefix("-")
        if negative { rest = rest.dropFirst() }
        let point = rest.firstIndex(of: ".")
        integer = point.map { rest[..<$0] } ?? rest
        fraction = point.map { rest[rest.index(after: $0)...] } ?? ""
        guard !integer.isEmpty, integer.allSatisfy({ $0.isASCII && $0.isNumber }),
              point == nil || (!fraction.isEmpty && fraction.allSatisfy({ $0.isASCII && $0.isNumber })) else { return nil }
    }
}
