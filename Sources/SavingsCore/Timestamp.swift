import Foundation

/// Wire and storage form of instants: UTC, ISO 8601 with milliseconds and `Z`.
///
/// Instants are canonicalised to whole milliseconds computed as integers, so that storing,
/// reading and printing a timestamp never drifts by a millisecond through binary rounding.
public enum Timestamp {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    public static func format(_ date: Date) -> String {
        let millis = milliseconds(date)
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        let fraction = millis - seconds * 1000
        var text = withoutFraction.format(Date(timeIntervalSince1970: TimeInterval(seconds)))
        let digits = String(fraction)
        text.insert(contentsOf: "." + String(repeating: "0", count: 3 - digits.count) + digits, at: text.index(before: text.endIndex))
        return text
    }

    /// Parses an ISO 8601 instant with or without fractional seconds.
    public static func parse(_ text: String, field: String) throws -> Date {
        if let date = try? withFraction.parse(text) { return truncatedToMilliseconds(date) }
        if let date = try? withoutFraction.parse(text) { return date }
        throw DomainError.invalidField(field, "'\(text)' is not an ISO 8601 timestamp (e.g. 2026-11-22T10:00:00Z)")
    }

    /// The instant at whole-millisecond precision, as stored.
    public static func truncatedToMilliseconds(_ date: Date) -> Date {
        Date(timeIntervalSince1970: TimeInterval(milliseconds(date)) / 1000)
    }

    /// Whole milliseconds since 1970, rounded to the nearest one.
    public static func milliseconds(_ date: Date) -> Int64 {
        Int64((date.timeIntervalSince1970 * 1000).rounded())
    }
}
