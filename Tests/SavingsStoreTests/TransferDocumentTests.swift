import Foundation
import GRDB
import SavingsCore
import Testing
@testable import SavingsStore

/// The check every row of an export document passes before anything is written.
@Suite struct TransferDocumentTests {
    @Test func theCheckKnowsExactlyTheFieldsAnExportWrites() async throws {
        let database = try SavingsDatabase.open(path: try StoreTestSupport.databasePath("document-fields"))
        let check = try await database.transferDocumentCheck()
        let columns = try await database.writer.read { db in
            try SavingsDatabase.transferSections.map { ($0.section, try SavingsDatabase.documentColumns(section: $0.section, table: $0.table, db)) }
        }
        for (section, known) in columns {
            #expect(Set(check.fields[section]?.keys ?? [:].keys) == known, "\(section)")
        }
        // What an export leaves out of a row is what a table fills in itself.
        #expect(check.fields["goals"]?["archived"]?.required == false)
        #expect(check.fields["goals"]?["name"] == .init(required: true, integer: false))
        #expect(check.fields["rates"]?["id"] == .init(required: false, integer: true))
        #expect(check.fields["plans"]?["months_remaining"] == .init(required: true, integer: true))
    }

    @Test func aWrongRowIsRefusedByItsPlaceAndNothingIsWritten() async throws {
        let database = try SavingsDatabase.open(path: try StoreTestSupport.databasePath("document-rows"))
        let goal: TransferRow = ["id": .text("9c1d7f2e-0000-4000-8000-000000000001"), "name": .text("House"), "name_key": .text("house"),
                                 "currency": .text("EUR"), "target_amount": .text("5000"), "deadline": .text("2030-01-31"),
                                 "start_date": .text("2026-01-01"), "archived": .integer(0), "notes": .null,
                                 "created_at": .text("2026-01-01T00:00:00.000Z"), "updated_at": .text("2026-01-01T00:00:00.000Z")]
        func refusal(_ sections: [String: [TransferRow]]) async -> String? {
            do {
                _ = try await database.importData(sections, replace: false)
                return nil
            } catch let error as DomainError {
                #expect(error.kind == .invalidField)
                return error.message
            } catch {
                return "\(error)"
            }
        }
        var missing = goal
        missing["name"] = nil
        var wrongType = goal
        wrongType["target_amount"] = .integer(5000)
        var notNull = goal
        notNull["currency"] = .null
        var badAmount = goal
        badAmount["target_amount"] = .text("5,000")
        let allocation: TransferRow = ["asset_id": .text("9c1d7f2e-0000-4000-8000-0000000000aa"), "goal_id": goal["id"]!,
                                       "amount": .text("1"), "updated_at": .text("2026-01-01T00:00:00.000Z")]
        let cases: [([String: [TransferRow]], String)] = [
            (["goals": [[:]]], "goals[0]: 'created_at', 'currency', 'deadline', 'id', 'name', 'name_key', 'start_date', 'target_amount', 'updated_at' are missing"),
            (["goals": [goal, missing]], "goals[1]: 'name' is missing"),
            (["goals": [wrongType]], "goals[0].target_amount must be a string"),
            (["goals": [notNull]], "goals[0].currency must not be null"),
            (["goals": [badAmount]], "goals[0].target_amount"),
            (["goals": [goal], "allocations": [allocation]], "allocations[0].asset_id: asset 9c1d7f2e-0000-4000-8000-0000000000aa is not in the document"),
            (["wishes": []], "unknown section 'wishes'"),
        ]
        for (sections, expected) in cases {
            let message = await refusal(sections)
            #expect(message?.contains(expected) == true, "\(message ?? "imported"): expected \(expected)")
            #expect(try await database.isEmpty(), "nothing written")
        }
        #expect(await refusal(["goals": [goal]]) == nil)
    }
}
