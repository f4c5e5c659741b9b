import Foundation
import SavingsRPC
import Testing

@Suite struct GoalTests {
    static let emergency: [String: JSONValue] = [
        "name": "Emergency Fund", "currency": "EUR", "target_amount": 5000, "deadline": "2027-06-30",
    ]

    @Test func crudWithItsErrors() throws {
        let daemon = try DaemonProcess()
        let created = try daemon.call("goal.create", Self.emergency.merging(["notes": "three months of rent"]) { $1 })
        #expect(created["target_amount"] == "5000.00")
        #expect(created["currency"] == "EUR")
        #expect(created["archived"] == false)
        let id = try #require(created["id"]?.stringValue)
        #expect(UUID(uuidString: id) != nil)
        #expect(created["created_at"]?.stringValue?.hasSuffix("Z") == true)

        // Errors say which field and why, and change nothing.
        let duplicate = try daemon.failure("goal.create", Self.emergency.merging(["name": "EMERGENCY FUND"]) { $1 })
        #expect(duplicate.code == -32000)
        #expect(duplicate.kind == "conflict")
        let badCurrency = try daemon.failure("goal.create", Self.emergency.merging(["name": "B", "currency": "E$"]) { $1 })
        #expect(badCurrency.code == -32602)
        #expect(badCurrency.data?["param"] == "currency")
        let badDate = try daemon.failure("goal.create", Self.emergency.merging(["name": "B", "deadline": "2027-02-30"]) { $1 })
        #expect(badDate.data?["param"] == "deadline")
        let negative = try daemon.failure("goal.create", Self.emergency.merging(["name": "B", "target_amount": "-5"]) { $1 })
        #expect(negative.kind == "invalid_amount")
        let longName = try daemon.failure("goal.create", Self.emergency.merging(["name": .string(String(repeating: "n", count: 201))]) { $1 })
        #expect(longName.data?["param"] == "name")
        let missing = try daemon.failure("goal.create", ["name": "B"])
        #expect(missing.code == -32602)
        #expect(try daemon.call("goal.list")["goals"]?.arrayValue?.count == 1)

        // Exact amounts: JSON numbers are read from their literal text.
        let tenth = try daemon.call("goal.create", ["name": "Tenth", "currency": "EUR", "target_amount": .number("0.1"), "deadline": "2027-01-01"])
        #expect(tenth["target_amount"] == "0.10")

        #expect(try daemon.call("goal.get", ["goal": "emergency fund"])["id"] == .string(id))
        #expect(try daemon.call("goal.get", ["goal": .string(id.uppercased())])["name"] == "Emergency Fund")
        #expect(try daemon.failure("goal.get", ["goal": "nothing"]).kind == "not_found")

        let updated = try daemon.call("goal.update", ["goal": .string(id), "target_amount": "6000.5", "notes": .null])
        #expect(updated["target_amount"] == "6000.50")
        #expect(updated["notes"] == .null)
        #expect(try daemon.failure("goal.update", ["goal": .string(id)]).code == -32602)
        #expect(try daemon.failure("goal.update", ["goal": .string(id), "name": "tenth"]).kind == "conflict")

        let archived = try daemon.call("goal.archive", ["goal": .string(id)])
        #expect(archived["archived"] == true)
        #expect(try daemon.call("goal.list")["goals"]?.arrayValue?.map { $0["name"] } == ["Tenth"])
        #expect(try daemon.call("goal.list", ["include_archived": true])["goals"]?.arrayValue?.count == 2)

        let deleted = try daemon.call("goal.delete", ["goal": "Emergency Fund"])
        #expect(deleted["deleted"] == true)
        #expect(try daemon.failure("goal.get", ["goal": .string(id)]).kind == "not_found")
        let status = try daemon.call("daemon.status")
        #expect(status["counts"]?["goals"] == 1)
    }

    @Test func everythingSurvivesARestart() throws {
        let first = try DaemonProcess()
        let created = try first.call("goal.create", Self.emergency)
        _ = try first.call("goal.archive", ["goal": "Emergency Fund"])
        #expect(first.stop() == 0)

        let second = try DaemonProcess(directory: first.directory)
        let again = try second.call("goal.get", ["goal": "Emergency Fund"])
        #expect(again["id"] == created["id"])
        #expect(again["created_at"] == created["created_at"])
        #expect(again["target_amount"] == "5000.00")
        #expect(again["archived"] == true)
        #expect(second.stop() == 0)
    }
}
