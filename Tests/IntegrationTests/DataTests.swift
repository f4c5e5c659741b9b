import Foundation
import SavingsRPC
import Synchronization
import Testing

/// Backups, checks, export/import and CSV imports against the real daemon.
@Suite struct DataTests {
    /// A month closed with contributions, an executing one, rates and allocations.
    func history(_ daemon: DaemonProcess) throws {
        _ = try daemon.call("goal.create", ["name": "Emergency Fund", "currency": "EUR", "target_amount": "5000", "deadline": "2027-06-30"])
        _ = try daemon.call("goal.create", ["name": "Bike", "currency": "EUR", "target_amount": "1200", "deadline": "2027-03-31"])
        _ = try daemon.call("asset.create", ["name": "Wallet", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("rates.set", ["base": "BTC", "quote": "EUR", "rate": "50000"])
        _ = try daemon.call("tx.add", ["asset": "Wallet", "amount": "0.01", "date": "2026-10-15T10:00:00Z"])
        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "Bike", "amount": "0.004"])
        _ = try daemon.call("month.start")
        _ = try daemon.call("goal.contribute", ["goal": "Emergency Fund", "amount": "200"])
        _ = try daemon.call("goal.contribute", ["goal": "Bike", "amount": "75.5"])
        _ = try daemon.call("month.complete")
        _ = try daemon.call("plan.list", ["month": "2026-12"])
        _ = try daemon.call("plan.set_amount", ["goal": "Bike", "month": "2026-12", "amount": "150"])
    }

    /// A figure without the fields that depend on when it was asked (ages, uptimes).
    func timeless(_ value: JSONValue) -> JSONValue {
        switch value {
        case .object(let members):
            .object(members.filter { !$0.key.hasSuffix("age_seconds") && $0.key != "generated_at" }.mapValues(timeless))
        case .array(let items): .array(items.map(timeless))
        default: value
        }
    }

    func views(_ daemon: DaemonProcess) throws -> [JSONValue] {
        try [daemon.call("dashboard.get"), daemon.call("month.history"), daemon.call("goal.history", ["goal": "Emergency Fund"]),
             daemon.call("goal.history", ["goal": "Bike"]), daemon.call("goal.list"), daemon.call("allocation.history"),
             daemon.call("plan.list", ["month": "2026-12"])].map(timeless)
    }

    @Test func exportThenImportIntoAFreshDaemonReproducesEveryView() throws {
        let source = try DaemonProcess(at: "2026-11-10 12:00:00")
        try history(source)
        let inline = try source.call("data.export")
        #expect(inline["format"] == "savingsd-export")
        #expect(inline["version"] == 1)
        #expect(inline["execution_records"]?.arrayValue?.count == 1)
        // Contributions name their deposits by the ids tx.list shows, whatever keys the rows have.
        let transactionIDs = Set((inline["transactions"]?.arrayValue ?? []).compactMap { $0["id"]?.stringValue })
        let linked = (inline["contributions"]?.arrayValue ?? []).compactMap { $0["transaction_id"]?.stringValue }
        #expect(linked.count == 2 && linked.allSatisfy(transactionIDs.contains), "\(linked) in \(transactionIDs)")
        let path = source.directory + "/export.json"
        let written = try source.call("data.export", ["path": .string(path)])
        #expect(fileMode(path) == 0o600)
        #expect(written["counts"]?["goals"] == 2)
        #expect(try source.failure("data.export", ["path": .string(path)]).kind == "conflict", "an export never overwrites silently")

        // Later the same day: the restored history lies in the past, as it does for the source.
        let target = try DaemonProcess(at: "2026-11-10 12:05:00")
        let imported = try target.call("data.import", ["path": .string(path)])
        #expect(imported["counts"]?["transactions"] != nil)
        for (a, b) in zip(try views(target), try views(source)) where a != b {
            Issue.record("after import: \(JSONSerializer.serialize(a))\n!=\n\(JSONSerializer.serialize(b))")
        }
        #expect(try target.call("db.check")["ok"] == true)

        // A non-empty database is replaced only on request, after a backup.
        #expect(try target.failure("data.import", ["path": .string(path)]).kind == "conflict")
        _ = try target.call("goal.create", ["name": "Extra", "currency": "EUR", "target_amount": "10", "deadline": "2027-01-31"])
        let replaced = try target.call("data.import", ["path": .string(path), "replace": true])
        let backup = try #require(replaced["backup"]?.stringValue)
        #expect(FileManager.default.fileExists(atPath: backup))
        #expect(fileMode(backup) == 0o600)
        for (a, b) in zip(try views(target), try views(source)) where a != b {
            Issue.record("after replace: \(JSONSerializer.serialize(a))\n!=\n\(JSONSerializer.serialize(b))")
        }

        // The inline document and the file hold the same rows.
        let fileDocument = try JSONParser.parse(Array(try Data(contentsOf: URL(fileURLWithPath: path))))
        #expect(timeless(fileDocument["transactions"] ?? .null) == timeless(inline["transactions"] ?? .null))
    }

    @Test func aBrokenDocumentIsRefusedWithNothingWritten() throws {
        let source = try DaemonProcess(at: "2026-11-10 12:00:00")
        try history(source)
        let path = source.directory + "/export.json"
        _ = try source.call("data.export", ["path": .string(path)])
        let text = try String(contentsOfFile: path, encoding: .utf8)
        let target = try DaemonProcess()
        let cases: [(String, String)] = [
            (text.replacingOccurrences(of: "\"target_amount\":\"5000\"", with: "\"target_amount\":\"lots\""), "target_amount"),
            (text.replacingOccurrences(of: "\"format\":\"savingsd-export\"", with: "\"format\":\"other\""), "not a savingsd export"),
            (text.replacingOccurrences(of: "\"version\":1", with: "\"version\":9"), "version"),
            (String(text.dropLast(40)), "not a JSON document"),
        ]
        for (index, (broken, fragment)) in cases.enumerated() {
            let file = target.directory + "/broken-\(index).json"
            try broken.write(toFile: file, atomically: true, encoding: .utf8)
            let failure = try target.failure("data.import", ["path": .string(file)])
            #expect(failure.kind == "invalid_field" || failure.code == -32602, "\(failure)")
            #expect(failure.message.contains(fragment), "\(failure.message)")
        }
        // Rows pointing at goals the document lacks: the whole import rolls back.
        let orphan = text.replacingOccurrences(of: #""goals":\[[^\]]*\]"#, with: #""goals":[]"#, options: .regularExpression)
        let file = target.directory + "/orphan.json"
        try orphan.write(toFile: file, atomically: true, encoding: .utf8)
        #expect(orphan != text)
        #expect(try target.failure("data.import", ["path": .string(file)]).code == -32602)
        #expect(try target.call("goal.list")["goals"]?.arrayValue?.isEmpty == true, "nothing half-written")
        #expect(try target.call("data.export")["transactions"]?.arrayValue?.isEmpty == true)
    }

    @Test func backupsAreConsistentWhileWritersRun() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let socket = daemon.socketPath
        let writers = (0..<3).map { writer in
            Thread.detachNewThreadWithResult {
                let client = try RPCClient(socketPath: socket)
                for n in 0..<150 {
                    _ = try client.call("tx.add", ["asset": "Bank", "amount": "1", "external_id": .string("w\(writer)-\(n)")])
                }
            }
        }
        var backups: [String] = []
        for n in 0..<4 {
            let path = daemon.directory + "/backup-\(n).db"
            let info = try daemon.call("db.backup", ["path": .string(path)])
            #expect(info["bytes"]?.intValue ?? 0 > 0)
            #expect(fileMode(path) == 0o600)
            backups.append(path)
        }
        for writer in writers { try writer.value() }
        #expect(try daemon.failure("db.backup", ["path": .string(backups[0])]).kind == "conflict")
        _ = try daemon.call("db.backup", ["path": .string(backups[0]), "overwrite": true])
        #expect(try daemon.failure("db.backup", ["path": "relative.db"]).code == -32602)

        for path in backups {
            // Each copy opens as a database of its own and passes every check.
            let directory = try makeScratchDirectory()
            try FileManager.default.createDirectory(atPath: directory + "/db", withIntermediateDirectories: true)
            try FileManager.default.copyItem(atPath: path, toPath: directory + "/db/savings.db")
            let copy = try DaemonProcess(directory: directory)
            let check = try copy.call("db.check")
            #expect(check["ok"] == true, "\(check)")
            let balance = try copy.call("asset.get", ["asset": "Bank"])["balance"]?.stringValue ?? ""
            #expect(!balance.isEmpty)
        }
        let ctl = try runCtl(["--socket", daemon.socketPath, "check"])
        #expect(ctl.status == 0)
        #expect(ctl.stdout.contains("the database is sound"))
        let viaCtl = try ok(["--socket", daemon.socketPath], ["backup", daemon.directory + "/ctl.db"])
        #expect(viaCtl.contains("backup written"))
    }

    @Test func csvImportIsIdempotentLineNumberedAndAllOrNothing() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Trip", target: "1000", amount: "10")
        let file = daemon.directory + "/bank.csv"
        try """
            date,amount,note,external_id
            2026-01-05,100.50,"Salary, January",
            2026-01-06T09:30:00Z,-20,Groceries,
            2026-01-07,5,coffee,
            2026-01-07,5,coffee,
            2026-01-08,250,,bank-42

            """.write(toFile: file, atomically: true, encoding: .utf8)
        let first = try daemon.call("tx.import", ["asset": "Bank", "path": .string(file)])
        #expect(first["imported"] == 5, "\(first)")
        #expect(first["auto_allocated"] == 4, "deposits into an asset dedicated to one goal grow its allocation")
        let again = try daemon.call("tx.import", ["asset": "Bank", "path": .string(file)])
        #expect(again["imported"] == 0)
        #expect(again["already_present"] == 5, "the same file again inserts nothing, identical rows included")
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "350.50")
        let notes = try daemon.call("tx.list", ["asset": "Bank"])["transactions"]?.arrayValue?.compactMap { $0["note"]?.stringValue } ?? []
        #expect(notes.contains("Salary, January"))

        let bad = daemon.directory + "/bad.csv"
        try "date,amount\n2026-02-01,10\n2026-02-02,abc\n2026-13-01,5\n2026-02-03,7\n".write(toFile: bad, atomically: true, encoding: .utf8)
        let refused = try daemon.failure("tx.import", ["asset": "Bank", "path": .string(bad)])
        #expect(refused.message.contains("line 3"), "\(refused.message)")
        #expect(refused.message.contains("line 4"))
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "350.50", "nothing was written")
        let partial = try daemon.call("tx.import", ["asset": "Bank", "path": .string(bad), "partial": true])
        #expect(partial["imported"] == 2)
        #expect(partial["problems"]?.arrayValue?.compactMap { $0["line"]?.intValue } == [3, 4])
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "367.50")

        for (text, fragment) in [("when,amount\n2026-01-01,1\n", "unknown column"), ("", "empty"),
                                 ("date,amount\n\"2026-01-01,1\n", "quoted field"), ("date,amount\n2099-01-01,1\n", "in the future")] {
            let path = daemon.directory + "/odd.csv"
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            let failure = try daemon.failure("tx.import", ["asset": "Bank", "path": .string(path)])
            #expect(failure.message.contains(fragment), "\(failure.message)")
        }

        // savingsctl takes a path relative to where it runs.
        let relative = try runCtl(["--socket", daemon.socketPath, "tx", "import", "Bank", "bank.csv"], directory: daemon.directory)
        #expect(relative.status == 0, "\(relative.stderr)")
        #expect(relative.stdout.contains("0 imported, 5 already present"), "\(relative.stdout)")
    }
}

extension DataTests {
    @Test func longImportsReportProgressToCallersWhoAskForIt() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let file = daemon.directory + "/many.csv"
        var text = "date,amount\n"
        for n in 0..<25_000 { text += "2026-01-\(String(format: "%02d", n % 28 + 1)),\(n + 1)\n" }
        try text.write(toFile: file, atomically: true, encoding: .utf8)
        let client = try daemon.client()
        var notes: [JSONValue] = []
        let result = try client.call("tx.import", ["asset": "Bank", "path": .string(file), "progress": true]) { notes.append($0) }
        #expect(result["imported"] == 25_000)
        let phases = notes.compactMap { $0["params"]?["phase"]?.stringValue }
        #expect(phases.contains("importing"), "\(phases)")
        let done = notes.compactMap { $0["params"]?["done"]?.intValue }
        #expect(done == done.sorted() && done.last == 25_000, "\(done)")
        #expect(notes.allSatisfy { $0["method"] == "progress" && $0["id"] == nil })
        // Without the flag, nothing but the answer arrives.
        let quiet = try daemon.raw()
        try quiet.sendLine(#"{"jsonrpc":"2.0","id":7,"method":"tx.import","params":{"asset":"Bank","path":"\#(file)"}}"#)
        let answer = try JSONParser.parse(try #require(try quiet.readLine()))
        #expect(answer["id"] == 7)
        #expect(answer["result"]?["already_present"] == 25_000)
    }
}

extension Thread {
    /// Runs `body` on a new thread; `value()` waits for it and rethrows its error.
    static func detachNewThreadWithResult(_ body: @escaping @Sendable () throws -> Void) -> ThreadResult {
        let result = ThreadResult()
        Thread.detachNewThread {
            do { try body() } catch { result.error.withLock { $0 = "\(error)" } }
            result.done.signal()
        }
        return result
    }
}

final class ThreadResult: Sendable {
    let done = DispatchSemaphore(value: 0)
    let error = Mutex<String?>(nil)

    func value() throws {
        done.wait()
        if let error = error.withLock({ $0 }) { throw HarnessError(error) }
    }
}
