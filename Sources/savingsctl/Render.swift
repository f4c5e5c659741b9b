import Foundation
import SavingsCore
import SavingsRPC

/// Small helpers for human output.
enum Render {
    /// The text of a field: strings as they are, other values as JSON, absent or null as "-".
    static func text(_ value: JSONValue?) -> String {
        switch value {
        case nil, .null?: "-"
        case .string(let s)?: s
        case let other?: JSONSerializer.serialize(other)
        }
    }

    /// An age in seconds as people say it: "just now", "42 s", "3 min", "5 h", "2 d".
    static func age(_ seconds: JSONValue?) -> String {
        guard case .number(let literal)? = seconds, let value = Int(literal) else { return "-" }
        switch value {
        case ..<5: return "just now"
        case ..<60: return "\(value) s"
        case ..<3600: return "\(value / 60) min"
        case ..<(2 * 86_400): return "\(value / 3600) h"
        default: return "\(value / 86_400) d"
        }
    }

    /// A progress bar for a 0..1 decimal string: `[#######-------]  45.0%`.
    static func bar(_ progress: JSONValue?, width: Int = 20) -> String {
        let fraction = progress?.stringValue.flatMap { try? Amount.parse($0) } ?? 0
        var cells = fraction * Decimal(width)
        var whole = Decimal()
        NSDecimalRound(&whole, &cells, 0, .down)
        let filled = max(0, min(width, NSDecimalNumber(decimal: whole).intValue))
        return "[" + String(repeating: "#", count: filled) + String(repeating: "-", count: width - filled) + "] "
            + Amount.format(fraction * 100, scale: 1).leftPadded(to: 5) + "%"
    }

    /// Key/value lines for one object.
    static func fields(_ object: JSONValue, _ keys: [String]) -> String {
        let width = (keys.map(\.count).max() ?? 0) + 2
        return keys.map { $0.padding(toLength: width, withPad: " ", startingAt: 0) + text(object[$0]) }.joined(separator: "\n")
    }

    static func goalSummary(_ goals: [JSONValue]) -> String {
        guard !goals.isEmpty else { return "no goals" }
        var table = Table(headers: ["NAME", "PROGRESS", "SAVED", "TARGET", "CUR", "DEADLINE", ""])
        for goal in goals {
            table.rows.append([
                text(goal["name"]), bar(goal["progress"]), text(goal["current_total"]), text(goal["target_amount"]),
                text(goal["currency"]), text(goal["deadline"]),
                goal["incomplete"] == true ? "incomplete: missing \(goal["missing_rates"]?.arrayValue?.map(text).joined(separator: ", ") ?? "")" : "",
            ])
        }
        return table.rendered
    }
}

extension String {
    func leftPadded(to width: Int) -> String { String(repeating: " ", count: max(0, width - count)) + self }
}
