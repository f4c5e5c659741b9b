import Foundation
import SavingsCLI
import SavingsCore
import SavingsRPC
import Synchronization

/// The dashboard's pictures, drawn here as SVG (no script, nothing from elsewhere): this
/// month's plan against what has come in, and each goal's last closed months, saved against
/// planned. Lengths are worked out from the exact amounts (`Decimal`) and rounded to whole
/// units of the drawing; each picture says in its title what it shows, for a screen reader.
enum Pictures {
    /// One closed month of a goal: what was planned and what came in.
    struct Month: Sendable, Equatable {
        var label: String
        var planned: Decimal
        var contributed: Decimal
        /// The amounts as the daemon wrote them (in the goal currency's precision).
        var plannedText: String
        var contributedText: String
        var goalName = ""
        var currency = ""
    }

    /// `part` of `whole` as a length of at most `length` units (0 when `whole` is not positive),
    /// as the report's charts write it (`HTMLReport.scaled`).
    static func length(_ part: Decimal, of whole: Decimal, in length: Int) -> String {
        guard whole > 0, part > 0 else { return "0" }
        return HTMLReport.scaled(min(part, whole) / whole, to: length)
    }

    /// This month: two bars, planned and come in, on one scale (the larger of the two).
    static func month(planned: String, contributed: String, currency: String, label: String) -> String {
        let plannedAmount = (try? Amount.parse(planned)) ?? 0, contributedAmount = (try? Amount.parse(contributed)) ?? 0
        let scale = max(plannedAmount, contributedAmount)
        let width = 220
        let percent = plannedAmount > 0 ? "\(Amount.format(contributedAmount / plannedAmount * 100, scale: 0)) %" : "nothing planned"
        let title = Pages.escape("\(label): \(WebLocale.amount(contributed)) \(currency) of \(WebLocale.amount(planned)) \(currency) planned has come in (\(percent))")
        return """
            <svg class="chart" viewBox="0 0 320 52" role="img" aria-labelledby="month-chart-t"><title id="month-chart-t">\(title)</title>
            <text x="0" y="15" class="label">Planned</text><rect x="96" y="4" width="\(length(plannedAmount, of: scale, in: width))" height="16" class="planned"/>
            <text x="0" y="41" class="label">Came in</text><rect x="96" y="30" width="\(length(contributedAmount, of: scale, in: width))" height="16" class="came-in"/>
            </svg>
            """
    }

    /// A goal's closed months as an image of its own (`image/svg+xml`), oldest first: for each,
    /// what came in filled and the plan over it as an outline, on one scale, in whole units; its
    /// title says the figures. Colours are attributes (the page's style sheet does not reach an
    /// image), chosen to read on a light and a dark page.
    static func goalImage(_ months: [Month]) -> String {
        let scale = months.map { max($0.planned, $0.contributed) }.max() ?? 0
        let height = 24, step = 16, bar = 11
        let first = months.first
        let title = "\(first?.goalName ?? ""), saved per month against the plan (\(first?.currency ?? "")): " + months.map { month in
            "\(HumanTime.month(month.label)) \(WebLocale.amount(month.contributedText)) of \(WebLocale.amount(month.plannedText))"
        }.joined(separator: "; ")
        var came = "", planned = ""
        for (index, month) in months.enumerated() {
            let x = index * step
            let plannedHeight = whole(month.planned, of: scale, in: height), cameHeight = whole(month.contributed, of: scale, in: height)
            if cameHeight > 0 { came += "M\(x) \(height)v-\(cameHeight)h\(bar)v\(cameHeight)z" }
            if plannedHeight > 0 { planned += "M\(x) \(height)v-\(plannedHeight)h\(bar)v\(plannedHeight)z" }
        }
        return "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(months.count * step) \(height)\" width=\"\(months.count * step)\" height=\"\(height)\">"
            + "<title>\(Pages.escape(title))</title><path fill=\"#2b9348\" d=\"\(came)\"/>"
            + "<path fill=\"none\" stroke=\"#7d8799\" stroke-width=\"1\" d=\"\(planned)\"/></svg>"
    }

    /// `part` of `whole` in whole units of `length` (a bar of anything above nothing is at least one).
    static func whole(_ part: Decimal, of whole: Decimal, in length: Int) -> Int {
        guard whole > 0, part > 0 else { return 0 }
        var exact = min(part, whole) / whole * Decimal(length)
        var rounded = Decimal()
        NSDecimalRound(&rounded, &exact, 0, .plain)
        return max(1, NSDecimalNumber(decimal: rounded).intValue)
    }

    /// `month.history`'s answer as each goal's months, oldest first, by goal id.
    static func byGoal(_ history: JSONValue) -> [String: [Month]] {
        var result: [String: [Month]] = [:]
        let label = { (month: JSONValue) -> String in month["month"]?.stringValue ?? "" }
        let months = (history["months"]?.arrayValue ?? []).sorted { label($0) < label($1) }
        for month in months {
            let name = label(month)
            for goal in month["goals"]?.arrayValue ?? [] {
                guard let id = goal["goal_id"]?.stringValue else { continue }
                let plannedText = goal["planned"]?.stringValue ?? "0", contributedText = goal["contributed"]?.stringValue ?? "0"
                result[id, default: []].append(Month(label: name, planned: (try? Amount.parse(plannedText)) ?? 0,
                                                     contributed: (try? Amount.parse(contributedText)) ?? 0,
                                                     plannedText: plannedText, contributedText: contributedText,
                                                     goalName: goal["goal_name"]?.stringValue ?? "", currency: goal["currency"]?.stringValue ?? ""))
            }
        }
        return result
    }
}

/// The closed months the dashboard draws, kept between pages: they change only when a month
/// closes or reopens (the current month's label or status moves), and are asked again after a
/// minute in any case (a restored database keeps both).
final class RecentMonths: Sendable {
    static let shown = 6
    static let kept = Duration.seconds(60)

    struct Kept: Sendable {
        var key: String
        var at: ContinuousClock.Instant
        var byGoal: [String: [Pictures.Month]]
        /// Changes with each new reading (the goal rows written with it are written again).
        var version: Int
        /// The pictures' links' query: the current month they were read for.
        var query: String
    }

    private let kept = Mutex<Kept?>(nil)

    /// The months for the dashboard whose current month is `month` (its label and status).
    func months(current month: JSONValue?, daemon: DaemonLink) async -> Kept? {
        guard let label = month?["month"]?.stringValue, let current = try? MonthLabel(parsing: label) else { return nil }
        let key = label + "|" + (month?["status"]?.stringValue ?? "")
        let now = ContinuousClock.now
        if let known = kept.withLock({ $0 }), known.key == key, now - known.at < Self.kept { return known }
        let from = current.adding(-Self.shown), to = current.adding(-1)
        // No pictures rather than no dashboard: a refusal here leaves them out.
        guard let history = try? await daemon.call("month.history", ["from": .string(from.description), "to": .string(to.description)]) else {
            return nil
        }
        return kept.withLock { kept in
            let query = "month=\(current.description)&status=\(Screens.queryText(month?["status"]?.stringValue ?? ""))"
            let next = Kept(key: key, at: now, byGoal: Pictures.byGoal(history), version: (kept?.version ?? 0) + 1, query: query)
            kept = next
            return next
        }
    }
}
