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

    private let last = Mutex<(goals: [UInt8], months: Int, locale: String?, written: Written)?>(nil)

    /// One member of the answer's result (the current month, to know which months to draw).
    static func member(_ key: String, of answer: DaemonLink.Answer) -> JSONValue? {
        guard answer.range(of: "error") == nil, let result = answer.range(of: "result"),
              let members = JSONParser.members(of: answer.bytes, in: result),
              let member = members.first(where: { $0.key == key })?.value else { return nil }
        return try? JSONParser.parse(answer.bytes, in: member)
    }

    /// The answer's result without its goals, and the goal rows, each with its closed months
    /// drawn (`months`).
    func read(_ answer: DaemonLink.Answer, months: RecentMonths.Kept? = nil) throws(DaemonLink.Failure) -> (result: JSONValue, rows: Written) {
        guard answer.range(of: "error") == nil, let result = answer.range(of: "result"),
              let members = JSONParser.members(of: answer.bytes, in: result),
              let goals = members.first(where: { $0.key == "goals" })?.value else {
            // Not the shape of a dashboard: read whole (an error says itself).
            let whole = try DaemonLink.result(of: answer, method: "dashboard.get")
            return (whole, Self.write(whole["goals"]?.arrayValue ?? [], months: months?.byGoal ?? [:]))
        }
        var rest: [String: JSONValue] = [:]
        do {
            for member in members where member.key != "goals" {
                rest[member.key] = try JSONParser.parse(answer.bytes, in: member.value)
            }
            return (.object(rest), try rows(answer.bytes[goals], months: months))
        } catch {
            throw .unreachable("an answer to dashboard.get that is not JSON: \(error)")
        }
    }

    private func rows(_ text: ArraySlice<UInt8>, months: RecentMonths.Kept?) throws(JSONParser.Failure) -> Written {
        let version = months?.version ?? 0, locale = WebLocale.current?.identifier
        if let known = last.withLock({ $0 }), known.months == version, known.locale == locale, Self.same(known.goals, text) { return known.written }
        let written = Self.write(try JSONParser.parse(Array(text)).arrayValue ?? [], months: months?.byGoal ?? [:])
        last.withLock { $0 = (Array(text), version, locale, written) }
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
    static func write(_ goals: [JSONValue], months: [String: [Pictures.Month]] = [:]) -> Written {
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
            if let history = months[goal["id"]?.stringValue ?? ""], !history.isEmpty {
                rows += "\n<p class=\"history\">" + Pictures.goal(history, currency: goal["currency"]?.stringValue ?? "",
                                                                name: goal["name"]?.stringValue ?? "", id: text("id"))
                    + " <small>saved per month, against the plan</small></p>"
            }
            rows += "</li>\n"
        }
        return Written(html: rows, count: goals.count)
    }
}
