import Foundation
import Synchronization
import SavingsRPC

/// The dashboard's goal list. The daemon is asked for the few goal fields the page shows
/// (`goal_fields`); its answer is read member by member, and the goals are read and written
/// as HTML again only when their text differs from the last answer's: the daemon's figures did
/// not move, the rows are the same. Everything else in the answer is read each time.
final class DashboardRows: Sendable {
    /// The goal fields the dashboard shows.
    static let fields: JSONValue = ["id", "name", "progress", "current_total", "target_amount", "remaining", "currency", "deadline"]

    /// Goal rows as HTML, and how many.
    struct Written: Sendable {
        var html: String
        var count: Int
    }

    private let last = Mutex<(goals: [UInt8], locale: String?, written: Written)?>(nil)

    /// The answer's result split in one reading: its members other than the goals, read, and
    /// the goals' text, unread (nil when the answer is not a dashboard's: its goals are then in
    /// `rest`, and an error says itself).
    static func split(_ answer: DaemonLink.Answer) throws(DaemonLink.Failure) -> (rest: JSONValue, goals: ArraySlice<UInt8>?) {
        guard answer.range(of: "error") == nil, let result = answer.range(of: "result"),
              let members = JSONParser.members(of: answer.bytes, in: result),
              let goals = members.first(where: { $0.key == "goals" })?.value else {
            return (try DaemonLink.result(of: answer, method: "dashboard.get"), nil)
        }
        var rest: [String: JSONValue] = [:]
        do {
            for member in members where member.key != "goals" {
                rest[member.key] = try JSONParser.parse(answer.bytes, in: member.value)
            }
        } catch {
            throw .unreachable("an answer to dashboard.get that is not JSON: \(error)")
        }
        return (.object(rest), answer.bytes[goals])
    }

    /// The goal rows of a split answer: written again only when the goals' text or the locale
    /// moved.
    func rows(_ goals: ArraySlice<UInt8>?, rest: JSONValue) throws(DaemonLink.Failure) -> Written {
        guard let goals else { return Self.write(rest["goals"]?.arrayValue ?? []) }
        let locale = WebLocale.current?.identifier
        if let known = last.withLock({ $0 }), known.locale == locale, Self.same(known.goals, goals) { return known.written }
        let written: Written
        do {
            written = Self.write(try JSONParser.parse(Array(goals)).arrayValue ?? [])
        } catch {
            throw .unreachable("an answer to dashboard.get that is not JSON: \(error)")
        }
        last.withLock { $0 = (Array(goals), locale, written) }
        return written
    }

    static func same(_ known: [UInt8], _ text: ArraySlice<UInt8>) -> Bool {
        guard known.count == text.count else { return false }
        guard !known.isEmpty else { return true }
        return known.withUnsafeBytes { known in text.withUnsafeBytes { memcmp(known.baseAddress!, $0.baseAddress!, known.count) == 0 } }
    }

    /// The rows, written here, not by the template: a thousand through Mustache's dynamic
    /// lookups took about 30 ms (the benchmark's database), written directly well under one.
    /// Every text goes through `Pages.escape`, as `{{name}}` would.
    static func write(_ goals: [JSONValue]) -> Written {
        var rows = ""
        rows.reserveCapacity(goals.count * 400)
        for goal in goals {
            let text = { (key: String) in Pages.escape(goal[key]?.stringValue ?? "") }
            let money = { (key: String) in Pages.escape(Pages.money(goal[key])) }
            let percent = Pages.percent(goal["progress"])
            let name = text("name"), currency = text("currency"), deadline = text("deadline")
            rows += "<li class=\"goal\"><h3><a href=\"/goals/\(text("id"))\">\(name)</a></h3>\n<p><progress max=\"100\" value=\"\(percent)\" aria-label=\"\(name): \(percent)%\">"
                + "\(percent)%</progress> \(percent)%</p>\n<p>\(money("current_total")) of \(money("target_amount")) \(currency) · "
                + "\(money("remaining")) to go\(deadline.isEmpty ? "" : " · by \(deadline)")</p>"
            rows += "</li>\n"
        }
        return Written(html: rows, count: goals.count)
    }
}
