import Foundation

/// A calendar month, `YYYY-MM`, computed in the daemon's configured time zone.
public struct MonthLabel: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int

    public init(year: Int, month: Int) {
        self.year = year
        self.month = month
    }

    public init(_ instant: Date, in timeZone: TimeZone) {
        let date = CalendarDate(instant, in: timeZone)
        self.init(year: date.year, month: date.month)
    }

    public init(parsing text: String, field: String = "month") throws {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 2, parts[0].count == 4, parts[1].count == 2,
              let year = Int(parts[0]), let month = Int(parts[1]), (1...9999).contains(year), (1...12).contains(month) else {
            throw DomainError.invalidField(field, "'\(text)' is not a month in the form YYYY-MM")
        }
        self.init(year: year, month: month)
    }

    /// Months since year 0, so that differences count calendar months.
    public var index: Int { year * 12 + (month - 1) }

    /// The month `months` away (negative for earlier ones).
    public func adding(_ months: Int) -> MonthLabel {
        let target = index + months
        return MonthLabel(year: target / 12, month: target % 12 + 1)
    }

    public var description: String {
        let y = String(year), m = String(month)
        return String(repeating: "0", count: max(0, 4 - y.count)) + y + "-" + (m.count == 1 ? "0" : "") + m
    }

    public static func < (a: MonthLabel, b: MonthLabel) -> Bool { a.index < b.index }
}
