import Foundation
import SavingsRPC
import Testing

/// `data.import` of hostile or broken documents: every row checked before anything is written,
/// each problem named by the field that brought the file, the section, the row and the key;
/// memory flat whatever the document holds.
@Suite struct DocumentImportTests {
    /// Sends `bytes` to `data.import` as an upload: the result, or the daemon's error. `reads`
    /// counts the times the client was asked for bytes to send.
    static func upload(_ daemon: DaemonProcess, _ bytes: [UInt8], _ params: [String: JSONValue] = [:],
                       reads: Box<Int>? = nil) throws -> Result<JSONValue, RPCError> {
        try upload(socket: daemon.socketPath, bytes, params, reads: reads)
    }

    static func upload(socket: String, _ bytes: [UInt8], _ params: [String: JSONValue] = [:],
                       reads: Box<Int>? = nil) throws -> Result<JSONValue, RPCError> {
        let client = try RPCClient(socketPath: socket)
        var offset = 0
        do {
            let result = try client.upload("data.import", params, size: bytes.count, read: { maxBytes in
                reads?.value = (reads?.value ?? 0) + 1
                let end = min(bytes.count, offset + maxBytes)
                defer { offset = end }
                return Array(bytes[offset..<end])
            }, timeoutMilliseconds: 60_000)
            AnswerLog.record("data.import", result)
            return .success(result)
        } catch RPCClient.CallError.remote(let error) {
            return .failure(error)
        }
    }

    static let header = #"{"format":"savingsd-export","version":1,"schema":"x","exported_at":"2026-01-01T00:00:00.000Z""#

    /// A document of the header and `sections` (JSON text of each section's array).
    static func document(_ sections: [(String, String)]) -> [UInt8] {
        Array((header + sections.map { ",\"\($0.0)\":\($0.1)" }.joined() + "}").utf8)
    }

    /// One goal and one asset as an export has them, and an allocation of the one to the other.
    static func rows() throws -> (goal: JSONValue, asset: JSONValue, allocation: JSONValue) {
        let source = try DaemonProcess()
        _ = try source.call("goal.create", ["name": "House", "currency": "EUR", "target_amount": "5000", "deadline": "2030-01-31"])
        _ = try source.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        _ = try source.call("tx.add", ["asset": "Bank", "amount": "100"])
        _ = try source.call("allocation.set", ["asset": "Bank", "goal": "House", "amount": "40"])
        let export = try source.call("data.export")
        return (try #require(export["goals"]?.arrayValue?.first), try #require(export["assets"]?.arrayValue?.first),
                try #require(export["allocations"]?.arrayValue?.first))
    }

    static func with(_ row: JSONValue, _ key: String, _ value: JSONValue?) -> JSONValue {
        var members = row.objectValue ?? [:]
        members[key] = value
        return .object(members)
    }

    static func text(_ value: JSONValue) -> String { JSONSerializer.serialize(value) }

    @Test func everyRowIsCheckedAndAProblemNamesTheFieldSectionRowAndKeyWithNothingWritten() throws {
        let (goal, asset, allocation) = try Self.rows()
        let goals = "[\(Self.text(goal))]", assets = "[\(Self.text(asset))]"
        let cases: [(String, [(String, String)], [String])] = [
            ("an empty row", [("goals", "[{}]")], ["goals[0]", "'name'", "'target_amount'", "missing"]),
            ("a missing key in a later row", [("goals", "[\(Self.text(goal)),\(Self.text(Self.with(Self.with(goal, "id", "9c1d7f2e-0000-4000-8000-000000000001"), "currency", nil)))]")],
             ["goals[1]", "'currency' is missing"]),
            ("a number where an amount string goes", [("goals", "[\(Self.text(Self.with(goal, "target_amount", .number("5000"))))]")],
             ["goals[0].target_amount", "must be a string"]),
            ("a decimal that is not exact text", [("goals", "[\(Self.text(Self.with(goal, "target_amount", "5,000.00")))]")],
             ["goals[0].target_amount"]),
            ("a fraction where a whole number goes", [("goals", "[\(Self.text(Self.with(goal, "archived", .number("0.5"))))]")],
             ["goals[0]", "0.5"]),
            ("a nested value", [("goals", "[\(Self.text(Self.with(goal, "notes", ["a": 1])))]")], ["goals[0]", "nested"]),
            ("a row that is not an object", [("goals", "[1]")], ["goals[0] must be an object"]),
            ("an unknown field", [("goals", "[\(Self.text(Self.with(goal, "colour", "red")))]")], ["goals[0]", "'colour'"]),
            ("an unknown section", [("goals", goals), ("wishes", "[]")], ["unknown section 'wishes'"]),
            ("a section that is not an array", [("goals", "{}")], ["goals must be an array"]),
            ("an id that is not one", [("goals", "[\(Self.text(Self.with(goal, "id", "42")))]")], ["goals[0].id"]),
            ("a reference to a goal the document lacks", [("goals", goals), ("assets", assets),
                                                           ("allocations", "[\(Self.text(Self.with(allocation, "goal_id", "9c1d7f2e-0000-4000-8000-00000000dead")))]")],
             ["allocations[0].goal_id", "9c1d7f2e-0000-4000-8000-00000000dead", "not in the document"]),
            ("a transaction of an asset the document lacks", [("goals", goals), ("transactions",
                #"[{"id":"9c1d7f2e-0000-4000-8000-000000000002","asset_id":"9c1d7f2e-0000-4000-8000-00000000beef","amount":"1","date":"2026-01-01T00:00:00.000Z","source":"manual","note":null,"external_id":null,"created_at":"2026-01-01T00:00:00.000Z"}]"#)],
             ["transactions[0]", "9c1d7f2e-0000-4000-8000-00000000beef", "not in the document"]),
        ]
        let daemon = try DaemonProcess()
        for (what, sections, fragments) in cases {
            let outcome = try Self.upload(daemon, Self.document(sections))
            guard case .failure(let error) = outcome else {
                Issue.record("\(what): imported")
                continue
            }
            #expect(error.code == -32602, "\(what): \(error)")
            #expect(error.data?["param"] == "upload", "\(what): the upload is the field at fault: \(error)")
            for fragment in fragments { #expect(error.message.contains(fragment), "\(what): '\(fragment)' in \(error.message)") }
            #expect(!error.message.contains("storage_error") && error.kind != "storage_error", "\(what)")
            #expect(try daemon.call("goal.list")["goals"]?.arrayValue?.isEmpty == true, "\(what): nothing written")
            #expect(try daemon.call("asset.list")["assets"]?.arrayValue?.isEmpty == true, "\(what): nothing written")
        }
        // A file on the daemon's side is named by its path.
        let path = daemon.directory + "/empty-goal.json"
        try Data(Self.document([("goals", "[{}]")])).write(to: URL(fileURLWithPath: path))
        let byPath = try daemon.failure("data.import", ["path": .string(path)])
        #expect(byPath.data?["param"] == "path")
        #expect(byPath.message.contains(path) && byPath.message.contains("goals[0]"), "\(byPath.message)")
        // And the good rows go in.
        let good = try Self.upload(daemon, Self.document([("goals", goals), ("assets", assets), ("allocations", "[\(Self.text(allocation))]")]))
        #expect(try good.get()["counts"]?["allocations"] == 1)
    }

    @Test func aDatabaseHoldingDataIsRefusedBeforeTheUploadIsSent() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("goal.create", ["name": "Bike", "currency": "EUR", "target_amount": "900", "deadline": "2030-01-31"])
        let reads = Box<Int>()
        let outcome = try Self.upload(daemon, Self.document([("goals", "[]")]), reads: reads)
        guard case .failure(let error) = outcome else { throw HarnessError("imported into a database holding data") }
        #expect(error.kind == "conflict", "\(error)")
        #expect(reads.value == nil, "refused before a byte was asked for")
        // With replace, the upload is taken (and its empty document replaces the data, after a backup).
        let replaced = try Self.upload(daemon, Self.document([("goals", "[]")]), ["replace": true])
        #expect(try replaced.get()["backup"] != nil)
    }

    /// Peak memory while `work` runs, above what the daemon held before (kB).
    static func peakGrowth(_ daemon: DaemonProcess, _ work: () throws -> Void) throws -> Int {
        try? waitUntil(timeout: 10) { daemon.rssKilobytes < 30_000 }
        // Resets VmHWM to the present RSS.
        try "5".write(toFile: "/proc/\(daemon.pid)/clear_refs", atomically: false, encoding: .utf8)
        let before = daemon.rssKilobytes
        try work()
        let status = try String(contentsOfFile: "/proc/\(daemon.pid)/status", encoding: .utf8)
        let peak = status.split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
        return peak - before
    }

    /// A document of nothing but empty rows: parsed whole into a tree it took some 55 times
    /// its size (4 MB: about 220 MB; 20 uploads of 1 MiB at once: 330 MB and more).
    static func emptyRows(bytes: Int) -> [UInt8] {
        let head = Array((header + #","goals":["#).utf8)
        let count = (bytes - head.count - 2) / 3
        var document = head
        document.reserveCapacity(bytes)
        for index in 0..<count { document += index == 0 ? Array("{}".utf8) : Array(",{}".utf8) }
        return document + Array("]}".utf8)
    }

    /// Half a minute of uploads: waited for on a thread of its own (`onThread`), not on one of
    /// the test runner's; the expectations are checked back here.
    @Test func memoryStaysFlatWhateverADocumentHolds() async throws {
        let measured = try await onThread { try Self.measureMemoryOfDocuments() }
        #expect(measured.refusal.contains("goals[0]"), "\(measured.refusal)")
        #expect(measured.one < 80_000, "one 4 MB document grew the daemon by \(measured.one) kB")
        #expect(measured.together < 80_000, "20 uploads of 1 MiB at once grew the daemon by \(measured.together) kB")
        #expect(measured.alive)
    }

    static func measureMemoryOfDocuments() throws -> (refusal: String, one: Int, together: Int, alive: Bool) {
        let daemon = try DaemonProcess()
        let one = Self.emptyRows(bytes: 4 << 20)
        var refusal = ""
        let growth = try Self.peakGrowth(daemon) {
            guard case .failure(let error) = try Self.upload(daemon, one) else { throw HarnessError("imported") }
            refusal = error.message
        }
        let small = Self.emptyRows(bytes: 1 << 20)
        let socket = daemon.socketPath
        let together = try Self.peakGrowth(daemon) {
            let threads = (0..<20).map { _ in
                Thread.detachNewThreadWithResult {
                    _ = try Self.upload(socket: socket, small)
                }
            }
            for thread in threads { try thread.value() }
        }
        return (refusal, growth, together, try daemon.call("daemon.ping")["pong"] == true)
    }
}
