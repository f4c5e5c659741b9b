import Foundation
import SavingsCore
import SavingsRPC

/// What savingsctl prints for each result. Pure functions of the RPC result (ages come from
/// the daemon), so the same data always prints the same text.
public enum Views {
    /// Goals as a table of bars and amounts.
    public static func goalSummary(_ goals: [JSONValue], style: Style = .plain) -> String {
        guard !goals.isEmpty else { return "no goals" }
        var table = Table(headers: ["NAME", "PROGRESS", "SAVED", "TARGET", "DEADLINE", ""], rightAligned: [2, 3])
        table.rows = goals.map { goal in
            [Render.text(goal["name"]), Render.bar(goal["progress"], style: style), Money.format(goal["current_total"], goal["currency"]),
             Money.format(goal["target_amount"], goal["currency"]), Render.text(goal["deadline"]),
             goal["incomplete"] == true ? style.yellow("incomplete: no rate for \(Render.list(goal["missing_rates"]))") : ""]
        }
        return table.rendered(style: style)
    }

    public static func goalList(_ result: JSONValue, style: Style = .plain) -> String {
        let goals = result["goals"]?.arrayValue ?? []
        guard !goals.isEmpty else {
            return "no goals yet (add one with: savingsctl goal add NAME --target AMOUNT --currency CUR --deadline YYYY-MM-DD, or try: savingsctl demo)"
        }
        return goalSummary(goals, style: style)
    }

    public static func goal(_ goal: JSONValue, style: Style = .plain) -> String {
        var text = Render.fields(goal, ["id", "name", "currency", "target_amount", "current_total", "remaining", "deadline",
                                        "start_date", "archived", "notes"],
                                 money: ["target_amount", "current_total", "remaining"], currency: goal["currency"], style: style)
        text += "\n" + style.dim("progress".rightPadded(to: 15)) + Render.bar(goal["progress"], style: style)
        let funding = goal["funding"]?.arrayValue ?? []
        if !funding.isEmpty {
            var table = Table(headers: ["ASSET", "FUNDED", "RATE", "VALUE"], rightAligned: [1, 2, 3])
            table.rows = funding.map {
                [Render.text($0["asset_name"]), Money.format($0["funded"], $0["asset_currency"]),
                 Money.grouped(Render.text($0["rate"])), Money.format($0["value"], goal["currency"])]
            }
            text += "\n\n" + table.rendered(style: style)
        }
        if goal["incomplete"] == true {
            text += "\n\n" + style.yellow("incomplete: no rate for \(Render.list(goal["missing_rates"]))")
                + " (set one with: savingsctl rates set BASE QUOTE RATE)"
        }
        return text
    }

    public static func dashboard(_ result: JSONValue, style: Style = .plain) -> String {
        let currency = result["currency"]
        var text = goalList(result, style: style)
        if let month = result["month"], month != .null {
            text += "\n\n" + monthLine(month, style: style)
        }
        let totals = result["totals"] ?? .null
        var lines = [("saved toward goals", Money.format(totals["goals_total"], currency)),
                     ("unallocated", Money.format(totals["unallocated_value"], currency)),
                     ("rates", rateFreshness(result, style: style))]
        if let chain = onchainLine(result["onchain"], style: style) { lines.append(("on-chain", chain)) }
        if let linked = linkedLine(result["linked"], style: style) { lines.append(("linked", linked)) }
        if let stale = result["stale_drafts"]?.intValue, stale > 0 {
            lines.append(("stale drafts", style.yellow("\(stale)") + " (review with: savingsctl plan stale)"))
        }
        text += "\n\n" + lines.map { style.dim($0.0.rightPadded(to: 20)) + $0.1 }.joined(separator: "\n")
        if result["incomplete"] == true {
            text += "\n" + style.yellow("incomplete: no rate for \(Render.list(result["missing_rates"]))")
                + " (set one with: savingsctl rates set BASE QUOTE RATE)"
        }
        return text
    }

    /// "this month  [####----]  40.0%  400.00 EUR of 1,000.00 EUR planned, 600.00 EUR to go".
    static func monthLine(_ month: JSONValue, style: Style) -> String {
        let currency = month["currency"]
        let planned = Render.decimal(month["planned"]) ?? 0, contributed = Render.decimal(month["contributed"]) ?? 0
        let fraction: Decimal = planned > 0 ? contributed / planned : (contributed > 0 ? 1 : 0)
        return style.bold("\(Render.text(month["month"])) \(Render.text(month["status"]))") + "  "
            + Render.bar(fraction, width: 30, style: style) + "  \(Money.format(month["contributed"], currency)) of "
            + "\(Money.format(month["planned"], currency)) planned, \(Money.format(month["remaining"], currency)) to go"
    }

    /// "3, oldest 5 min old" with the stale pairs called out, from a dashboard.
    static func rateFreshness(_ dashboard: JSONValue, style: Style) -> String {
        guard let rates = dashboard["rates"], let count = rates["count"]?.intValue, count > 0 else { return "none yet" }
        var text = "\(count), oldest \(Render.ageOld(rates["oldest_age_seconds"]))"
        let stale = dashboard["stale_rates"]?.arrayValue ?? []
        if !stale.isEmpty {
            text += ", " + style.yellow("stale: \(Render.list(.array(stale)))") + " (savingsctl rates list)"
        }
        return text
    }

    /// Each goal as a bar of contributed / planned, the month's total bar, then the events.
    public static func monthProgress(_ progress: JSONValue, style: Style = .plain, timeZone: TimeZone = .current) -> String {
        var text = style.bold("\(Render.text(progress["month"])) \(Render.text(progress["status"]))")
            + " since \(Render.time(progress["started_at"], in: timeZone))"
            + (progress["completed_at"].map { $0 == .null ? "" : ", closed \(Render.time($0, in: timeZone))" } ?? "")
        var table = Table(headers: ["GOAL", "PROGRESS", "CONTRIBUTED", "PLANNED", ""], rightAligned: [2, 3])
        table.rows = (progress["goals"]?.arrayValue ?? []).map { goal in
            let fraction = Render.decimal(goal["percent"]).map { $0 / 100 }
            return [Render.text(goal["goal_name"]), Render.bar(fraction ?? 1, style: style),
                    Money.format(goal["contributed"], goal["currency"]), Money.format(goal["planned"], goal["currency"]),
                    goal["fulfilled"] == true ? style.green("fulfilled") : ""]
        }
        text += "\n\n" + table.rendered(style: style)
        if let totals = progress["totals"], totals != .null {
            let planned = Render.decimal(totals["planned"]) ?? 0, contributed = Render.decimal(totals["contributed"]) ?? 0
            text += "\n\n" + style.bold("month".rightPadded(to: 8)) + Render.bar(planned > 0 ? contributed / planned : 1, width: 30, style: style)
                + "  \(Money.format(totals["contributed"], totals["currency"])) of \(Money.format(totals["planned"], totals["currency"]))"
        }
        let events = progress["events"]?.arrayValue ?? []
        if !events.isEmpty {
            var list = Table(headers: ["AT", "KIND", "GOAL", "AMOUNT"], rightAligned: [3])
            let names = Dictionary((progress["goals"]?.arrayValue ?? []).compactMap { goal in
                goal["goal_id"]?.stringValue.map { ($0, goal) }
            }, uniquingKeysWith: { a, _ in a })
            list.rows = events.sorted { Render.text($0["at"]) < Render.text($1["at"]) }.map { event in
                let goal = event["goal_id"]?.stringValue.flatMap { names[$0] }
                return [Render.time(event["at"], in: timeZone), Render.text(event["kind"]), goal.map { Render.text($0["goal_name"]) } ?? Render.text(event["goal_id"]),
                        Money.format(event["goal_amount"], goal?["currency"])]
            }
            text += "\n\n" + list.rendered(style: style)
        }
        if progress["status"] == "executing" {
            text += "\n\n" + style.dim("close it with: savingsctl month complete")
        }
        return text
    }

    public static func monthHistory(_ result: JSONValue, style: Style = .plain) -> String {
        let months = result["months"]?.arrayValue ?? []
        guard !months.isEmpty else { return "no closed months yet (a month closes with: savingsctl month complete)" }
        var table = Table(headers: ["MONTH", "CONTRIBUTED", "PLANNED", "FULFILMENT"], rightAligned: [1, 2])
        table.rows = months.map { month in
            let currency = month["totals"]?["currency"]
            let percent = Render.decimal(month["fulfilment_percent"])
            return [Render.text(month["month"]), Money.format(month["totals"]?["contributed"], currency),
                    Money.format(month["totals"]?["planned"], currency),
                    percent.map { Render.bar($0 / 100, width: 10, style: style) } ?? "-"]
        }
        return table.rendered(style: style)
    }

    public static func assetList(_ result: JSONValue, style: Style = .plain) -> String {
        let assets = result["assets"]?.arrayValue ?? []
        guard !assets.isEmpty else { return "no assets yet (add one with: savingsctl asset add NAME --currency BTC --kind crypto)" }
        var table = Table(headers: ["NAME", "KIND", "BALANCE", "ALLOCATED", "UNALLOCATED", "VALUE"], rightAligned: [2, 3, 4, 5])
        table.rows = assets.map { asset in
            [Render.text(asset["name"]), Render.text(asset["kind"]) + (asset["watch"]?["chain"]?.stringValue.map { " · " + $0 } ?? "")
                + (asset["link"]?["service"]?.stringValue.map { " · " + serviceTitle(.string($0)) } ?? ""),
             Money.format(asset["balance"], asset["currency"]),
             Money.format(asset["allocated"], asset["currency"]), Money.format(asset["unallocated"], asset["currency"]),
             asset["value"] == .null ? style.yellow("no rate") : Money.format(asset["value"], asset["value_currency"])]
        }
        return table.rendered(style: style)
    }

    public static func asset(_ asset: JSONValue, style: Style = .plain) -> String {
        var text = Render.fields(asset, ["id", "name", "currency", "kind", "address", "balance", "allocated", "unallocated"],
                                 money: ["balance", "allocated", "unallocated"], currency: asset["currency"], style: style)
        text += "\n" + style.dim("value".rightPadded(to: 13)) + Money.format(asset["value"], asset["value_currency"])
        text += "\n" + style.dim("notes".rightPadded(to: 13)) + Render.text(asset["notes"])
        if let watch = watch(asset, style: style) { text += "\n" + watch }
        if let link = link(asset, style: style) { text += "\n" + link }
        let lines = asset["allocations"]?.arrayValue ?? []
        if !lines.isEmpty {
            var table = Table(headers: ["GOAL", "RESERVED", "FUNDED"], rightAligned: [1, 2])
            table.rows = lines.map {
                [Render.text($0["goal_name"]), Money.format($0["amount"], asset["currency"]), Money.format($0["funded"], asset["currency"])]
            }
            text += "\n\n" + table.rendered(style: style)
        }
        if asset["over_allocated"] == true {
            text += "\n\n" + style.yellow("warning: allocations exceed the balance; goals are funded proportionally")
                + " (lower one with: savingsctl alloc set ASSET GOAL AMOUNT)"
        }
        return text
    }

    public static func rates(_ result: JSONValue, style: Style = .plain, timeZone: TimeZone = .current) -> String {
        let rates = result["rates"]?.arrayValue ?? []
        guard !rates.isEmpty else { return "no rates (set one with: savingsctl rates set BTC EUR 50000)" }
        var table = Table(headers: ["PAIR", "RATE", "AS OF", "AGE", "PROVIDER", ""], rightAligned: [1, 3])
        table.rows = rates.map {
            ["\(Render.text($0["base"]))/\(Render.text($0["quote"]))", Money.grouped(Render.text($0["rate"])), Render.time($0["as_of"], in: timeZone),
             Render.age($0["age_seconds"]), Render.text($0["provider"]), $0["stale"] == true ? style.yellow("STALE") : ""]
        }
        return table.rendered(style: style)
    }

    public static func plans(_ plans: [JSONValue], style: Style = .plain) -> String {
        guard !plans.isEmpty else { return "no plans" }
        var table = Table(headers: ["GOAL", "MONTH", "REQUIRED", "PLANNED", "STATUS", "FLEX", "STATE"], rightAligned: [2, 3])
        table.rows = plans.map {
            [Render.text($0["goal_name"]), Render.text($0["month"]), Money.format($0["required_monthly"], $0["currency"]),
             Money.format($0["planned_amount"], $0["currency"]), Render.text($0["status"]), Render.text($0["flex_state"]),
             Render.text($0["state"])]
        }
        return table.rendered(style: style)
    }
}
