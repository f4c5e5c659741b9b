import Foundation

/// A calendar date without time or zone (`YYYY-MM-DD`), e.g. a goal's deadline.
public struct CalendarDate: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let year: Int
    public let month: Int
    public let day: Int

    public init(year: Int, month: Int, day: Int) throws {
        guard (1...9999).contains(year), (1...12).contains(month),
              (1...Self.daysIn(month: month, year: year)).contains(day) else {
            throw DomainError.invalidField("date", "\(year)-\(month)-\(day) is not a valid date")
        }
        self.year = year
        self.month = month
        self.day = day
    }

    /// Parses strict `YYYY-MM-DD`.
    public init(parsing text: String, field: String) throws {
        let parts = text.split(separator: "-", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
              parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
              let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else {
            throw DomainError.invalidField(field, "'\(text)' is not a date in the form YYYY-MM-DD")
        }
        do {
            try self.init(year: y, month: m, day: d)
        } catch {
            throw DomainError.invalidField(field, "'\(text)' is not a valid calendar date")
        }
    }

    /// The date `instant` falls on in `timeZone`.
    public init(_ instant: Date, in timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day], from: instant)
        self.year = parts.year ?? 1970
        self.month = parts.month ?? 1
        self.day = parts.day ?? 1
    }

    public var description: String {
        let y = String(year), m = String(month), d = String(day)
        return String(repeating: "0", count: 4 - y.count) + y + "-"
            + (m.count == 1 ? "0" : "") + m + "-" + (d.count == 1 ? "0" : "") + d
    }

    public static func < (a: CalendarDate, b: CalendarDate) -> Bool {
        (a.year, a.month, a.day) < (b.year, b.month, b.day)
    }

    static func daysIn(month: Int, year: Int) -> Int {
        switch month {
        case 2: return (year % 4 == 0 && year % 100 != 0) || year % 400 == 0 ? 29 : 28
        case 4, 6, 9, 11: return 30
        default: return 31
        }
    }
}
