import Foundation
import SavingsCLI
import SavingsRPC
import Testing

/// savingsctl's human output for fixed data (results recorded from a daemon holding the demo;
/// ages are part of the data, times are shown in UTC), compared with the files in Golden/.
/// `SAVINGSD_UPDATE_GOLDEN=1 swift test --filter GoldenTests` rewrites them after a deliberate change.
@Suite struct GoldenTests {
    static let directory = URL(fileURLWithPath: #filePath).deletingLastPathComponent().appendingPathComponent("Golden")
    static let utc = TimeZone(identifier: "UTC")!

    static func fixture(_ name: String) throws -> JSONValue {
        try JSONParser.parse(String(decoding: try Data(contentsOf: directory.appendingPathComponent(name + ".json")), as: UTF8.self))
    }

    static func check(_ text: String, against name: String) throws {
        let url = directory.appendingPathComponent(name)
        if ProcessInfo.processInfo.environment["SAVINGSD_UPDATE_GOLDEN"] == "1" {
            try Data((text + "\n").utf8).write(to: url)
        }
        let expected = String(decoding: try Data(contentsOf: url), as: UTF8.self)
        #expect(text + "\n" == expected, "\(name) differs; rerun with SAVINGSD_UPDATE_GOLDEN=1 after a deliberate change")
    }

    @Test func dashboard() throws {
        try Self.check(Views.dashboard(try Self.fixture("dashboard.get")), against: "dashboard.txt")
    }

    @Test func dashboardInColour() throws {
        let text = Views.dashboard(try Self.fixture("dashboard.get"), style: .ansi)
        try Self.check(text, against: "dashboard.ansi.txt")
        #expect(text.contains("\u{1B}[1mNAME"))
        // Columns line up whatever the colour codes: each line is as wide as in plain text.
        let plain = Views.dashboard(try Self.fixture("dashboard.get"))
        #expect(text.split(separator: "\n").map { String($0).visibleWidth } == plain.split(separator: "\n").map { String($0).visibleWidth })
    }

    @Test func goalAndAsset() throws {
        try Self.check(Views.goal(try Self.fixture("goal.get")), against: "goal.txt")
        try Self.check(Views.asset(try Self.fixture("asset.get")), against: "asset.txt")
        try Self.check(Views.assetList(try Self.fixture("asset.list")), against: "assets.txt")
    }

    @Test func month() throws {
        try Self.check(Views.monthProgress(try Self.fixture("month.progress"), timeZone: Self.utc), against: "month-status.txt")
        try Self.check(Views.monthHistory(try Self.fixture("month.history")), against: "month-history.txt")
        try Self.check(Views.plans(try Self.fixture("plan.list")["plans"]?.arrayValue ?? []), against: "plans.txt")
    }

    @Test func ratesWithAStaleOne() throws {
        let text = Views.rates(try Self.fixture("rates.list"), timeZone: Self.utc)
        try Self.check(text, against: "rates.txt")
        #expect(text.contains("STALE"))
        #expect(text.contains("2 d"))
    }

    @Test func overview() throws {
        try Self.check(Views.overview(dashboard: try Self.fixture("dashboard.get"), month: try Self.fixture("month.progress"),
                                      plans: try Self.fixture("plan.list")), against: "overview.txt")
        let draft = Views.overview(dashboard: try Self.fixture("dashboard.get"), month: nil, plans: try Self.fixture("plan.list"))
        #expect(draft.contains("2026-11 draft  1,960.00 EUR planned for 4 goals"))
        #expect(draft.contains("savingsctl month start"))
        #expect(Views.overview(dashboard: ["goals": []], month: nil, plans: nil).contains("savingsctl demo"))
    }

    @Test func emptyResultsSayWhatToDo() {
        #expect(Views.goalList(["goals": []]).contains("savingsctl goal add"))
        #expect(Views.assetList(["assets": []]).contains("savingsctl asset add"))
        #expect(Views.rates(["rates": []]).contains("savingsctl rates set"))
        #expect(Views.monthHistory(["months": []]).contains("savingsctl month complete"))
    }
}
