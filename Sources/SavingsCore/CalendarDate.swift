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
        // Read straight off the bytes (every stored goal's dates are parsed on each reload).
        var fields = (0, 0, 0)
        var valid = text.utf8.count == 10
        if valid {
            for (index, byte) in text.utf8.enumerated() {
                if index == 4 || index == 7 {
                    valid = valid && byte == UInt8(ascii: "-")
                    continue
                }
                guard byte >= 48 && byte <= 57 else {
                    valid = false
                    break
                }
                let digit = Int(byte - 48)
                switch index {
                case 0..<4: fields.0 = fields.0 * 10 + digit
                case 5..<7: fields.1 = fields.1 * 10 + digit
                default: fields.2 = fields.2 * 10 + digit
                }
            }
        }
        guard valid else {
            throw DomainError.invalidField(field, "'\(text)' is not a date in the form YYYY-MM-DD")
        }
        let (y, m, d) = fields
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
