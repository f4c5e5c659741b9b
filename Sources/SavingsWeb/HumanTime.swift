import Foundation
import SavingsCore

/// Times as a person reads them on a page: how long ago within a day ("3 minutes ago"),
/// else the day and time in this machine's zone, the month as a word ("26 Nov 2026, 14:03", or
/// as the browser's locale writes them: "26. Nov. 2026, 14:03");
/// never the wire's `2026-11-26T14:03:00.000Z`.
enum HumanTime {
    static let months = ["Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"]

    /// A month label (`2026-10`) as words ("Oct 2026"); anything else as it is.
    static func month(_ label: String) -> String {
        let parts = label.split(separator: "-")
        guard parts.count == 2, let year = Int(parts[0]), let month = Int(parts[1]), (1...12).contains(month) else { return label }
        return WebLocale.month(year: year, month: month) ?? "\(months[month - 1]) \(year)"
    }

    /// `text` (a timestamp as the daemon writes it) in words, relative to `now`; text that is
    /// no timestamp is shown as it is.
    static func describe(_ text: String, now: Date = Date(), timeZone: TimeZone = .current) -> String {
        guard !text.isEmpty, let date = try? Timestamp.parse(text, field: "at") else { return text }
        let seconds = now.timeIntervalSince(date)
        switch seconds {
        case ..<(-60): break
        case ..<60: return "just now"
        case ..<3_600:
            let minutes = Int(seconds / 60)
            return minutes == 1 ? "a minute ago" : "\(minutes) minutes ago"
        case ..<86_400:
            let hours = Int(seconds / 3_600)
            return hours == 1 ? "an hour ago" : "\(hours) hours ago"
        default: break
        }
        if let local = WebLocale.dateTime(date, timeZone: timeZone) { return local }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%d %@ %d, %02d:%02d", parts.day ?? 1, months[(parts.month ?? 1) - 1], parts.year ?? 1970,
                      parts.hour ?? 0, parts.minute ?? 0)
    }
}
