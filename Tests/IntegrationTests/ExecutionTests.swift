import Foundation
import SavingsRPC
import Testing

@Suite struct ExecutionTests {
    @Test func seed001TestCasesOneToFour() throws {
        let daemon = try DaemonProcess(at: "2026-11-10 12:00:00")
        _ = try daemon.call("goal.create", ["name": "Emergency Fund", "currency": "EUR", "target_amount": "5000", "deadline": "2027-06-30"])
        let started = try daemon.call("month.start")
        #expect(started["status"] == "executing")
        #expect(started["goals"]?.arrayValue?.first?["planned"] == "625.00")
        #expect(try daemon.failure("month.start").kind == "invalid_state")
        #expect(try daemon.failure("plan.set_amount", ["goal": "Emergency Fund", "amount": "1"]).kind == "plan_locked")

        let table: [(String, String, String, Bool)] = [
            ("200", "200.00", "32.0", false), ("300", "500.00", "80.0", false),
            ("125", "625.00", "100.0", true), ("100", "725.00", "116.0", true),
        ]
        for (amount, contributed, percent, fulfilled) in table {
            _ = try daemon.call("goal.contribute", ["goal": "Emergency Fund", "amount": .string(amount)])
            let goal = try #require(try daemon.call("month.progress")["goals"]?.arrayValue?.first)
            #expect(goal["contributed"] == .string(contributed))
            #expect(goal["percent"] == .string(percent))
            #expect(goal["fulfilled"] == .bool(fulfilled))
        }
        #expect(try daemon.call("goal.get", ["goal": "Emergency Fund"])["current_total"] == "725.00")
        #expect(try daemon.call("goal.list")["goals"]?.arrayValue?.first?["current_total"] == "725.00")
        #expect(try daemon.call("dashboard.get")["totals"]?["goals_total"] == "725.00")
        let events = try daemon.call("month.progress")["events"]?.arrayValue ?? []
        #expect(events.map { $0["kind"] } == Array(repeating: "deposit", count: 4))

        // Close: the record is frozen byte for byte, whatever happens later.
        let closed = try daemon.call("month.complete")
        #expect(closed["status"] == "closed")
        _ = try daemon.call("goal.contribute", ["goal": "Emergency Fund", "amount": "50"])
        #expect(try daemon.call("month.progress") == closed)
        #expect(try daemon.call("month.history")["months"]?.arrayValue?.first?["fulfilment_percent"] == "116.0")
        // Undo complete within the window reopens it; live figures include the 50.
        #expect(try daemon.call("month.undo_complete")["status"] == "executing")
        #expect(try daemon.call("month.progress")["goals"]?.arrayValue?.first?["contributed"] == "775.00")
        let history = try daemon.call("goal.history", ["goal": "Emergency Fund", "from": "2026-10"])["months"]?.arrayValue ?? []
        #expect(history.map { $0["month"] } == ["2026-10", "2026-11"])
        #expect(history.first?["planned"] == .null)
        #expect(history.first?["contributed"] == "0.00")
        #expect(history.last?["contributed"] == "775.00")
        #expect(history.last?["planned"] == "625.00")
    }

    @Test func reallocationNetsToZeroAndBackdatedDepositsAreBaseline() throws {
        let daemon = try DaemonProcess(at: "2026-11-10 12:00:00")
        for name in ["A", "B"] {
            _ = try daemon.call("goal.create", ["name": .string(name), "currency": "EUR", "target_amount": "1000", "deadline": "2027-06-30"])
        }
        _ = try daemon.call("asset.create", ["name": "Account", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("tx.add", ["asset": "Account", "amount": "500"])
        _ = try daemon.call("allocation.set", ["asset": "Account", "goal": "A", "amount": "300"])
        _ = try daemon.call("month.start")
        _ = try daemon.call("allocation.move", ["asset": "Account", "from_goal": "A", "to_goal": "B", "amount": "100"])
        var progress = try daemon.call("month.progress")
        let goals = progress["goals"]?.arrayValue ?? []
        #expect(Set(goals.compactMap { $0["contributed"]?.stringValue }) == ["-100.00", "100.00"])
        #expect(progress["totals"]?["contributed"] == "0.00", "a reallocation adds no money")
        #expect(progress["events"]?.arrayValue?.allSatisfy { $0["kind"] == "reallocation" } == true)
        // A deposit dated before the start belongs to the baseline; unallocated money does not count.
        _ = try daemon.call("tx.add", ["asset": "Account", "amount": "999", "date": "2026-11-01T00:00:00Z"])
        _ = try daemon.call("tx.add", ["asset": "Account", "amount": "50"])
        progress = try daemon.call("month.progress")
        #expect(progress["totals"]?["contributed"] == "0.00")
        // Allocating it later in the month counts; a withdrawal that over-allocates shows negative.
        _ = try daemon.call("allocation.set", ["asset": "Account", "goal": "B", "amount": "300"])
        #expect(try daemon.call("month.progress")["totals"]?["contributed"] == "200.00")
        _ = try daemon.call("tx.add", ["asset": "Account", "amount": "-1499"])
        let withdrawn = try daemon.call("month.progress")
        #expect(withdrawn["events"]?.arrayValue?.contains { $0["kind"] == "withdrawal" } == true)
        #expect(withdrawn["totals"]?["contributed"]?.stringValue?.hasPrefix("-") == true)
    }

    @Test func twentyFiveHoursLaterUndoHasExpiredAndAnUnclosedMonthIsReported() throws {
        let first = try DaemonProcess(at: "2026-11-30 20:00:00")
        _ = try first.call("goal.create", ["name": "Trip", "currency": "EUR", "target_amount": "1000", "deadline": "2027-06-30"])
        _ = try first.call("month.start")
        #expect(first.stop() == 0)
        let later = try DaemonProcess(at: "2026-12-01 21:00:00", directory: first.directory)
        let expired = try later.failure("month.undo_start", ["month": "2026-11"])
        #expect(expired.kind == "undo_expired")
        #expect(expired.data?["expired_at"]?.stringValue?.hasPrefix("2026-12-01T20:00:0") == true, "24 h after the start")
        #expect(try later.call("plan.stale")["executing_months"] == ["2026-11"], "reported, not auto-closed")
        #expect(try later.call("month.progress", ["month": "2026-11"])["status"] == "executing")
    }

    @Test func undoWindowsExpire() throws {
        let daemon = try DaemonProcess(at: "2026-11-10 12:00:00", environment: ["SAVINGSD_UNDO_WINDOW": "2"])
        _ = try daemon.call("goal.create", ["name": "Trip", "currency": "EUR", "target_amount": "1000", "deadline": "2027-06-30"])
        _ = try daemon.call("month.start")
        #expect(try daemon.call("month.undo_start")["status"] == "draft")
        #expect(try daemon.call("plan.set_amount", ["goal": "Trip", "amount": "100"])["custom_amount"] == "100.00", "unlocked again")
        _ = try daemon.call("month.start")
        usleep(2_500_000)
        let expired = try daemon.failure("month.undo_start")
        #expect(expired.kind == "undo_expired")
        #expect(expired.data?["expired_at"] != nil)
        _ = try daemon.call("month.complete")
        usleep(2_500_000)
        #expect(try daemon.failure("month.undo_complete").kind == "undo_expired")
        #expect(try daemon.failure("month.start", ["month": "2026-12"]).kind == "invalid_state")
    }
}
