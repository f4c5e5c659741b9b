import Foundation
import SavingsCore
import SavingsRPC

extension Views {
    /// `savingsctl` with no arguments: this month's plan and progress, the goals, and what to
    /// do next. `month` is `month.progress` of an executing or closed month; `plans` is
    /// `plan.list` of a month not started yet.
    public static func overview(dashboard: JSONValue, month: JSONValue?, plans: JSONValue?, style: Style = .plain) -> String {
        let goals = dashboard["goals"]?.arrayValue ?? []
        guard !goals.isEmpty else {
            return "no goals yet. Add one with:\n  savingsctl goal add NAME --target AMOUNT --currency CUR --deadline YYYY-MM-DD\n"
                + "or explore an example in an empty database with:\n  savingsctl demo"
        }
        var lines: [String] = []
        var next: String?
        if let month, let totals = month["totals"] {
            let planned = Render.decimal(totals["planned"]) ?? 0, contributed = Render.decimal(totals["contributed"]) ?? 0
            lines.append(style.bold("\(Render.text(month["month"])) \(Render.text(month["status"]))") + "  "
                         + Render.bar(planned > 0 ? contributed / planned : 1, width: 30, style: style) + "  "
                         + "\(Money.format(totals["contributed"], totals["currency"])) of \(Money.format(totals["planned"], totals["currency"])) planned")
            var table = Table(headers: ["GOAL", "THIS MONTH", "CONTRIBUTED", "PLANNED", ""], rightAligned: [2, 3])
            table.rows = (month["goals"]?.arrayValue ?? []).map { goal in
                [Render.text(goal["goal_name"]), Render.bar(Render.decimal(goal["percent"]).map { $0 / 100 } ?? 1, width: 10, style: style),
                 Money.format(goal["contributed"], goal["currency"]), Money.format(goal["planned"], goal["currency"]),
                 goal["fulfilled"] == true ? style.green("done") : ""]
            }
            lines.append(table.rendered(style: style))
            if month["status"] == "executing" {
                let open = (month["goals"]?.arrayValue ?? []).filter { $0["fulfilled"] != true }.count
                next = open == 0 ? "every plan is fulfilled: savingsctl month complete"
                    : "record savings with: savingsctl contribute GOAL AMOUNT (\(open) to go)"
            }
        } else if let plans {
            let count = plans["plans"]?.arrayValue?.count ?? 0
            lines.append(style.bold("\(Render.text(plans["month"])) draft") + "  "
                         + "\(Money.format(plans["totals"]?["planned"], plans["totals"]?["currency"])) planned for \(count) goal\(count == 1 ? "" : "s")")
            next = "review with: savingsctl plan list, then start the month with: savingsctl month start"
        }
        lines.append(goalSummary(goals, style: style))
        let currency = dashboard["currency"]
        lines.append(style.dim("saved".rightPadded(to: 12)) + Money.format(dashboard["totals"]?["goals_total"], currency)
                     + style.dim("   unallocated ") + Money.format(dashboard["totals"]?["unallocated_value"], currency)
                     + style.dim("   rates ") + rateFreshness(dashboard, style: style))
        if let stale = dashboard["stale_drafts"]?.intValue ?? plans?["stale_count"]?.intValue, stale > 0 {
            lines.append(style.yellow("\(stale) stale drafts from past months") + ": savingsctl plan stale")
        }
        if let next { lines.append(style.dim("next: ") + next) }
        return lines.joined(separator: "\n\n")
    }
}
