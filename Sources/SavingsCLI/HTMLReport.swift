import Foundation
import SavingsCore
import SavingsRPC

/// `savingsctl report --html`: one self-contained page (inline SVG and CSS, no scripts, no
/// network; a Content-Security-Policy says so to the browser) with each goal's progress, the
/// last twelve months planned against contributed, how each asset is reserved for goals, and
/// how fresh the rates are. A pure function of the RPC results it is given.
public struct HTMLReport {
    /// The RPC results the page is drawn from.
    public struct Input {
        public var dashboard: JSONValue
        /// `month.history` of the closed months.
        public var history: JSONValue
        /// `month.progress` of the current month when it is executing.
        public var current: JSONValue?
        /// `plan.list` of the current month.
        public var plans: JSONValue
        public var assets: JSONValue
        public var allocations: JSONValue
        public var rates: JSONValue
        /// When the page was made, shown in its header.
        public var generatedAt: String
        /// The zone times are shown in.
        public var timeZone: TimeZone

        public init(dashboard: JSONValue, history: JSONValue, current: JSONValue?, plans: JSONValue, assets: JSONValue,
                    allocations: JSONValue, rates: JSONValue, generatedAt: String, timeZone: TimeZone = .current) {
            self.dashboard = dashboard; self.history = history; self.current = current; self.plans = plans
            self.assets = assets; self.allocations = allocations; self.rates = rates; self.generatedAt = generatedAt
            self.timeZone = timeZone
        }
    }

    static let palette = ["#2f7ed8", "#e4572e", "#17a398", "#f3a712", "#8e44ad", "#6b8f23", "#d6336c", "#3d5a80", "#a05a2c", "#0b7285"]
    static let width = 880

    let input: Input
    /// Each goal's colour, the same in every chart.
    let colours: [String: String]

    public init(_ input: Input) {
        self.input = input
        let names = (input.dashboard["goals"]?.arrayValue ?? []).map { Render.text($0["name"]) }
        colours = Dictionary(names.enumerated().map { ($1, Self.palette[$0 % Self.palette.count]) }, uniquingKeysWith: { a, _ in a })
    }

    public static func render(_ input: Input) -> String { HTMLReport(input).page }

    var page: String {
        let currency = input.dashboard["currency"]
        return """
        <!DOCTYPE html>
        <html lang="en">
        <head>
        <meta charset="utf-8">
        <meta http-equiv="Content-Security-Policy" content="default-src 'none'; style-src 'unsafe-inline'; img-src data:">
        <meta name="viewport" content="width=device-width, initial-scale=1">
        <title>Savings report \(escape(input.generatedAt))</title>
        <style>
        body { font-family: "DejaVu Sans", Helvetica, Arial, sans-serif; color: #1d2433; margin: 24px auto; max-width: \(Self.width + 40)px; }
        h1 { font-size: 22px; margin: 0 0 4px; } h2 { font-size: 16px; margin: 28px 0 8px; border-bottom: 1px solid #d8dde6; padding-bottom: 4px; }
        .meta { color: #5b6475; font-size: 13px; } .totals span { margin-right: 24px; }
        svg text { font-family: inherit; font-size: 12px; fill: #1d2433; } svg .muted { fill: #5b6475; }
        table { border-collapse: collapse; font-size: 13px; width: 100%; } th, td { text-align: left; padding: 4px 8px; border-bottom: 1px solid #eef0f4; }
        td.num, th.num { text-align: right; font-variant-numeric: tabular-nums; }
        .stale { color: #b54708; font-weight: bold; } .fresh { color: #17a34a; }
        .legend span { display: inline-block; margin-right: 16px; font-size: 12px; } .legend i { display: inline-block; width: 10px; height: 10px; margin-right: 4px; }
        </style>
        </head>
        <body>
        <h1>Savings report</h1>
        <p class="meta">made \(escape(input.generatedAt)) by savingsctl · figures in \(escape(Render.text(currency)))</p>
        <p class="totals"><span>saved toward goals <b>\(escape(Money.format(input.dashboard["totals"]?["goals_total"], currency)))</b></span>\
        <span>unallocated <b>\(escape(Money.format(input.dashboard["totals"]?["unallocated_value"], currency)))</b></span></p>
        <h2>Goals</h2>
        \(goalChart)
        <h2>Planned and contributed, last 12 months</h2>
        \(monthChart)
        <h2>Assets reserved for goals</h2>
        \(allocationChart)
        <h2>Exchange rates</h2>
        \(rateTable)
        </body>
        </html>

        """
    }

    // MARK: Goals

    var goalChart: String {
        let goals = input.dashboard["goals"]?.arrayValue ?? []
        guard !goals.isEmpty else { return "<p id=\"goal-progress\">No goals yet.</p>" }
        let rowHeight = 40, labelWidth = 190, track = Self.width - labelWidth - 250
        var svg = "<svg id=\"goal-progress\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Self.width)\" height=\"\(goals.count * rowHeight + 8)\" role=\"img\" aria-label=\"Progress of each goal\">\n"
        for (index, goal) in goals.enumerated() {
            let name = Render.text(goal["name"])
            let progress = Render.decimal(goal["progress"]) ?? 0
            let y = index * rowHeight + 6
            let filled = Self.scaled(min(max(progress, 0), 1), to: track)
            let percent = Amount.format(progress * 100, scale: 1)
            svg += "<g class=\"goal\" data-goal=\"\(escape(name))\">"
            svg += "<text x=\"0\" y=\"\(y + 15)\">\(escape(Render.clipped(name, 26)))</text>"
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 2)\" width=\"\(track)\" height=\"18\" rx=\"4\" fill=\"#eef0f4\"/>"
            svg += "<rect class=\"fill\" x=\"\(labelWidth)\" y=\"\(y + 2)\" width=\"\(filled)\" height=\"18\" rx=\"4\" fill=\"\(colour(name))\"/>"
            let detail = "\(percent)% · \(Money.format(goal["current_total"], goal["currency"])) of \(Money.format(goal["target_amount"], goal["currency"]))"
            svg += "<text x=\"\(labelWidth + track + 10)\" y=\"\(y + 15)\">\(escape(detail))</text>"
            svg += "<text class=\"muted\" x=\"\(labelWidth)\" y=\"\(y + 31)\" font-size=\"10\">deadline \(escape(Render.text(goal["deadline"])))\(goal["incomplete"] == true ? " · incomplete: a rate is missing" : "")</text>"
            svg += "</g>\n"
        }
        return svg + "</svg>"
    }

    // MARK: Months

    /// The twelve months up to the current one: (month, planned, contributed), nil where unknown.
    var months: [(month: String, planned: Decimal?, contributed: Decimal?)] {
        let current = Render.text(input.plans["month"])
        guard let last = try? MonthLabel(parsing: current) else { return [] }
        var known: [String: (Decimal?, Decimal?)] = [:]
        for month in input.history["months"]?.arrayValue ?? [] {
            known[Render.text(month["month"])] = (Render.decimal(month["totals"]?["planned"]), Render.decimal(month["totals"]?["contributed"]))
        }
        if let progress = input.current, progress["totals"] != nil, progress["totals"] != .null {
            known[current] = (Render.decimal(progress["totals"]?["planned"]), Render.decimal(progress["totals"]?["contributed"]))
        } else if known[current] == nil {
            known[current] = (Render.decimal(input.plans["totals"]?["planned"]), nil)
        }
        return (0..<12).map { back in
            let label = last.adding(back - 11).description
            return (label, known[label]?.0, known[label]?.1)
        }
    }

    var monthChart: String {
        Self.monthBars(months, id: "monthly-chart", label: "Planned and contributed per month")
            + "\n<p class=\"legend\"><span><i style=\"background:#b8c2d6\"></i>planned</span><span><i style=\"background:#2b9348\"></i>contributed</span></p>"
    }

    /// Planned against contributed, a pair of bars per month (nil: no bar), as SVG scaled to
    /// its box. The report's monthly chart and the web view's goal page draw with it.
    public static func monthBars(_ months: [(month: String, planned: Decimal?, contributed: Decimal?)], id: String, label: String) -> String {
        let top = max(months.compactMap { max($0.planned ?? 0, $0.contributed ?? 0) }.max() ?? 0, 1)
        let chartHeight = 200, left = 70, bottom = 230
        let slot = (Self.width - left - 10) / max(months.count, 1)
        let barWidth = (slot - 12) / 2
        var svg = "<svg id=\"\(id)\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Self.width)\" height=\"\(bottom + 30)\" "
            + "viewBox=\"0 0 \(Self.width) \(bottom + 30)\" role=\"img\" aria-label=\"\(HTMLText.escape(label))\">\n"
        for step in 0...4 {
            let value = top * Decimal(step) / 4
            let y = bottom - step * chartHeight / 4
            svg += "<line x1=\"\(left)\" y1=\"\(y)\" x2=\"\(Self.width - 10)\" y2=\"\(y)\" stroke=\"#eef0f4\"/>"
            svg += "<text class=\"muted\" x=\"\(left - 6)\" y=\"\(y + 4)\" text-anchor=\"end\">\(HTMLText.escape(Money.grouped(Amount.format(value, scale: 0))))</text>\n"
        }
        for (index, month) in months.enumerated() {
            let x = left + index * slot + 6
            svg += "<g class=\"month\" data-month=\"\(HTMLText.escape(month.month))\">"
            for (offset, value, fill, kind) in [(0, month.planned, "#b8c2d6", "planned"), (barWidth, month.contributed, "#2b9348", "contributed")] {
                guard let value else { continue }
                let height = Self.scaled(max(value, 0) / top, to: chartHeight)
                svg += "<rect class=\"\(kind)\" x=\"\(x + offset)\" y=\"\(Self.subtract(height, from: bottom))\" width=\"\(barWidth)\" height=\"\(height)\" fill=\"\(fill)\">"
                svg += "<title>\(HTMLText.escape(month.month)) \(kind) \(HTMLText.escape(Money.grouped(Amount.plainText(value))))</title></rect>"
            }
            svg += "<text class=\"muted\" x=\"\(x + barWidth)\" y=\"\(bottom + 16)\" text-anchor=\"middle\">\(HTMLText.escape(month.month))</text></g>\n"
        }
        return svg + "</svg>"
    }

    // MARK: Assets

    var allocationChart: String {
        let assets = input.assets["assets"]?.arrayValue ?? []
        guard !assets.isEmpty else { return "<p id=\"allocations\">No assets yet.</p>" }
        let lines = input.allocations["allocations"]?.arrayValue ?? []
        let rowHeight = 30, labelWidth = 190, track = Self.width - labelWidth - 250
        var svg = "<svg id=\"allocations\" xmlns=\"http://www.w3.org/2000/svg\" width=\"\(Self.width)\" height=\"\(assets.count * rowHeight + 8)\" role=\"img\" aria-label=\"How each asset is reserved for goals\">\n"
        var used: [String] = []
        for (index, asset) in assets.enumerated() {
            let name = Render.text(asset["name"]), y = index * rowHeight + 6
            let balance = Render.decimal(asset["balance"]) ?? 0
            let mine = lines.filter { $0["asset_id"] == asset["id"] }
            let whole = max(balance, mine.compactMap { Render.decimal($0["amount"]) }.reduce(0, +))
            svg += "<g class=\"asset\" data-asset=\"\(escape(name))\"><text x=\"0\" y=\"\(y + 15)\">\(escape(Render.clipped(name, 26)))</text>"
            svg += "<rect x=\"\(labelWidth)\" y=\"\(y + 2)\" width=\"\(track)\" height=\"18\" fill=\"#eef0f4\"/>"
            var x = Decimal(labelWidth)
            for line in mine {
                let goal = Render.text(line["goal_name"])
                if !used.contains(goal) { used.append(goal) }
                let share = whole > 0 ? (Render.decimal(line["amount"]) ?? 0) / whole : 0
                let segment = Self.scaled(share, to: track)
                svg += "<rect class=\"reserved\" x=\"\(Self.coordinate(x))\" y=\"\(y + 2)\" width=\"\(segment)\" height=\"18\" fill=\"\(colour(goal))\">"
                svg += "<title>\(escape(goal)): \(escape(Money.format(line["amount"], asset["currency"])))</title></rect>"
                x += Decimal(string: segment) ?? 0
            }
            let detail = "\(Money.format(asset["balance"], asset["currency"])) · \(Money.format(asset["unallocated"], asset["currency"])) free"
            svg += "<text x=\"\(labelWidth + track + 10)\" y=\"\(y + 15)\">\(escape(detail))</text></g>\n"
        }
        svg += "</svg>\n<p class=\"legend\">" + used.map { "<span><i style=\"background:\(colour($0))\"></i>\(escape($0))</span>" }.joined()
            + "<span><i style=\"background:#eef0f4\"></i>unallocated</span></p>"
        return svg
    }

    // MARK: Rates

    var rateTable: String {
        let rates = input.rates["rates"]?.arrayValue ?? []
        guard !rates.isEmpty else { return "<p id=\"rates\">No exchange rates yet.</p>" }
        var html = "<table id=\"rates\"><tr><th>pair</th><th class=\"num\">rate</th><th>as of</th><th class=\"num\">age</th><th>provider</th><th></th></tr>\n"
        for rate in rates {
            let stale = rate["stale"] == true
            html += "<tr class=\"rate\"><td>\(escape(Render.text(rate["base"])))/\(escape(Render.text(rate["quote"])))</td>"
                + "<td class=\"num\">\(escape(Money.grouped(Render.text(rate["rate"]))))</td><td>\(escape(Render.time(rate["as_of"], in: timeZone)))</td>"
                + "<td class=\"num\">\(escape(Render.ageOld(rate["age_seconds"])))</td><td>\(escape(Render.text(rate["provider"])))</td>"
                + "<td class=\"\(stale ? "stale" : "fresh")\">\(stale ? "stale" : "fresh")</td></tr>\n"
        }
        return html + "</table>"
    }

    // MARK: Helpers

    var timeZone: TimeZone { input.timeZone }

    func colour(_ goal: String) -> String { colours[goal] ?? "#5b6475" }

    /// `fraction` of `length` pixels, one decimal place.
    public static func scaled(_ fraction: Decimal, to length: Int) -> String { coordinate(fraction * Decimal(length)) }

    static func coordinate(_ value: Decimal) -> String { Amount.format(value, scale: 1) }

    static func subtract(_ height: String, from base: Int) -> String {
        coordinate(Decimal(base) - (Decimal(string: height) ?? 0))
    }


    /// Text for HTML content and attribute values.
    func escape(_ text: String) -> String { HTMLText.escape(text) }
}
