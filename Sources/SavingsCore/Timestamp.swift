import Foundation

/// Wire and storage form of instants: UTC, ISO 8601 with milliseconds and `Z`.
///
/// Instants are canonicalised to whole milliseconds computed as integers, so that storing,
/// reading and printing a timestamp never drifts by a millisecond through binary rounding.
public enum Timestamp {
    private static let withFraction = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
    private static let withoutFraction = Date.ISO8601FormatStyle()

    /// `YYYY-MM-DDTHH:MM:SS.mmmZ`, computed with integer calendar arithmetic (proleptic
    /// Gregorian, as ISO 8601 prescribes): this runs for every stored row, so no formatter.
    public static func format(_ date: Date) -> String {
        format(milliseconds: milliseconds(date))
    }

    /// `format` of the instant `millis` milliseconds after 1970 (as the store keeps instants).
    public static func format(milliseconds millis: Int64) -> String {
        var fixed = false
        let text = String(unsafeUninitializedCapacity: 24) { text in
            fixed = write(milliseconds: millis, into: text)
            return fixed ? 24 : 0
        }
        return fixed ? text : foundationFormat(millis)
    }

    /// Calls `body` with the bytes of `format(milliseconds:)`, without making a String where
    /// the fixed form applies (an import hashes every row's instant).
    public static func withFormatted<R>(milliseconds millis: Int64, _ body: (UnsafeBufferPointer<UInt8>) throws -> R) rethrows -> R {
        try withUnsafeTemporaryAllocation(of: UInt8.self, capacity: 24) { buffer in
            if write(milliseconds: millis, into: buffer) { return try body(UnsafeBufferPointer(buffer)) }
            var text = foundationFormat(millis)
            return try text.withUTF8(body)
        }
    }

    /// Writes the 24 bytes of `YYYY-MM-DDTHH:MM:SS.mmmZ` into `text`; false (nothing written)
    /// for a year outside 1583...9999, which Foundation formats.
    private static func write(milliseconds millis: Int64, into text: UnsafeMutableBufferPointer<UInt8>) -> Bool {
        let days = millis >= 0 ? millis / 86_400_000 : (millis - 86_399_999) / 86_400_000
        let inDay = millis - days * 86_400_000
        let (year, month, day) = civil(fromDays: days)
        guard (1583...9999).contains(year) else { return false }
        let hour = Int(inDay / 3_600_000), minute = Int(inDay / 60_000 % 60), second = Int(inDay / 1000 % 60), fraction = Int(inDay % 1000)
        func put(_ value: Int, _ width: Int, at start: Int) {
            var value = value
            for index in stride(from: start + width - 1, through: start, by: -1) {
                text[index] = UInt8(truncatingIfNeeded: 48 + value % 10)
                value /= 10
            }
        }
        put(year, 4, at: 0)
        put(month, 2, at: 5)
        put(day, 2, at: 8)
        put(hour, 2, at: 11)
        put(minute, 2, at: 14)
        put(second, 2, at: 17)
        put(fraction, 3, at: 20)
        (text[4], text[7], text[10], text[13], text[16], text[19], text[23]) = (0x2D, 0x2D, 0x54, 0x3A, 0x3A, 0x2E, 0x5A)  // - - T : : . Z
        return true
    }

    /// Before the Gregorian reform (and beyond four-digit years) Foundation's calendar rules
    /// apply, as they do when parsing.
    static func foundationFormat(_ millis: Int64) -> String {
        let seconds = millis >= 0 ? millis / 1000 : (millis - 999) / 1000
        var text = withoutFraction.format(Date(timeIntervalSince1970: TimeInterval(seconds)))
        text.insert(contentsOf: "." + pad(Int(millis - seconds * 1000), 3), at: text.index(before: text.endIndex))
        return text
    }

    private static func pad(_ value: Int, _ width: Int) -> String {
        let digits = String(value)
        return digits.count >= width ? digits : String(repeating: "0", count: width - digits.count) + digits
    }

    /// Year, month and day of a day count since 1970-01-01 (H. Hinnant's civil_from_days).
    static func civil(fromDays days: Int64) -> (year: Int, month: Int, day: Int) {
        let z = days + 719_468
        let era = (z >= 0 ? z : z - 146_096) / 146_097
        let dayOfEra = z - era * 146_097
        let yearOfEra = (dayOfEra - dayOfEra / 1460 + dayOfEra / 36_524 - dayOfEra / 146_096) / 365
        let dayOfYear = dayOfEra - (365 * yearOfEra + yearOfEra / 4 - yearOfEra / 100)
        let mp = (5 * dayOfYear + 2) / 153
        let day = dayOfYear - (153 * mp + 2) / 5 + 1
        let month = mp < 10 ? mp + 3 : mp - 9
        return (Int(yearOfEra + era * 400 + (month <= 2 ? 1 : 0)), Int(month), Int(day))
    }

    /// Parses an ISO 8601 instant with or without fractional seconds.
    public static func parse(_ text: String, field: String) throws -> Date {
        if let millis = canonicalMilliseconds(text) { return date(milliseconds: millis) }
        if let date = try? withFraction.parse(text) { return truncatedToMilliseconds(date) }
        if let date = try? withoutFraction.parse(text) { return date }
        throw DomainError.invalidField(field, "'\(text)' is not an ISO 8601 timestamp (e.g. 2026-11-22T10:00:00Z)")
    }

    /// The stored form `YYYY-MM-DDTHH:MM:SS.mmmZ` read with integer arithmetic (every stored
    /// row is read this way); nil for anything else, which Foundation's parser then decides.
    static func canonicalMilliseconds(_ text: String) -> Int64? {
        var text = text
        return text.withUTF8 { canonicalMilliseconds(bytes: $0) }
    }

    /// `canonicalMilliseconds` of the text's UTF-8 bytes (as a database column hands them over).
    static func canonicalMilliseconds(bytes: UnsafeBufferPointer<UInt8>) -> Int64? {
        guard bytes.count == 24, bytes[4] == 0x2D, bytes[7] == 0x2D, bytes[10] == 0x54, bytes[13] == 0x3A, bytes[16] == 0x3A,
              bytes[19] == 0x2E, bytes[23] == 0x5A else { return nil }
        // Each digit is its byte minus "0" (wrapping, so anything below "0" comes out large);
        // one flag records whether every one of them was at most 9.
        var valid = true
        @inline(__always) func digit(_ index: Int) -> Int {
            let value = bytes[index] &- 48
            valid = valid && value <= 9
            return Int(value)
        }
        let year = digit(0) * 1000 + digit(1) * 100 + digit(2) * 10 + digit(3)
        let month = digit(5) * 10 + digit(6), day = digit(8) * 10 + digit(9)
        let hour = digit(11) * 10 + digit(12), minute = digit(14) * 10 + digit(15), second = digit(17) * 10 + digit(18)
        let fraction = digit(20) * 100 + digit(21) * 10 + digit(22)
        guard valid, year >= 1583, (1...12).contains(month), hour < 24, minute < 60, second < 60, day >= 1 else { return nil }
        let leap = year % 4 == 0 && (year % 100 != 0 || year % 400 == 0)
        let monthDays = switch month {
        case 2: leap ? 29 : 28
        case 4, 6, 9, 11: 30
        default: 31
        }
        guard day <= monthDays else { return nil }
        let days = daysFromCivil(year: year, month: month, day: day)
        return days * 86_400_000 + Int64(hour * 3_600_000 + minute * 60_000 + second * 1000 + fraction)
    }

    /// The instant `millis` milliseconds after 1970-01-01T00:00:00Z (as `parse` makes it).
    public static func date(milliseconds millis: Int64) -> Date {
        Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
    }

    /// Days since 1970-01-01 of a proleptic Gregorian date (H. Hinnant's days_from_civil).
    static func daysFromCivil(year: Int, month: Int, day: Int) -> Int64 {
        let y = Int64(month <= 2 ? year - 1 : year)
        let era = (y >= 0 ? y : y - 399) / 400
        let yearOfEra = y - era * 400
        let m = Int64(month)
        let dayOfYear = (153 * (m > 2 ? m - 3 : m + 9) + 2) / 5 + Int64(day) - 1
        let dayOfEra = yearOfEra * 365 + yearOfEra / 4 - yearOfEra / 100 + dayOfYear
        return era * 146_097 + dayOfEra - 719_468
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
