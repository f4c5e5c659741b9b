import Foundation
import SavingsRPC
import Testing

/// `tx.get`, `tx.update` and `tx.list`'s search on the real daemon: a transaction changed in
/// place keeps its id, asset and external_id, moves its asset's balance, and an edited import
/// row is not imported again.
@Suite struct TransactionEditTests {
    @Test func aTransactionChangesInPlaceAndTheBalanceFollows() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let tx = try daemon.call("tx.add", ["asset": "Bank", "amount": "100", "date": "2026-03-04T15:30:00Z", "note": "Salary"])
        let id = try #require(tx["id"]?.stringValue)

        let changed = try daemon.call("tx.update", ["transaction": .string(id), "amount": "120.50", "date": "2026-03-05T15:30:00Z"])
        #expect(changed["before"]?["amount"] == "100.00" && changed["transaction"]?["amount"] == "120.50", "\(changed)")
        #expect(changed["transaction"]?["id"]?.stringValue == id && changed["transaction"]?["note"] == "Salary")
        let got = try daemon.call("tx.get", ["transaction": .string(id)])
        #expect(got["date"] == "2026-03-05T15:30:00.000Z" && got["amount"] == "120.50", "\(got)")
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "120.50")

        // A note is removed with an empty text; nothing to change is refused.
        #expect(try daemon.call("tx.update", ["transaction": .string(id), "note": ""])["transaction"]?["note"] == .null)
        #expect(try daemon.failure("tx.update", ["transaction": .string(id)]).message.contains("nothing to update"))
        let zero = try daemon.failure("tx.update", ["transaction": .string(id), "amount": "0"])
        #expect(zero.data?["kind"] == "invalid_amount", "\(zero)")
        let future = try daemon.failure("tx.update", ["transaction": .string(id), "date": "2099-01-01"])
        #expect(future.message.contains("in the future"))
        let unknown = try daemon.failure("tx.get", ["transaction": "00000000-0000-4000-8000-000000000000"])
        #expect(unknown.data?["kind"] == "not_found")
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "120.50", "a refusal changes nothing")

        // A later date stays consistent with what the store keeps of each account.
        _ = try daemon.call("tx.update", ["transaction": .string(id), "date": "2026-11-20"])
        #expect(try daemon.call("db.check")["ok"] == true)
    }

    /// An import row without an id of its own is known again by its content; changed, it
    /// keeps that key, so the same file brings it in no second time.
    @Test func anEditedImportRowIsNotImportedAgain() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let file = daemon.directory + "/bank.csv"
        try "date,amount,note\n2026-01-05,100.50,Salary\n2026-01-07,-20,Groceries\n".write(toFile: file, atomically: true, encoding: .utf8)
        #expect(try daemon.call("tx.import", ["asset": "Bank", "path": .string(file)])["imported"] == 2)
        let rows = try #require(try daemon.call("tx.list", ["asset": "Bank", "search": "groceries"])["transactions"]?.arrayValue)
        #expect(rows.count == 1)
        let id = try #require(rows.first?["id"]?.stringValue)
        _ = try daemon.call("tx.update", ["transaction": .string(id), "amount": "-25", "note": "Groceries and wine"])
        let again = try daemon.call("tx.import", ["asset": "Bank", "path": .string(file)])
        #expect(again["imported"] == 0 && again["already_present"] == 2, "\(again)")
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "75.50")
    }

    /// A contribution's transaction may take a note; its amount and date are the
    /// contribution's, changed by undoing it.
    @Test func aContributionsTransactionKeepsItsAmount() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("goal.create", ["name": "Bike", "currency": "EUR", "target_amount": "800", "deadline": "2030-01-01"])
        let contribution = try daemon.call("goal.contribute", ["goal": "Bike", "amount": "50"])
        let id = try #require(contribution["transaction"]?["id"]?.stringValue)
        let refused = try daemon.failure("tx.update", ["transaction": .string(id), "amount": "60"])
        #expect(refused.data?["kind"] == "conflict" && refused.message.contains("contribution to 'Bike'"), "\(refused)")
        #expect(try daemon.call("tx.update", ["transaction": .string(id), "note": "birthday money"])["transaction"]?["note"] == "birthday money")
        #expect(try daemon.call("goal.get", ["goal": "Bike"])["current_total"] == "50.00")
    }

    /// Search: a note's text in any case, an external id, an amount of either sign; no
    /// character is a wildcard.
    @Test func searchFindsNotesIdsAndAmounts() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "100", "date": "2026-03-01", "note": "Salary March"])
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "-12.5", "date": "2026-03-02", "note": "Café Müller 50%"])
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "12.50", "date": "2026-03-03", "external_id": "INV-778"])
        func notes(_ search: String) throws -> [String] {
            try daemon.call("tx.list", ["asset": "Bank", "search": .string(search)])["transactions"]?.arrayValue?
                .map { $0["note"]?.stringValue ?? $0["external_id"]?.stringValue ?? "" } ?? []
        }
        #expect(try notes("salary") == ["Salary March"])
        #expect(try notes("MÜLLER").isEmpty, "letters beyond ASCII are matched as written")
        #expect(try notes("Müller") == ["Café Müller 50%"])
        #expect(try notes("inv-7") == ["INV-778"])
        #expect(try notes("12.5") == ["INV-778", "Café Müller 50%"], "an amount of either sign, newest first")
        #expect(try notes("50%") == ["Café Müller 50%"])
        #expect(try notes("%").count == 1, "% is a character, not a wildcard")
        #expect(try notes("_").isEmpty)
        #expect(try daemon.failure("tx.list", ["search": .string(String(repeating: "a", count: 201))]).message.contains("at most 200"))

        let ctl = try runCtl(["--socket", daemon.socketPath, "tx", "list", "--asset", "Bank", "--search", "salary"])
        #expect(ctl.status == 0 && ctl.stdout.contains("Salary March") && !ctl.stdout.contains("Müller"), "\(ctl)")
        let id = try #require(try daemon.call("tx.list", ["search": "salary"])["transactions"]?.arrayValue?.first?["id"]?.stringValue)
        let edited = try runCtl(["--socket", daemon.socketPath, "tx", "edit", id, "--amount", "110", "--note", "Salary, March"])
        #expect(edited.status == 0 && edited.stdout.contains("110.00") && edited.stdout.contains("Salary, March"), "\(edited)")
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "110.00")
    }
}
