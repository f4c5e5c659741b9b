import Foundation
import SavingsRPC
import Testing

@Suite struct LegacyImportIntegrationTests {
    static let document = #"""
    {"format":"cryptosavings-legacy","version":1,"exported_at":"2026-11-01T09:00:00Z",
     "goals":[
       {"id":"G1","name":"House","currency":"EUR","target_amount":10000,"deadline":"2027-12-31","start_date":"2026-01-01","created_at":"2026-01-01T10:00:00Z"},
       {"id":"G2","name":"Bike","currency":"EUR","target_amount":"1200.00","deadline":"2027-06-30","start_date":"2026-01-01","created_at":"2026-01-02T10:00:00Z"},
       {"id":"G3","name":"Trip","currency":"EUR","target_amount":3000,"deadline":"2027-06-30","created_at":"2026-01-03T10:00:00Z"}],
     "assets":[
       {"id":"A1","name":"Cold wallet","currency":"BTC","created_at":"2026-01-05T00:00:00Z","balance":1.0},
       {"id":"A2","name":"Bank","currency":"EUR","created_at":"2026-01-05T00:00:00Z",
        "transactions":[{"id":"T1","amount":1500,"date":"2026-02-01T00:00:00Z","source":"manual"},
                        {"id":"T2","amount":500.5,"date":"2026-03-01T00:00:00Z","source":"import"}]}],
     "allocations":[
       {"asset_id":"A1","goal_id":"G1","percentage":0.6},{"asset_id":"A1","goal_id":"G2","percentage":0.4},
       {"asset_id":"A1","goal_id":"G3","percentage":0.2},{"asset_id":"A2","goal_id":"G2","percentage":0.75}],
     "monthly_plans":[
       {"id":"P1","goal_id":"G1","month_label":"2026-09","required_monthly":500,"custom_amount":null,"is_protected":false,"is_skipped":false,"state":"completed","created_date":"2026-09-01T00:00:00Z","last_modified_date":"2026-09-01T00:00:00Z","execution_record_id":"E1"},
       {"id":"P2","goal_id":"G1","month_label":"","required_monthly":500,"custom_amount":650,"is_protected":false,"is_skipped":false,"state":"completed","created_date":"2026-09-02T00:00:00Z","last_modified_date":"2026-09-05T00:00:00Z","execution_record_id":"E1"},
       {"id":"P3","goal_id":"G2","required_monthly":90,"custom_amount":null,"is_protected":true,"is_skipped":false,"state":"completed","created_date":"2026-09-01T00:00:00Z","last_modified_date":null,"execution_record_id":"E1"},
       {"id":"P4","goal_id":"G9","month_label":"2026-09","required_monthly":10,"custom_amount":null,"is_protected":false,"is_skipped":false,"state":"draft","created_date":null,"last_modified_date":null,"execution_record_id":null}],
     "contributions":[
       {"id":"C1","goal_id":"G1","asset_id":"A2","amount":400,"date":"2026-09-10T00:00:00Z","month_label":"2026-09","currency_code":"EUR","source_type":"manual","plan_id":"P1"},
       {"id":"C2","goal_id":"G2","asset_id":"A2","amount":90,"date":"2026-09-12T00:00:00Z","month_label":null,"currency_code":"EUR","source_type":"manual","plan_id":null},
       {"id":"C3","goal_id":"G2","asset_id":"A2","amount":40,"date":"2026-06-12T00:00:00Z","currency_code":"EUR","source_type":"manual","plan_id":null},
       {"id":"C4","goal_id":null,"asset_id":"A2","amount":5,"date":"2026-09-13T00:00:00Z","currency_code":"EUR","source_type":"manual","plan_id":null}],
     "execution_records":[{"id":"E1","month_label":"2026-09","status":"closed","started_at":"2026-09-01T08:00:00Z","completed_at":"2026-09-30T20:00:00Z"}]}
    """#

    @Test func theEarlierAppsDataArrivesOnceWithItsHistory() throws {
        let daemon = try DaemonProcess(at: "2026-11-15 12:00:00")
        let path = daemon.directory + "/legacy.json"
        try Self.document.write(toFile: path, atomically: true, encoding: .utf8)

        let dry = try daemon.call("data.legacy_import", ["path": .string(path), "dry_run": true])
        #expect(dry["dry_run"] == true)
        #expect(try daemon.call("goal.list")["goals"]?.arrayValue?.isEmpty == true, "a dry run writes nothing")

        let report = try daemon.call("data.legacy_import", ["path": .string(path)])
        #expect(report["inserted"]?["goals"] == 3, "\(report)")
        #expect(report["warnings"]?.arrayValue?.contains { $0.stringValue?.contains("Cold wallet") == true } == true,
                "the over-allocated asset is named")
        let steps = Dictionary(uniqueKeysWithValues: (report["steps"]?.arrayValue ?? []).map { ($0["name"]?.stringValue ?? "", $0["counts"] ?? .null) })
        #expect(steps["duplicate plans"]?["merged"] == 1)
        #expect(steps["duplicate plans"]?["orphaned_archived"] == 1)
        #expect(steps["contribution links"]?["created_plan"] == 1)

        // Fixed allocations from percentages: 1 BTC at 60/40/20 normalised; 2000.50 EUR at 75 %.
        let wallet = try daemon.call("asset.get", ["asset": "Cold wallet"])
        #expect(wallet["balance"] == "1.00000000", "an asset with only a balance gets one opening transaction")
        let amounts = Dictionary(uniqueKeysWithValues: (wallet["allocations"]?.arrayValue ?? []).map { ($0["goal_name"]?.stringValue ?? "", $0["amount"]?.stringValue ?? "") })
        #expect(amounts == ["House": "0.50000000", "Bike": "0.33333333", "Trip": "0.16666666"])
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["allocations"]?.arrayValue?.first?["amount"] == "1500.37")

        // The closed month is history: frozen with the merged plan's override and the recorded contributions.
        let september = try #require(try daemon.call("month.history")["months"]?.arrayValue?.first)
        #expect(september["month"] == "2026-09")
        let lines = Dictionary(uniqueKeysWithValues: (september["goals"]?.arrayValue ?? []).map { ($0["goal_name"]?.stringValue ?? "", $0) })
        #expect(lines["House"]?["planned"] == "650.00")
        #expect(lines["House"]?["contributed"] == "400.00")
        #expect(lines["Bike"]?["contributed"] == "90.00")
        let bike = try daemon.call("goal.history", ["goal": "Bike", "from": "2026-06", "to": "2026-09"])["months"]?.arrayValue ?? []
        #expect(bike.map { $0["contributed"] } == ["40.00", "0.00", "0.00", "90.00"], "legacy contributions shown for the months before the import")
        #expect(try daemon.call("db.check")["ok"] == true)

        // The same document again changes nothing.
        let before = try daemon.call("data.export")
        let again = try daemon.call("data.legacy_import", ["path": .string(path)])
        #expect(again["already_imported"] == true)
        var after = try daemon.call("data.export")
        if case .object(var members) = after, case .object(let old) = before {
            members["exported_at"] = old["exported_at"]
            after = .object(members)
        }
        #expect(after == before)
        let ctl = try ok(["--socket", daemon.socketPath], ["legacy-import", path])
        #expect(ctl.contains("imported before"))
    }

    @Test func malformedLegacyDocumentsAreRefusedWithNothingWritten() throws {
        let daemon = try DaemonProcess(at: "2026-11-15 12:00:00")
        let cases: [(String, String, String)] = [
            (#""goal_id":"G3","percentage":0.2"#, #""goal_id":"G404","percentage":0.2"#, "unknown goal_id"),
            (#""goal_id":"G3","percentage":0.2"#, #""goal_id":"G3","percentage":-0.2"#, "negative"),
            (#""deadline":"2027-12-31""#, #""deadline":"next year""#, "not a date"),
            (#""plan_id":"P1""#, #""plan_id":"P77""#, "unknown plan_id"),
            (#""format":"cryptosavings-legacy""#, #""format":"other""#, "not an export"),
        ]
        for (index, (from, to, fragment)) in cases.enumerated() {
            let path = daemon.directory + "/bad-\(index).json"
            let text = Self.document.replacingOccurrences(of: from, with: to)
            #expect(text != Self.document)
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let failure = try daemon.failure("data.legacy_import", ["path": .string(path)])
            #expect(failure.message.contains(fragment), "\(failure.message)")
        }
        #expect(try daemon.call("goal.list")["goals"]?.arrayValue?.isEmpty == true)
        #expect(try daemon.call("asset.list")["assets"]?.arrayValue?.isEmpty == true)
    }

    /// A document sent over the connection is the `upload` parameter's: its problems say so,
    /// never `path` (which the caller did not give).
    @Test func anUploadsProblemsNameTheUploadField() throws {
        let daemon = try DaemonProcess(at: "2026-11-15 12:00:00")
        let cases: [(String, String)] = [
            ("{not json", "not a JSON document"),
            (Self.document.replacingOccurrences(of: #""format":"cryptosavings-legacy""#, with: #""format":"other""#), "not an export"),
            (Self.document.replacingOccurrences(of: #""version":1"#, with: #""version":2"#), "version must be 1"),
            (Self.document.replacingOccurrences(of: #""deadline":"2027-12-31""#, with: #""deadline":"next year""#), "goals[0].deadline"),
            (Self.document.replacingOccurrences(of: #""goal_id":"G3","percentage":0.2"#, with: #""goal_id":"G404","percentage":0.2"#), "G404"),
        ]
        for (text, fragment) in cases {
            let bytes = Array(text.utf8)
            var offset = 0
            do {
                _ = try daemon.client().upload("data.legacy_import", [:], size: bytes.count, read: { maxBytes in
                    let end = min(bytes.count, offset + maxBytes)
                    defer { offset = end }
                    return Array(bytes[offset..<end])
                })
                Issue.record("imported: \(fragment)")
            } catch RPCClient.CallError.remote(let error) {
                #expect(error.data?["param"] == "upload", "\(fragment): \(error)")
                #expect(error.message.hasPrefix("Invalid params: upload: "), "\(error.message)")
                #expect(!error.message.contains("path"), "\(error.message)")
                #expect(error.message.contains(fragment), "\(error.message)")
            }
        }
        // By path, the path is the field, and the file is named.
        let path = daemon.directory + "/broken.json"
        try "{not json".write(toFile: path, atomically: true, encoding: .utf8)
        let byPath = try daemon.failure("data.legacy_import", ["path": .string(path)])
        #expect(byPath.data?["param"] == "path" && byPath.message.contains(path), "\(byPath.message)")
        #expect(try daemon.call("goal.list")["goals"]?.arrayValue?.isEmpty == true)
    }
}
