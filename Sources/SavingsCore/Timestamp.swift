import Foundation

/// Wire and storage form of instants: UTC, ISO 8601 with milliseconds and `Z`.
public enum Timestamp {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    public static func format(_ date: Date) -> String {
        withFraction.format(truncatedToMilliseconds(date))
    }

    /// Parses an ISO 8601 instant with or without fractional seconds.
    public static func parse(_ text: String, field: String) throws -> Date {
        if let date = try? withFraction.parse(text) { return date }
        if let date = try? withoutFraction.parse(text) { return date }
        throw DomainError.invalidField(field, "'\(text)' is not an ISO 8601 timestamp (e.g. 2026-11-22T10:00:00Z)")
    }

    /// Storage keeps milliseconds; truncating up front keeps round trips exact.
    public static func truncatedToMilliseconds(_ date: Date) -> Date {
        let millis = (date.timeIntervalSince1970 * 1000).rounded(.down)
        return Date(timeIntervalSince1970: millis / 1000)
    }
}
