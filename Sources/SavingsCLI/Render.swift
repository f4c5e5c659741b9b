import Foundation
import SavingsCore
import SavingsRPC

/// Small helpers for human output.
public enum Render {
    /// `text` cut to `length` characters, the cut shown by "…" at its end.
    public static func clipped(_ text: String, _ length: Int) -> String { text.count <= length ? text : String(text.prefix(length - 1)) + "…" }

    /// `text` cut to `length` characters in its middle, so that both ends show (ids that differ
    /// at the end, such as a second leg's "-2").
    public static func clippedInside(_ text: String, _ length: Int) -> String {
        guard text.count > length else { return text }
        let tail = (length - 1) / 2
        return String(text.prefix(length - 1 - tail)) + "…" + String(text.suffix(tail))
    }

    /// The text of a field: strings as they are, other values as JSON, absent or null as "-".
    public static func text(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: "-"
        case .string(let s)?: s
        case let other?: JSONSerializer.serialize(other)
        }
    }

    /// An age in seconds as people say it: "just now", "42 s", "3 min", "5 h", "2 d".
    public static func age(_ seconds: JSONValue?) -> String {
        guard case .number(let literal)? = seconds, let value = Int(literal) else { return "-" }
        switch value {
        case ..<5: return "just now"
        case ..<60: return "\(value) s"
        case ..<3600: return "\(value / 60) min"
        case ..<(2 * 86_400): return "\(value / 3600) h"
        default: return "\(value / 86_400) d"
        }
    }

    /// "just now" or "3 min old".
    public static func ageOld(_ seconds: JSONValue?) -> String {
        let text = age(seconds)
        return text == "just now" || text == "-" ? text : text + " old"
    }

    /// An RPC timestamp as a minute in `timeZone`: "2026-11-01 09:00".
    public static func time(_ value: JSONValue?, in timeZone: TimeZone = .current) -> String {
        guard let stamp = value?.stringValue, let date = try? Timestamp.parse(stamp, field: "time") else { return text(value) }
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let parts = calendar.dateComponents([.year, .month, .day, .hour, .minute], from: date)
        return String(format: "%04d-%02d-%02d %02d:%02d", parts.year!, parts.month!, parts.day!, parts.hour!, parts.minute!)
    }

    /// A decimal string as a Decimal (nil when absent or not a number).
    public static func decimal(_ value: JSONValue?) -> Decimal? {
        value?.stringValue.flatMap { try? Amount.parse($0) }
    }

    /// A progress bar for a 0..1 fraction: `[#######-------]  45.0%`; green once complete.
    /// Over-payment shows its real percentage with a full bar.
    public static func bar(_ fraction: Decimal?, width: Int = 20, style: Style = .plain) -> String {
        let fraction = fraction ?? 0
        var cells = fraction * Decimal(width)
        var whole = Decimal()
        NSDecimalRound(&whole, &cells, 0, .down)
        let filled = max(0, min(width, NSDecimalNumber(decimal: whole).intValue))
        let hashes = String(repeating: "#", count: filled)
        return "[" + (fraction >= 1 ? style.green(hashes) : style.cyan(hashes)) + style.dim(String(repeating: "-", count: width - filled)) + "] "
            + Amount.format(fraction * 100, scale: 1).leftPadded(to: 5) + "%"
    }

    /// A bar for a 0..1 decimal string field.
    public static func bar(_ progress: JSONValue?, width: Int = 20, style: Style = .plain) -> String {
        bar(decimal(progress), width: width, style: style)
    }

    /// Key/value lines for one object; `money` keys are shown as amounts in `currency`.
    public static func fields(_ object: JSONValue, _ keys: [String], money: Set<String> = [], currency: JSONValue? = nil,
                              style: Style = .plain) -> String {
        let width = (keys.map(\.count).max() ?? 0) + 2
        return keys.map { key in
            let value = money.contains(key) && object[key]?.stringValue != nil ? Money.format(object[key], currency) : text(object[key])
            return style.dim(key.rightPadded(to: width)) + value
        }.joined(separator: "\n")
    }

    /// A list of names, or "-".
    public static func list(_ value: JSONValue?) -> String {
        let items = value?.arrayValue?.map(text) ?? []
        return items.isEmpty ? "-" : items.joined(separator: ", ")
    }
}
