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
    }

    /// A goal's closed months, oldest first.
    struct GoalMonths: Sendable, Equatable {
        var id: String
        var name: String
        var currency: String
        var months: [Month]
    }

    /// The most goals one picture draws (a row each); the rest are counted below it.
    static let maxRows = 100

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

    /// The goals' last closed months as one image (`image/svg+xml`): a row a goal (its name,
    /// then a bar a month: what came in filled, the plan over it as an outline, on the goal's own
    /// scale), the months named on top; each row's title says its figures. At most `maxRows`
    /// rows. Colours and fonts are attributes (the page's style sheet does not reach an image),
    /// chosen to read on a light and a dark page.
    static func closedMonths(_ kept: RecentMonths.Kept) -> String {
        let labels = kept.labels
        let rowHeight = 28, barHeight = 20, nameWidth = 190, step = 68, bar = 40, top = 22
        let shown = kept.goals.prefix(maxRows)
        let more = kept.goals.count - shown.count
        let width = nameWidth + max(labels.count, 1) * step
        let height = top + max(shown.count, 1) * rowHeight + (more > 0 ? rowHeight : 0)
        var svg = "<svg xmlns=\"http://www.w3.org/2000/svg\" viewBox=\"0 0 \(width) \(height)\" width=\"\(width)\" height=\"\(height)\" "
            + "font-family=\"sans-serif\" font-size=\"13\" fill=\"#7d8799\">"
            + "<title>Each goal's last closed months: what came in against what was planned</title>"
        if shown.isEmpty {
            svg += "<text x=\"0\" y=\"14\">No month has closed yet.</text>"
        }
        for (index, label) in labels.enumerated() {
            svg += "<text x=\"\(nameWidth + index * step + bar / 2)\" y=\"14\" text-anchor=\"middle\">\(Pages.escape(HumanTime.month(label)))</text>"
        }
        for (row, goal) in shown.enumerated() {
            let y = top + row * rowHeight, base = top + row * rowHeight + barHeight + 2
            let scale = goal.months.map { max($0.planned, $0.contributed) }.max() ?? 0
            let figures = goal.months.map { month in
                "\(HumanTime.month(month.label)) \(WebLocale.amount(month.contributedText)) of \(WebLocale.amount(month.plannedText))"
            }.joined(separator: "; ")
            var came = "", planned = ""
            for month in goal.months {
                guard let column = labels.firstIndex(of: month.label) else { continue }
                let x = nameWidth + column * step
                let plannedHeight = whole(month.planned, of: scale, in: barHeight), cameHeight = whole(month.contributed, of: scale, in: barHeight)
                if cameHeight > 0 { came += "M\(x) \(base)v-\(cameHeight)h\(bar)v\(cameHeight)z" }
                if plannedHeight > 0 { planned += "M\(x) \(base)v-\(plannedHeight)h\(bar)v\(plannedHeight)z" }
            }
            svg += "<g><title>\(Pages.escape("\(goal.name), saved per month against the plan (\(goal.currency)): \(figures)"))</title>"
                + "<text x=\"0\" y=\"\(y + 17)\" fill=\"#4a5568\">\(Pages.escape(String(goal.name.prefix(26))))</text>"
                + "<path fill=\"#2b9348\" d=\"\(came)\"/><path fill=\"none\" stroke=\"#7d8799\" d=\"\(planned)\"/></g>"
        }
        if more > 0 {
            svg += "<text x=\"0\" y=\"\(top + shown.count * rowHeight + 17)\">and \(more) more goals: each goal's page has its months</text>"
        }
        return svg + "</svg>"
    }

    /// `part` of `whole` in whole units of `length` (a bar of anything above nothing is at least one).
    static func whole(_ part: Decimal, of whole: Decimal, in length: Int) -> Int {
        guard whole > 0, part > 0 else { return 0 }
        var exact = min(part, whole) / whole * Decimal(length)
        var rounded = Decimal()
        NSDecimalRound(&rounded, &exact, 0, .plain)
        return max(1, NSDecimalNumber(decimal: rounded).intValue)
    }

    /// `month.history`'s answer as each goal's months, oldest first, goals in the newest
    /// month's order (then the others as they first appear).
    static func goals(_ history: JSONValue) -> [GoalMonths] {
        let label = { (month: JSONValue) -> String in month["month"]?.stringValue ?? "" }
        let months = (history["months"]?.arrayValue ?? []).sorted { label($0) < label($1) }
        var order: [String] = []
        var found: [String: GoalMonths] = [:]
        for month in months.reversed() {
            for goal in month["goals"]?.arrayValue ?? [] {
                guard let id = goal["goal_id"]?.stringValue, found[id] == nil else { continue }
                order.append(id)
                found[id] = GoalMonths(id: id, name: goal["goal_name"]?.stringValue ?? "", currency: goal["currency"]?.stringValue ?? "", months: [])
            }
        }
        for month in months {
            let name = label(month)
            for goal in month["goals"]?.arrayValue ?? [] {
                guard let id = goal["goal_id"]?.stringValue else { continue }
                let plannedText = goal["planned"]?.stringValue ?? "0", contributedText = goal["contributed"]?.stringValue ?? "0"
                found[id]?.months.append(Month(label: name, planned: (try? Amount.parse(plannedText)) ?? 0,
                                               contributed: (try? Amount.parse(contributedText)) ?? 0,
                                               plannedText: plannedText, contributedText: contributedText))
            }
        }
        return order.compactMap { found[$0] }
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
        var goals: [Pictures.GoalMonths]
        /// The months read, oldest first.
        var labels: [String]
    }

    private let kept = Mutex<Kept?>(nil)

    /// The key of a current month (its label and status), nil without one.
    private static func key(_ month: JSONValue?) -> (key: String, label: MonthLabel)? {
        guard let text = month?["month"]?.stringValue, let label = try? MonthLabel(parsing: text) else { return nil }
        let status = month?["status"]?.stringValue ?? ""
        guard status.count <= 16, status.allSatisfy({ $0.isASCII && $0.isLetter }) else { return nil }
        return (text + "." + status, label)
    }

    /// The picture's link query for the dashboard whose current month is `month`.
    static func query(current month: JSONValue?) -> String? {
        guard let (_, label) = key(month) else { return nil }
        return "month=\(label.description)&status=\(month?["status"]?.stringValue ?? "")"
    }

    /// The reading kept for `month`, if there is one still fresh (nothing is asked).
    func known(current month: JSONValue?) -> Kept? {
        guard let (key, _) = Self.key(month), let known = kept.withLock({ $0 }), known.key == key,
              ContinuousClock.now - known.at < Self.kept else { return nil }
        return known
    }

    /// The months for the dashboard whose current month is `month` (its label and status).
    func months(current month: JSONValue?, daemon: DaemonLink) async -> Kept? {
        guard let (key, current) = Self.key(month) else { return nil }
        if let known = known(current: month) { return known }
        let from = current.adding(-Self.shown), to = current.adding(-1)
        // No picture rather than no page: a refusal here leaves it out.
        guard let history = try? await daemon.call("month.history", ["from": .string(from.description), "to": .string(to.description)]) else {
            return nil
        }
        let labels = (history["months"]?.arrayValue ?? []).compactMap { $0["month"]?.stringValue }.sorted()
        let next = Kept(key: key, at: .now, goals: Pictures.goals(history), labels: labels)
        kept.withLock { $0 = next }
        return next
    }
}
