import Foundation
import SavingsRPC
import Testing

/// Issue acceptance for the funding model, on the real binary.
@Suite struct FundingTests {
    func goal(_ daemon: DaemonProcess, _ name: String, _ currency: String = "EUR", target: String = "10000") throws {
        _ = try daemon.call("goal.create", ["name": .string(name), "currency": .string(currency), "target_amount": .string(target),
                                            "deadline": "2030-12-31"])
    }

    func asset(_ daemon: DaemonProcess, _ name: String, _ currency: String, kind: String = "crypto") throws {
        _ = try daemon.call("asset.create", ["name": .string(name), "currency": .string(currency), "kind": .string(kind)])
    }

    @Test func fixedAllocationLeavesTheRestUnallocatedAndOverAllocationIsRefused() throws {
        let daemon = try DaemonProcess()
        try asset(daemon, "Cold wallet", "BTC")
        try goal(daemon, "A")
        try goal(daemon, "B")
        try goal(daemon, "C")
        _ = try daemon.call("tx.add", ["asset": "Cold wallet", "amount": "1.0"])
        _ = try daemon.call("allocation.set", ["asset": "Cold wallet", "goal": "A", "amount": "0.6"])
        let result = try daemon.call("allocation.set", ["asset": "Cold wallet", "goal": "B", "amount": "0.3"])
        #expect(result["allocation"]?["funded"] == "0.30000000")
        let asset = try daemon.call("asset.get", ["asset": "Cold wallet"])
        #expect(asset["balance"] == "1.00000000")
        #expect(asset["allocated"] == "0.90000000")
        #expect(asset["unallocated"] == "0.10000000")

        let refused = try daemon.failure("allocation.set", ["asset": "Cold wallet", "goal": "C", "amount": "1.5"])
        #expect(refused.kind == "insufficient_balance")
        #expect(refused.data?["available"] == "0.1")
        #expect(try daemon.failure("allocation.set", ["asset": "Cold wallet", "goal": "C", "amount": "-1"]).kind == "invalid_amount")
        #expect(try daemon.call("asset.get", ["asset": "Cold wallet"])["unallocated"] == "0.10000000", "a refusal changes nothing")

        // Lowering and removing.
        _ = try daemon.call("allocation.set", ["asset": "Cold wallet", "goal": "B", "amount": 0])
        #expect(try daemon.call("allocation.list", ["asset": "Cold wallet"])["allocations"]?.arrayValue?.count == 1)
        let history = try daemon.call("allocation.history", ["asset": "Cold wallet"])["history"]?.arrayValue ?? []
        #expect(history.map { $0["amount"] } == ["0.60000000", "0.30000000", "0.00000000"])
    }

    @Test func depositAndAllocationFlowWithAutoAllocation() throws {
        let daemon = try DaemonProcess()
        try goal(daemon, "House", "USD")
        try asset(daemon, "Dedicated", "BTC")
        _ = try daemon.call("tx.add", ["asset": "Dedicated", "amount": "0.5"])
        _ = try daemon.call("allocation.set", ["asset": "Dedicated", "goal": "House", "amount": "0.5"])
        // Fully allocated to one goal: the next deposit grows that allocation.
        let deposit = try daemon.call("tx.add", ["asset": "Dedicated", "amount": "0.5", "note": "DCA"])
        let house = try daemon.call("goal.get", ["goal": "House"])
        #expect(deposit["auto_allocated_goal_id"] == house["id"])
        #expect(try daemon.call("asset.get", ["asset": "Dedicated"])["allocations"]?.arrayValue?.first?["amount"] == "1.00000000")

        // A shared asset's deposit stays unallocated.
        try goal(daemon, "Car", "USD")
        try asset(daemon, "Shared", "ETH")
        _ = try daemon.call("tx.add", ["asset": "Shared", "amount": "2"])
        _ = try daemon.call("allocation.set", ["asset": "Shared", "goal": "House", "amount": "1"])
        _ = try daemon.call("allocation.set", ["asset": "Shared", "goal": "Car", "amount": "1"])
        #expect(try daemon.call("tx.add", ["asset": "Shared", "amount": "1"])["auto_allocated_goal_id"] == .null)
        #expect(try daemon.call("asset.get", ["asset": "Shared"])["unallocated"] == "1.00000000")

        // A partially allocated asset's deposit stays unallocated too.
        try asset(daemon, "Partial", "SOL")
        _ = try daemon.call("tx.add", ["asset": "Partial", "amount": "10"])
        _ = try daemon.call("allocation.set", ["asset": "Partial", "goal": "Car", "amount": "4"])
        #expect(try daemon.call("tx.add", ["asset": "Partial", "amount": "5"])["auto_allocated_goal_id"] == .null)
        #expect(try daemon.call("asset.get", ["asset": "Partial"])["unallocated"] == "11.00000000")
    }

    @Test func contributionsGiveOneNumberEverywhere() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("goal.create", ["name": "Emergency Fund", "currency": "EUR", "target_amount": "5000", "deadline": "2027-06-30"])
        var first: JSONValue = .null
        for amount in ["200", "300", "125", "100"] {
            let result = try daemon.call("goal.contribute", ["goal": "Emergency Fund", "amount": .string(amount)])
            if first == .null { first = result }
        }
        #expect(first["asset_created"] == true)
        #expect(first["asset"]?["name"] == "EUR savings")
        let goal = try daemon.call("goal.get", ["goal": "Emergency Fund"])
        #expect(goal["current_total"] == "725.00")
        #expect(goal["remaining"] == "4275.00")
        #expect(goal["progress"] == "0.1450")
        let listed = try daemon.call("goal.list")["goals"]?.arrayValue?.first
        #expect(listed?["current_total"] == "725.00")
        let dashboard = try daemon.call("dashboard.get")
        #expect(dashboard["goals"]?.arrayValue?.first?["current_total"] == "725.00")
        #expect(dashboard["totals"]?["goals_total"] == "725.00")
        #expect(dashboard["totals"]?["unallocated_value"] == "0.00")
        #expect(try daemon.call("asset.list")["assets"]?.arrayValue?.count == 1, "the savings asset is reused, not duplicated")
    }

    @Test func jsonNumbersAddUpExactly() throws {
        let daemon = try DaemonProcess()
        try goal(daemon, "Tenths")
        _ = try daemon.call("goal.contribute", ["goal": "Tenths", "amount": .number("0.1")])
        _ = try daemon.call("goal.contribute", ["goal": "Tenths", "amount": .number("0.2")])
        #expect(try daemon.call("goal.get", ["goal": "Tenths"])["current_total"] == "0.30")
        for bad: JSONValue in ["", "abc", "NaN", .number("1e999"), "0.0000000000000000001", "1,5"] {
            #expect(try daemon.failure("goal.contribute", ["goal": "Tenths", "amount": bad]).kind == "invalid_amount", "\(bad)")
        }
        #expect(try daemon.failure("goal.contribute", ["goal": "Tenths", "amount": "-5"]).kind == "invalid_amount")
    }

    @Test func withdrawalOverAllocatesAndGoalsAreFundedProportionally() throws {
        let daemon = try DaemonProcess()
        try asset(daemon, "Wallet", "BTC")
        try goal(daemon, "A")
        try goal(daemon, "B")
        _ = try daemon.call("rates.set", ["base": "BTC", "quote": "EUR", "rate": "40000"])
        _ = try daemon.call("tx.add", ["asset": "Wallet", "amount": "1"])
        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "A", "amount": "0.6"])
        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "B", "amount": "0.4"])
        _ = try daemon.call("tx.add", ["asset": "Wallet", "amount": "-0.5"])
        let asset = try daemon.call("asset.get", ["asset": "Wallet"])
        #expect(asset["over_allocated"] == true)
        #expect(asset["unallocated"] == "0.00000000")
        #expect(asset["allocations"]?.arrayValue?.map { $0["funded"] } == ["0.30000000", "0.20000000"])
        #expect(try daemon.call("goal.get", ["goal": "A"])["current_total"] == "12000.00")
        #expect(try daemon.call("goal.get", ["goal": "B"])["current_total"] == "8000.00")
        #expect(try daemon.call("dashboard.get")["totals"]?["goals_total"] == "20000.00")
    }

    @Test func missingRatesAreReportedNotGuessedAndTriangulationWorks() throws {
        let daemon = try DaemonProcess()
        try asset(daemon, "Wallet", "BTC")
        try goal(daemon, "House")
        _ = try daemon.call("tx.add", ["asset": "Wallet", "amount": "1"])
        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "House", "amount": "0.5"])
        let without = try daemon.call("goal.get", ["goal": "House"])
        #expect(without["incomplete"] == true)
        #expect(without["missing_rates"] == ["BTC/EUR"])
        #expect(without["current_total"] == "0.00")
        #expect(without["funding"]?.arrayValue?.first?["value"] == .null)
        #expect(try daemon.call("dashboard.get")["missing_rates"] == ["BTC/EUR"])
        let unavailable = try daemon.failure("rates.convert", ["amount": "1", "from": "BTC", "to": "EUR"])
        #expect(unavailable.kind == "rate_unavailable")
        #expect(unavailable.data?["missing"] == "BTC/EUR")

        _ = try daemon.call("rates.set", ["base": "BTC", "quote": "USD", "rate": "60000"])
        _ = try daemon.call("rates.set", ["base": "EUR", "quote": "USD", "rate": "1.2"])
        let converted = try daemon.call("rates.convert", ["amount": "0.5", "from": "BTC", "to": "EUR"])
        #expect(converted["result"] == "25000.00")
        #expect(converted["rate"] == "50000")
        #expect(converted["path"] == ["BTC/USD", "EUR/USD^-1"])
        #expect(converted["age_seconds"]?.intValue != nil)
        let with = try daemon.call("goal.get", ["goal": "House"])
        #expect(with["incomplete"] == false)
        #expect(with["current_total"] == "25000.00")
        #expect(try daemon.call("dashboard.get")["totals"]?["unallocated_value"] == "25000.00")
        // History is kept; the newest rate is current.
        _ = try daemon.call("rates.set", ["base": "BTC", "quote": "USD", "rate": "66000"])
        #expect(try daemon.call("rates.list", ["history": true, "base": "BTC"])["rates"]?.arrayValue?.count == 2)
        #expect(try daemon.call("rates.list")["rates"]?.arrayValue?.count == 2)
        #expect(try daemon.call("goal.get", ["goal": "House"])["current_total"] == "27500.00")
        #expect(try daemon.call("daemon.status")["rates_age_seconds"]?.intValue != nil)
    }

    @Test func undoContributionWithinTheWindowOnly() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_UNDO_WINDOW": "2"])
        try goal(daemon, "Trip")
        let kept = try daemon.call("goal.contribute", ["goal": "Trip", "amount": "100"])
        let undone = try daemon.call("goal.contribute", ["goal": "Trip", "amount": "40"])
        #expect(try daemon.call("goal.get", ["goal": "Trip"])["current_total"] == "140.00")
        let result = try daemon.call("goal.undo_contribution", ["contribution_id": undone["contribution_id"]!])
        #expect(result["goal"]?["current_total"] == "100.00")
        #expect(try daemon.call("tx.list", ["goal": "Trip"])["transactions"]?.arrayValue?.count == 1)
        #expect(try daemon.failure("goal.undo_contribution", ["contribution_id": undone["contribution_id"]!]).kind == "invalid_state")
        usleep(2_500_000)
        let expired = try daemon.failure("goal.undo_contribution", ["contribution_id": kept["contribution_id"]!])
        #expect(expired.kind == "undo_expired")
        #expect(try daemon.call("goal.get", ["goal": "Trip"])["current_total"] == "100.00")
    }

    @Test func backdatedContributionShiftsLaterHistory() throws {
        let daemon = try DaemonProcess()
        try goal(daemon, "Bike")
        _ = try daemon.call("goal.contribute", ["goal": "Bike", "amount": "100"])
        let yesterday = Date().addingTimeInterval(-86_400)
        let backdated = try daemon.call("goal.contribute", ["goal": "Bike", "amount": "50", "date": .string(ISO8601DateFormatter().string(from: yesterday))])
        let history = try daemon.call("allocation.history", ["goal": "Bike"])["history"]?.arrayValue ?? []
        #expect(history.map { $0["amount"] } == ["50.00", "150.00"], "the later row shifts; the newest equals the allocation")
        #expect(try daemon.call("goal.get", ["goal": "Bike"])["current_total"] == "150.00")
        // Undoing the backdated one restores the timeline exactly.
        _ = try daemon.call("goal.undo_contribution", ["contribution_id": backdated["contribution_id"]!])
        let after = try daemon.call("allocation.history", ["goal": "Bike"])["history"]?.arrayValue ?? []
        #expect(after.map { $0["amount"] } == ["100.00"])
    }

    @Test func transactionsAssetsAndTheirErrors() throws {
        let daemon = try DaemonProcess()
        try asset(daemon, "Bank", "EUR", kind: "fiat")
        #expect(try daemon.failure("asset.create", ["name": "BANK", "currency": "EUR", "kind": "fiat"]).kind == "conflict")
        #expect(try daemon.failure("asset.create", ["name": "X", "currency": "EUR", "kind": "stock"]).data?["param"] == "kind")
        for day in 1...5 {
            _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "10", "date": .string("2026-0\(day)-15T12:00:00Z"),
                                           "external_id": .string("bank-\(day)")])
        }
        #expect(try daemon.failure("tx.add", ["asset": "Bank", "amount": "10", "external_id": "bank-3"]).kind == "conflict")
        #expect(try daemon.failure("tx.add", ["asset": "Bank", "amount": "0"]).kind == "invalid_amount")
        #expect(try daemon.failure("tx.add", ["asset": "Bank", "amount": "1", "date": "2999-01-01T00:00:00Z"]).data?["param"] == "date")
        let page1 = try daemon.call("tx.list", ["asset": "Bank", "limit": 2])
        #expect(page1["transactions"]?.arrayValue?.map { $0["external_id"] } == ["bank-5", "bank-4"])
        let page2 = try daemon.call("tx.list", ["asset": "Bank", "limit": 2, "cursor": page1["next_cursor"]!])
        #expect(page2["transactions"]?.arrayValue?.map { $0["external_id"] } == ["bank-3", "bank-2"])
        let ranged = try daemon.call("tx.list", ["from": "2026-02-01", "to": "2026-03-15"])
        #expect(ranged["transactions"]?.arrayValue?.count == 2)
        #expect(try daemon.failure("tx.list", ["cursor": "garbage"]).code == -32602)
        let one = try #require(page1["transactions"]?.arrayValue?.first?["id"])
        _ = try daemon.call("tx.delete", ["transaction": one])
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "40.00")

        #expect(try daemon.failure("asset.delete", ["asset": "Bank"]).kind == "conflict")
        #expect(try daemon.failure("asset.update", ["asset": "Bank", "currency": "USD"]).kind == "conflict")
        _ = try daemon.call("asset.update", ["asset": "Bank", "name": "Main account", "address": "DE00 1234"])
        _ = try daemon.call("asset.delete", ["asset": "Main account", "force": true])
        #expect(try daemon.call("tx.list")["transactions"]?.arrayValue?.isEmpty == true)
    }

    @Test func moveReallocatesAtomically() throws {
        let daemon = try DaemonProcess()
        try asset(daemon, "Wallet", "ETH")
        try goal(daemon, "A")
        try goal(daemon, "B")
        _ = try daemon.call("tx.add", ["asset": "Wallet", "amount": "3"])
        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "A", "amount": "2"])
        let moved = try daemon.call("allocation.move", ["asset": "Wallet", "from_goal": "A", "to_goal": "B", "amount": "0.5"])
        #expect(moved["from"]?["amount"] == "1.50000000")
        #expect(moved["to"]?["amount"] == "0.50000000")
        let refused = try daemon.failure("allocation.move", ["asset": "Wallet", "from_goal": "A", "to_goal": "B", "amount": "5"])
        #expect(refused.kind == "insufficient_balance")
        #expect(refused.data?["available"] == "1.5")
        #expect(try daemon.call("asset.get", ["asset": "Wallet"])["unallocated"] == "1.00000000")
    }

    @Test func everythingSurvivesARestart() throws {
        let first = try DaemonProcess()
        try asset(first, "Wallet", "BTC")
        try goal(first, "House")
        _ = try first.call("tx.add", ["asset": "Wallet", "amount": "1"])
        _ = try first.call("allocation.set", ["asset": "Wallet", "goal": "House", "amount": "0.25"])
        _ = try first.call("rates.set", ["base": "BTC", "quote": "EUR", "rate": "40000"])
        _ = try first.call("goal.contribute", ["goal": "House", "amount": "1000"])
        let before = try [first.call("goal.get", ["goal": "House"]), first.call("asset.list"), first.call("dashboard.get")["totals"]!]
        #expect(before[0]["current_total"] == "11000.00")
        #expect(first.stop() == 0)
        let second = try DaemonProcess(directory: first.directory)
        let after = try [second.call("goal.get", ["goal": "House"]), second.call("asset.list"), second.call("dashboard.get")["totals"]!]
        #expect(after == before)
    }
}
