import Foundation

/// A date format of an import's rules, in the letters of Unicode date patterns (those
/// DateFormatter and Java use): "dd.MM.yyyy", "yyyy-MM-dd HH:mm:ss", "yyyy-MM-dd HH:mm:ss 'UTC'";
/// or "iso8601" (also "YYYY-MM-DD" alone). Parsed by hand: exact, and quick per row.
public struct DatePattern: Sendable, Equatable {
    enum Token: Sendable, Equatable {
        case year(digits: Int)
        case month(digits: Int)
        case day(digits: Int)
        case hour(digits: Int)
        case minute
        case second
        /// A run of S: a fraction of a second of any length.
        case fraction
        case literal(String)
    }

    public let source: String
    let tokens: [Token]?

    public static let iso8601 = DatePattern(source: "iso8601", tokens: nil)

    private init(source: String, tokens: [Token]?) {
        self.source = source
        self.tokens = tokens
    }

    public init(parsing source: String, key: String) throws {
        if source.lowercased() == "iso8601" {
            self = .iso8601
            return
        }
        func fail(_ reason: String) -> DomainError { DomainError.invalidField("rules", "\(key): \"\(source)\" \(reason)") }
        var tokens: [Token] = []
        let chars = Array(source)
        var index = 0
        while index < chars.count {
            let char = chars[index]
            var run = 1
            while index + run < chars.count, chars[index + run] == char { run += 1 }
            switch char {
            case "'":
                guard let close = chars[(index + 1)...].firstIndex(of: "'") else { throw fail("has a ' without its closing '") }
                tokens.append(.literal(close == index + 1 ? "'" : String(chars[(index + 1)..<close])))
                index = close + 1
                continue
            case "y":
                guard run == 4 || run == 2 else { throw fail("needs yyyy or yy for the year") }
                tokens.append(.year(digits: run))
            case "M":
                guard run <= 2 else { throw fail("has \(String(repeating: "M", count: run)): month names are not supported, use MM") }
                tokens.append(.month(digits: run))
            case "d":
                guard run <= 2 else { throw fail("needs dd or d for the day") }
                tokens.append(.day(digits: run))
            case "H":
                guard run <= 2 else { throw fail("needs HH or H for the hour") }
                tokens.append(.hour(digits: run))
            case "m":
                guard run == 2 else { throw fail("needs mm for minutes") }
                tokens.append(.minute)
            case "s":
                guard run == 2 else { throw fail("needs ss for seconds") }
                tokens.append(.second)
            case "S": tokens.append(.fraction)
            case _ where char.isLetter:
                throw fail("uses '\(char)', which savingsd does not read (yyyy yy MM M dd d HH H mm ss S, 'text')")
            default:
                tokens.append(.literal(String(repeating: char, count: run)))
            }
            index += run
        }
        guard tokens.contains(where: { if case .year = $0 { true } else { false } }),
              tokens.contains(where: { if case .month = $0 { true } else { false } }),
              tokens.contains(where: { if case .day = $0 { true } else { false } }) else {
            throw fail("must have a year, a month and a day")
        }
        self.init(source: source, tokens: tokens)
    }

    /// A field read by the pattern: a day of the calendar and a time of that day.
    struct Parts {
        var year = 0, month = 0, day = 0, hour = 0, minute = 0, second = 0, nanosecond = 0

        /// Milliseconds since the day's midnight (in a day without a clock change), the fraction
        /// rounded to the nearest millisecond as `Timestamp` rounds instants.
        var timeOfDay: Int64 {
            Int64(hour) * 3_600_000 + Int64(minute) * 60_000 + Int64(second) * 1000 + Int64((nanosecond + 500_000) / 1_000_000)
        }
    }

    /// The instant a field names, in `calendar`'s zone; nil when the field does not fit.
    public func date(_ field: String, calendar: Calendar) -> Date? {
        guard tokens != nil else {
            if field.utf8.count == 10, let day = try? CalendarDate(parsing: field, field: "date") {
                return calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day))
            }
            return try? Timestamp.parse(field, field: "date")
        }
        return parts(field).flatMap { Self.date($0, calendar: calendar) }
    }

    /// `parts`' instant, worked out by the calendar.
    static func date(_ parts: Parts, calendar: Calendar) -> Date? {
        let components = DateComponents(year: parts.year, month: parts.month, day: parts.day, hour: parts.hour, minute: parts.minute,
                                        second: parts.second, nanosecond: parts.nanosecond)
        // A day the month does not have (31.02.) is refused, not rolled over.
        guard let date = calendar.date(from: components), calendar.component(.day, from: date) == parts.day else { return nil }
        return date
    }

    /// The field's day and time as the pattern reads them (a format of its own only; nil for
    /// iso8601); nil when the field does not fit.
    func parts(_ field: String) -> Parts? {
        guard let tokens else { return nil }
        var bytes = Array(field.utf8)[...]
        var parts = Parts()
        var nanoseconds = 0
        func number(_ digits: Int) -> Int? {
            // "d" and "M" take one or two digits, as many as there are.
            let taken = digits == 1 ? min(2, bytes.prefix(while: { $0 >= 48 && $0 <= 57 }).count) : digits
            guard taken >= 1, bytes.count >= taken else { return nil }
            var value = 0
            for byte in bytes.prefix(taken) {
                guard byte >= 48 && byte <= 57 else { return nil }
                value = value * 10 + Int(byte - 48)
            }
            bytes = bytes.dropFirst(taken)
            return value
        }
        for token in tokens {
            switch token {
            case .year(let digits):
                guard let year = number(digits) else { return nil }
                parts.year = digits == 2 ? 2000 + year : year
            case .month(let digits):
                guard let month = number(digits), (1...12).contains(month) else { return nil }
                parts.month = month
            case .day(let digits):
                guard let day = number(digits), (1...31).contains(day) else { return nil }
                parts.day = day
            case .hour(let digits):
                guard let hour = number(digits), hour < 24 else { return nil }
                parts.hour = hour
            case .minute:
                guard let minute = number(2), minute < 60 else { return nil }
                parts.minute = minute
            case .second:
                guard let second = number(2), second < 61 else { return nil }
                parts.second = second
            case .fraction:
                let digits = bytes.prefix(while: { $0 >= 48 && $0 <= 57 })
                guard !digits.isEmpty else { return nil }
                for (place, byte) in digits.prefix(9).enumerated() {
                    nanoseconds += Int(byte - 48) * [100_000_000, 10_000_000, 1_000_000, 100_000, 10_000, 1_000, 100, 10, 1][place]
                }
                bytes = bytes.dropFirst(digits.count)
            case .literal(let text):
                guard bytes.starts(with: text.utf8) else { return nil }
                bytes = bytes.dropFirst(text.utf8.count)
            }
        }
        guard bytes.isEmpty else { return nil }
        parts.nanosecond = nanoseconds
        return parts
    }
}

/// The dates of an import's rows: read by the file's formats in its zone, to the millisecond,
/// never in the future. Files list many rows a day in order, and a calendar computation per row
/// showed in an import's profile: the last day is remembered.
/// A history changes day every few rows, so a plain `YYYY-MM-DD` day also comes from its
/// month's first midnight when the zone keeps one offset all month (one calendar computation
/// a month instead of one a day).
public struct RowDates: Sendable {
    public let formats: [DatePattern]
    public let now: Date
    private let calendar: Calendar
    private var last: (field: String, date: Date)?
    /// The month last asked for, and its first midnight in milliseconds when every day of it
    /// starts a whole number of days later (nil: the calendar works out each day).
    private var month: (year: Int, month: Int, first: Int64?)?

    public init(formats: [DatePattern], timeZone: TimeZone, now: Date) {
        self.formats = formats
        self.now = now
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        self.calendar = calendar
    }

    /// A field's instant (to the millisecond); nil when no format reads it. A date in the
    /// future is refused with `future`'s message.
    public mutating func date(_ field: String, future: () -> DomainError) throws -> Date? {
        if let last, last.field == field { return last.date }
        let calendar = calendar
        let date: Date
        if formats.first == .iso8601, field.utf8.count == 10, let day = try? CalendarDate(parsing: field, field: "date") {
            guard let midnight = midnight(day) else { return nil }
            date = midnight
        } else {
            var found: Date?
            for format in formats {
                if let parts = format.parts(field) {
                    found = instant(parts)
                } else if format == .iso8601 {
                    found = format.date(field, calendar: calendar)
                }
                if found != nil { break }
            }
            guard let found else { return nil }
            date = found
        }
        guard date.timeIntervalSince(now) <= 60 else { throw future() }
        let instant = Timestamp.truncatedToMilliseconds(date)
        last = (field, instant)
        return instant
    }

    /// The instant of a day and time a format read: from its month's first midnight when the
    /// zone keeps one offset all month (most rows of an exchange's export differ in their time,
    /// and two calendar computations a row showed in an import's profile), else the calendar's.
    mutating func instant(_ parts: DatePattern.Parts) -> Date? {
        guard (1...9999).contains(parts.year), parts.day <= CalendarDate.daysIn(month: parts.month, year: parts.year) else { return nil }
        if month?.year != parts.year || month?.month != parts.month {
            month = (parts.year, parts.month, uniformStart(year: parts.year, month: parts.month))
        }
        guard let first = month?.first else { return DatePattern.date(parts, calendar: calendar) }
        return Timestamp.date(milliseconds: first + Int64(parts.day - 1) * 86_400_000 + parts.timeOfDay)
    }

    /// The first instant of `day` in the zone (what `DatePattern.iso8601` reads it as); nil
    /// where the calendar has none.
    mutating func midnight(_ day: CalendarDate) -> Date? {
        if month?.year != day.year || month?.month != day.month {
            month = (day.year, day.month, uniformStart(year: day.year, month: day.month))
        }
        if let first = month?.first {
            return Date(timeIntervalSince1970: TimeInterval(first + Int64(day.day - 1) * 86_400_000) / 1000)
        }
        return calendar.date(from: DateComponents(year: day.year, month: day.month, day: day.day))
    }

    /// The month's first midnight in milliseconds, when the zone's offset is the same at every
    /// midnight of the month: the next month starts exactly its days later, and no daylight
    /// saving change falls in between.
    private func uniformStart(year: Int, month: Int) -> Int64? {
        let (nextYear, nextMonth) = month == 12 ? (year + 1, 1) : (year, month + 1)
        guard let start = calendar.date(from: DateComponents(year: year, month: month, day: 1)),
              let next = calendar.date(from: DateComponents(year: nextYear, month: nextMonth, day: 1)) else { return nil }
        let first = Timestamp.milliseconds(start)
        guard Timestamp.milliseconds(next) - first == Int64(CalendarDate.daysIn(month: month, year: year)) * 86_400_000 else { return nil }
        if let change = calendar.timeZone.nextDaylightSavingTimeTransition(after: start), change < next { return nil }
        return first
    }
}
