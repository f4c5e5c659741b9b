import Foundation
import SavingsRPC
import Synchronization
import Testing

/// `dashboard.get` and every other figure reuse what was computed for the current snapshot:
/// never across a write, never across a rate turning stale.
@Suite struct FigureReuseTests {
    /// The dashboard's month is month.progress's totals (one calculation), in any currency,
    /// and follows a contribution at once.
    @Test func theDashboardMonthIsTheMonthsProgress() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("data.demo")
        let progress = try daemon.call("month.progress")
        let month = try #require(try daemon.call("dashboard.get")["month"])
        #expect(month["status"] == "executing")
        #expect(month["planned"] == progress["totals"]?["planned"])
        #expect(month["contributed"] == progress["totals"]?["contributed"])
        #expect(month["remaining"] == progress["totals"]?["remaining"])
        #expect(try daemon.call("dashboard.get")["stale_drafts"] == 0)

        // In US dollars through the demo's USD/EUR rate: 1,960.00 EUR / 0.9215 EUR per USD.
        #expect(try daemon.call("dashboard.get", ["currency": "USD"])["month"]?["planned"] == "2126.97")

        _ = try daemon.call("goal.contribute", ["goal": "House deposit", "amount": "100"])
        let after = try daemon.call("dashboard.get")["month"]
        #expect(after?["contributed"] == (try daemon.call("month.progress"))["totals"]?["contributed"])
        #expect(after?["contributed"] != month["contributed"], "a contribution is seen at once")
    }

    /// Found by trying the web view: the dashboard said "Planned 0.00" for a new month until
    /// something called plan.list, and a goal created later was missing from the figure. The
    /// month's plans exist the first time any view looks at it.
    @Test func theDashboardOfANewMonthShowsTheRealPlan() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("goal.create", ["name": "Bike", "currency": "EUR", "target_amount": "1200", "deadline": "2027-10-31"])
        let first = try #require(try daemon.call("dashboard.get")["month"])
        let plans = try daemon.call("plan.list")
        let total = (plans["plans"]?.arrayValue ?? []).compactMap { $0["planned_amount"]?.stringValue }
            .compactMap { Decimal(string: $0) }.reduce(0, +)
        #expect(total > 0, "\(plans)")
        #expect(Decimal(string: first["planned"]?.stringValue ?? "") == total, "dashboard \(first), plans \(plans)")
        // A goal created later is in the figure at once.
        _ = try daemon.call("goal.create", ["name": "Trip", "currency": "EUR", "target_amount": "600", "deadline": "2027-04-30"])
        let second = try #require(try daemon.call("dashboard.get")["month"])
        #expect(Decimal(string: second["planned"]?.stringValue ?? "") ?? 0 > total, "\(second)")
        #expect((try daemon.call("plan.list")["plans"]?.arrayValue ?? []).count == 2)
    }

    /// `goal_fields` gives each goal only those fields, the same values as the whole goal, and
    /// follows a write; an unknown field is refused with the fields there are.
    @Test func goalFieldsSelectAndFollowWrites() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("data.demo")
        let fields: JSONValue = ["id", "name", "progress"]
        for _ in 0..<2 {
            let whole = try #require(try daemon.call("dashboard.get")["goals"]?.arrayValue)
            let slim = try #require(try daemon.call("dashboard.get", ["goal_fields": fields])["goals"]?.arrayValue)
            #expect(slim.count == whole.count)
            for (one, all) in zip(slim, whole) {
                #expect(one.objectValue?.keys.sorted() == ["id", "name", "progress"])
                #expect(one["progress"] == all["progress"] && one["id"] == all["id"])
            }
            _ = try daemon.call("goal.contribute", ["goal": "Japan trip", "amount": "100"])
        }
        let refused = try daemon.failure("dashboard.get", ["goal_fields": ["name", "balance"]])
        #expect(refused.code == -32602)
        #expect(refused.message.contains("no field 'balance'") && refused.message.contains("current_total"))
    }

    @Test func reusedFiguresFollowEveryWriteAndTheClock() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_RATES_STALE_AFTER": "3"])
        _ = try daemon.call("asset.create", ["name": "Wallet", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("goal.create", ["name": "House", "currency": "EUR", "target_amount": "100000", "deadline": "2030-01-01"])
        _ = try daemon.call("tx.add", ["asset": "Wallet", "amount": "1"])
        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "House", "amount": "0.5"])
        _ = try daemon.call("rates.set", ["base": "BTC", "quote": "EUR", "rate": "60000"])

        func house(_ dashboard: JSONValue) -> JSONValue? {
            dashboard["goals"]?.arrayValue?.first { $0["name"] == "House" }
        }
        let first = try daemon.call("dashboard.get", ["currency": "EUR"])
        #expect(house(first)?["current_total"] == "30000.00")
        #expect(try daemon.call("dashboard.get", ["currency": "EUR"]) == first, "an unchanged snapshot gives the same answer")

        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "House", "amount": "0.75"])
        #expect(house(try daemon.call("dashboard.get", ["currency": "EUR"]))?["current_total"] == "45000.00", "a write is seen at once")
        #expect(try daemon.call("goal.get", ["goal": "House"])["current_total"] == "45000.00")

        _ = try daemon.call("rates.set", ["base": "BTC", "quote": "EUR", "rate": "62000"])
        let repriced = try daemon.call("dashboard.get", ["currency": "EUR"])
        #expect(house(repriced)?["current_total"] == "46500.00", "a new rate is seen at once")
        #expect(repriced["stale"] == false)

        // Nothing is written, but the rate ages past stale_after: the flags must follow the clock.
        var stale = repriced
        for _ in 0..<60 where stale["stale"] != true {
            usleep(100_000)
            stale = try daemon.call("dashboard.get", ["currency": "EUR"])
        }
        #expect(stale["stale"] == true, "\(stale)")
        #expect(try daemon.call("goal.get", ["goal": "House"])["stale"] == true)
        #expect(house(stale)?["current_total"] == "46500.00")
    }

    /// month.progress is reused while nothing changes; a write, or the clock reaching a change
    /// point dated after it was computed, gives a new one.
    @Test func progressFollowsWritesAndChangePointsReached() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "House", target: "100000", amount: "100")
        _ = try daemon.call("month.start")
        func contributed(_ progress: JSONValue) -> JSONValue? { progress["goals"]?.arrayValue?.first?["contributed"] }

        let first = try daemon.call("month.progress")
        #expect(try daemon.call("month.progress") == first, "an unchanged snapshot gives the same answer")
        let forty = try daemon.call("tx.add", ["asset": "Bank", "amount": "40"])
        let written = try daemon.call("month.progress")
        #expect(contributed(first) == "0.00")
        #expect(contributed(written) == "40.00", "a write is seen at once: \(written)")

        // Dated two seconds ahead: not in the month yet, then in it once the clock gets there,
        // with no write in between.
        let soon = Date().addingTimeInterval(2)
        let iso = ISO8601DateFormatter()
        iso.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "2", "date": .string(iso.string(from: soon))])
        #expect(contributed(try daemon.call("month.progress")) == "40.00")
        while Date() < soon.addingTimeInterval(0.05) { usleep(50_000) }
        #expect(contributed(try daemon.call("month.progress")) == "42.00", "a change point reached is seen")

        // Backdated to just after the month started, before the points already walked, then a
        // deposit deleted: the account's month is walked anew, never taken from what was kept.
        let started = try #require(iso.date(from: first["started_at"]?.stringValue ?? ""))
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "5", "date": .string(iso.string(from: started.addingTimeInterval(0.001)))])
        #expect(contributed(try daemon.call("month.progress")) == "47.00", "a backdated deposit is seen")
        _ = try daemon.call("tx.delete", ["transaction": try #require(forty["id"])])
        #expect(contributed(try daemon.call("month.progress")) == "7.00", "a deleted deposit is gone")
    }

    /// Deposits land while other clients poll month.progress: once the deposits have stopped,
    /// every poll shows all of them (a figure computed while a write landed is never kept
    /// under a snapshot newer than what it read).
    @Test func progressPolledDuringWritesEndsWithEveryWrite() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "House", target: "100000", amount: "100")
        _ = try daemon.call("month.start")
        let state = Mutex((writing: true, polls: 0, failures: 0))
        let socket = daemon.socketPath
        let pollers = (0..<3).map { _ in
            Thread {
                guard let client = try? RPCClient(socketPath: socket) else { return state.withLock { $0.failures += 1 } }
                while state.withLock({ $0.writing }) {
                    let answered = (try? client.call("month.progress")) != nil
                    state.withLock { answered ? ($0.polls += 1) : ($0.failures += 1) }
                }
            }
        }
        pollers.forEach { $0.start() }
        for _ in 0..<150 { _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "1"]) }
        state.withLock { $0.writing = false }
        for _ in 0..<5 {
            let progress = try daemon.call("month.progress")
            #expect(progress["goals"]?.arrayValue?.first?["contributed"] == "150.00", "\(progress["goals"] ?? .null)")
        }
        #expect(state.withLock { $0.failures } == 0)
        #expect(state.withLock { $0.polls } > 0)
    }
}
