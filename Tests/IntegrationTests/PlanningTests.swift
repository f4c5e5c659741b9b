import Foundation
import Synchronization
import SavingsRPC
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension DaemonProcess {
    /// The real binary under libfaketime: the wall clock starts at `instant` (UTC) and runs on;
    /// the monotonic clock stays real, and savingsd sleeps on it. Under libfaketime a Swift
    /// program started without a terminal sees an empty argument list, so the paths go in
    /// through the environment (SAVINGSD_SOCKET / SAVINGSD_DATABASE), which savingsd reads too.
    convenience init(at instant: String, directory: String? = nil, environment: [String: String] = [:]) throws {
        let directory = try directory ?? makeScratchDirectory()
        var env = [
            "LD_PRELOAD": "/usr/lib/x86_64-linux-gnu/faketime/libfaketimeMT.so.1", "FAKETIME": "@\(instant)",
            "FAKETIME_DONT_FAKE_MONOTONIC": "1", "TZ": "UTC", "SAVINGSD_TIMEZONE": "UTC",
            "SAVINGSD_SOCKET": directory + "/d.sock", "SAVINGSD_DATABASE": directory + "/db/savings.db",
        ]
        env.merge(environment) { $1 }
        try self.init(directory: directory, arguments: [], environment: env)
    }
}

@Suite struct PlanningTests {
    func goal(_ daemon: DaemonProcess, _ name: String, target: String = "5000", deadline: String = "2027-06-30") throws {
        _ = try daemon.call("goal.create", ["name": .string(name), "currency": "EUR", "target_amount": .string(target),
                                            "deadline": .string(deadline)])
    }

    @Test func plansAndOverridesSurviveRestartAndGoalEdits() throws {
        let first = try DaemonProcess(at: "2026-11-10 12:00:00")
        try goal(first, "Emergency Fund")
        let listed = try first.call("plan.list")
        #expect(listed["month"] == "2026-11")
        let plan = try #require(listed["plans"]?.arrayValue?.first)
        #expect(plan["months_remaining"] == 8)
        #expect(plan["required_monthly"] == "625.00")
        #expect(plan["status"] == "on_track")
        #expect(plan["state"] == "draft")
        #expect(listed["totals"]?["planned"] == "625.00")
        _ = try first.call("plan.set_amount", ["goal": "Emergency Fund", "amount": "500"])
        _ = try first.call("plan.protect", ["plan": plan["id"]!, "protected": true])
        _ = try first.call("goal.update", ["goal": "Emergency Fund", "target_amount": "8000"])
        #expect(first.stop() == 0)

        let second = try DaemonProcess(at: "2026-11-11 09:00:00", directory: first.directory)
        let again = try #require(try second.call("plan.list")["plans"]?.arrayValue?.first)
        #expect(again["id"] == plan["id"])
        #expect(again["required_monthly"] == "625.00", "never recalculated behind the user's back")
        #expect(again["custom_amount"] == "500.00")
        #expect(again["effective_amount"] == "500.00")
        #expect(again["is_protected"] == true)
        let recalculated = try second.call("plan.recalculate", ["plan": plan["id"]!])
        #expect(recalculated["required_monthly"] == "1000.00")
        #expect(recalculated["custom_amount"] == .null)
        _ = try second.call("plan.skip", ["goal": "Emergency Fund", "month": "2026-11", "skipped": true])
        #expect(try second.call("plan.get", ["plan": plan["id"]!])["planned_amount"] == "0.00")
        #expect(try second.failure("plan.get", ["plan": plan["id"]!, "goal": "Emergency Fund"]).code == -32602)
        // Past months are read only: nothing is created for them.
        #expect(try second.call("plan.list", ["month": "2026-09"])["plans"]?.arrayValue?.isEmpty == true)
        #expect(try second.call("plan.list", ["month": "2027-01"])["plans"]?.arrayValue?.first?["months_remaining"] == 6)
    }

    /// plan.flex_preview and plan.flex_apply over the socket: a factor scales the flexible plans
    /// only; a budget below what the factor's floor (0.5) allows reports the shortfall.
    @Test func flexScalesTheFlexiblePlansAndReportsAShortfall() throws {
        let daemon = try DaemonProcess(at: "2026-11-10 12:00:00")
        try goal(daemon, "Emergency Fund")                       // 5000 over 8 months: 625.00
        try goal(daemon, "Rent buffer", target: "4000")           // 500.00, protected
        _ = try daemon.call("plan.list")
        _ = try daemon.call("plan.protect", ["goal": "Rent buffer", "protected": true])
        let preview = try daemon.call("plan.flex_preview", ["factor": "0.8"])
        #expect(preview["applied"] == false)
        #expect(preview["factor"] == "0.8")
        #expect(preview["total"] == "1000.00")                    // 625 x 0.8 + 500
        #expect(preview["shortfall"] == .null && preview["surplus"] == .null)
        let lines = Dictionary(uniqueKeysWithValues: (preview["plans"]?.arrayValue ?? []).map { ($0["goal_name"]?.stringValue ?? "", $0) })
        #expect(lines["Emergency Fund"]?["adjusted_amount"] == "500.00")
        #expect(lines["Rent buffer"]?["adjusted_amount"] == "500.00")
        #expect(try daemon.call("plan.get", ["goal": "Emergency Fund"])["custom_amount"] == .null, "a preview writes nothing")

        let tight = try daemon.call("plan.flex_preview", ["budget": "700"])
        #expect(tight["factor"] == "0.5")
        #expect(tight["total"] == "812.50")                       // 625 x 0.5 + 500
        #expect(tight["shortfall"] == "112.50")

        let applied = try daemon.call("plan.flex_apply", ["factor": "0.8"])
        #expect(applied["applied"] == true)
        #expect(try daemon.call("plan.get", ["goal": "Emergency Fund"])["custom_amount"] == "500.00")
        #expect(try daemon.call("plan.get", ["goal": "Rent buffer"])["effective_amount"] == "500.00", "protected plans keep their amount")
        #expect(try daemon.call("events.subscribe", ["topics": ["plans.created"]])["subscribed"] == ["plans.created"])
    }

    @Test func concurrentPlanListsCreateOnePlanPerGoal() throws {
        let daemon = try DaemonProcess()
        for index in 1...5 { try goal(daemon, "Goal \(index)") }
        let results = Mutex<[Set<String>]>([])
        let failures = Mutex<[String]>([])
        let socket = daemon.socketPath
        DispatchQueue.concurrentPerform(iterations: 100) { _ in
            do {
                let plans = try RPCClient(socketPath: socket).call("plan.list")["plans"]?.arrayValue ?? []
                let ids = Set(plans.compactMap { $0["id"]?.stringValue })
                results.withLock { $0.append(ids) }
            } catch {
                failures.withLock { $0.append("\(error)") }
            }
        }
        #expect(failures.withLock { $0 }.isEmpty)
        let sets = results.withLock { $0 }
        #expect(sets.count == 100)
        #expect(Set(sets).count == 1, "every caller gets the same ids")
        #expect(sets.first?.count == 5)
        #expect(try daemon.call("plan.list")["plans"]?.arrayValue?.count == 5)
    }

    @Test func draftsOfLastMonthAreStaleAfterARestart() throws {
        let october = try DaemonProcess(at: "2026-10-15 12:00:00")
        for index in 1...7 { try goal(october, "Goal \(index)") }
        #expect(try october.call("plan.list")["plans"]?.arrayValue?.count == 7)
        #expect(october.stop() == 0)

        let november = try DaemonProcess(at: "2026-11-05 08:00:00", directory: october.directory)
        #expect(try november.call("daemon.status")["last_rollover_month"] == "2026-11")
        let page1 = try november.call("plan.stale")
        #expect(page1["total"] == 7)
        #expect(page1["pages"] == 2)
        #expect(page1["items"]?.arrayValue?.count == 5)
        #expect(page1["actions"]?["delete"] != nil)
        let page2 = try november.call("plan.stale", ["page": 2])
        let rest = page2["items"]?.arrayValue ?? []
        #expect(rest.count == 2)
        #expect(try november.call("plan.list")["stale_count"] == 7)

        let items = (page1["items"]?.arrayValue ?? []) + rest
        #expect(try november.call("plan.resolve_stale", ["plan": items[0]["id"]!, "action": "complete"])["plan"]?["state"] == "completed")
        let skipped = try november.call("plan.resolve_stale", ["plan": items[1]["id"]!, "action": "skip"])
        #expect(skipped["plan"]?["is_skipped"] == true)
        #expect(try november.call("plan.resolve_stale", ["plan": items[2]["id"]!, "action": "delete"])["plan"] == .null)
        #expect(try november.failure("plan.resolve_stale", ["plan": items[0]["id"]!, "action": "skip"]).kind == "invalid_state")
        let current = try #require(try november.call("plan.list")["plans"]?.arrayValue?.first?["id"])
        #expect(try november.failure("plan.resolve_stale", ["plan": current, "action": "complete"]).kind == "invalid_state")
        #expect(try november.failure("plan.set_amount", ["plan": items[0]["id"]!, "amount": "1"]).kind == "plan_locked")
        #expect(try november.call("plan.stale")["total"] == 4)
    }

    @Test func aRunningDaemonRollsOverAtTheMonthBoundary() throws {
        let daemon = try DaemonProcess(at: "2026-12-31 23:59:57")
        try goal(daemon, "Trip")
        let events = try daemon.raw()
        try events.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{"topics":["month.rolled_over","plans.created"]}}"#)
        #expect(try JSONParser.parse(try #require(try events.readLine()))["result"]?["subscribed"] == ["month.rolled_over", "plans.created"])
        var seen: [JSONValue] = []
        while seen.count < 2, let line = try events.readLine(timeoutMilliseconds: 15_000) {
            seen.append(try JSONParser.parse(line))
        }
        let rolled = try #require(seen.first { $0["params"]?["topic"] == "month.rolled_over" })
        #expect(rolled["method"] == "event")
        #expect(rolled["params"]?["data"]?["from"] == "2026-12")
        #expect(rolled["params"]?["data"]?["to"] == "2027-01")
        #expect(seen.contains { $0["params"]?["topic"] == "plans.created" && $0["params"]?["data"]?["month"] == "2027-01" })
        #expect(try daemon.call("daemon.status")["last_rollover_month"] == "2027-01")
        #expect(try daemon.call("plan.list")["plans"]?.arrayValue?.first?["months_remaining"] == 6)
    }

    @Test func remindersReachTheOnEventHook() throws {
        let before = try DaemonProcess(at: "2026-11-20 12:00:00")
        try goal(before, "Emergency Fund")
        #expect(before.stop() == 0)
        let output = before.directory + "/events.jsonl"
        let daemon = try DaemonProcess(at: "2026-11-26 09:00:00", directory: before.directory,
                                       environment: ["SAVINGSD_ON_EVENT": "/bin/sh -c 'cat >> \"$0\"' \(output)"])
        try waitUntil(timeout: 20) { ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("reminder.due") }
        let lines = try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n")
        let reminder = try JSONParser.parse(String(try #require(lines.first { $0.contains("reminder.due") })))
        #expect(reminder["topic"] == "reminder.due")
        #expect(reminder["data"]?["goals"]?.arrayValue?.first?["goal_name"] == "Emergency Fund")
        #expect(reminder["data"]?["goals"]?.arrayValue?.first?["remaining"] == "625.00")
        #expect(daemon.stop() == 0)
    }

    @Test func subscribersReceivePlansCreatedAndUnknownTopicsAreRefused() throws {
        let daemon = try DaemonProcess()
        let events = try daemon.raw()
        try events.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{"topics":["plans.created","data.changed"]}}"#)
        _ = try events.readLine()
        try goal(daemon, "Bike")
        _ = try daemon.call("plan.list")
        var topics: [String] = []
        while !topics.contains("plans.created"), let line = try events.readLine(timeoutMilliseconds: 10_000) {
            topics.append(try JSONParser.parse(line)["params"]?["topic"]?.stringValue ?? "")
        }
        #expect(topics.contains("data.changed"))
        #expect(topics.contains("plans.created"))
        #expect(try daemon.failure("events.subscribe", ["topics": ["nope"]]).code == -32602)
    }
}
