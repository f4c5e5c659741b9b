import Foundation
import SavingsRPC
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// The programs in examples/ run against a real daemon.
@Suite struct ExamplesTests {
    static let examples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("examples").path

    /// Runs a program to completion with the daemon's socket in the environment and the built
    /// savingsctl on PATH; its standard output and error together.
    func run(_ arguments: [String], socket: String, environment: [String: String] = [:]) throws -> (status: Int32, output: String) {
        var env = ["SAVINGSD_SOCKET": socket, "PATH": Binaries.directory + ":" + (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin")]
        env.merge(environment) { $1 }
        let result = try runCtl(arguments, environment: env, executable: "/usr/bin/env")
        return (result.status, result.stdout + result.stderr)
    }

    @Test func thePythonClientCallsBatchesAndSubscribes() throws {
        let daemon = try DaemonProcess()
        let client = Self.examples + "/savings_client.py"
        let ping = try run(["python3", client, "call", "daemon.ping"], socket: daemon.socketPath)
        #expect(ping.status == 0 && ping.output.contains("\"pong\": true"), "\(ping.output)")

        _ = try daemon.call("goal.create", ["name": "Bike", "currency": "EUR", "target_amount": "900", "deadline": "2030-01-01"])
        let batch = try run(["python3", client, "batch", "goal.list", "no.such.method"], socket: daemon.socketPath)
        #expect(batch.status == 0)
        #expect(batch.output.contains("goal.list: {\"goals\": [{"), "\(batch.output)")
        #expect(batch.output.contains("no.such.method: ") && batch.output.contains("-32601"), "\(batch.output)")

        let failed = try run(["python3", client, "call", "goal.get", #"{"goal": "Nope"}"#], socket: daemon.socketPath)
        #expect(failed.status != 0 && failed.output.contains("not_found"), "\(failed.output)")

        // Events: a subscriber in the background sees the write made after it subscribed.
        let directory = try makeScratchDirectory()
        let out = directory + "/events"
        _ = FileManager.default.createFile(atPath: out, contents: nil)
        let subscriber = Process()
        subscriber.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        subscriber.arguments = ["python3", "-u", client, "--socket", daemon.socketPath, "events", "data.changed"]
        subscriber.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
        try subscriber.run()
        defer { subscriber.terminate() }
        var seen = ""
        for attempt in 0..<100 where !seen.contains("goal.create") {
            if attempt % 10 == 0 {
                _ = try? daemon.call("goal.create", ["name": .string("Trip \(attempt)"), "currency": "EUR", "target_amount": "100", "deadline": "2030-01-01"])
            }
            usleep(100_000)
            seen = (try? String(contentsOfFile: out, encoding: .utf8)) ?? ""
        }
        let event = try #require(seen.split(separator: "\n").first)
        let parsed = try JSONParser.parse(String(event))
        #expect(parsed["topic"] == "data.changed")
        #expect(parsed["data"]?["method"] == "goal.create")
    }

    /// Files over the connection in a few lines of Python: an upload and a download.
    @Test func thePythonClientUploadsAndDownloads() throws {
        let daemon = try DaemonProcess()
        let client = Self.examples + "/savings_client.py"
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let directory = try makeScratchDirectory()
        let csv = directory + "/bank.csv"
        var text = "date,amount,note\n"
        for n in 0..<30_000 { text += "2026-0\(n % 9 + 1)-\(String(format: "%02d", n % 28 + 1)),\(n + 1).50,row \(n)\n" }
        try text.write(toFile: csv, atomically: true, encoding: .utf8)  // several chunks
        let upload = try run(["python3", client, "upload", "tx.import", csv, #"{"asset": "Bank"}"#], socket: daemon.socketPath)
        #expect(upload.status == 0 && upload.output.contains("\"imported\": 30000"), "\(upload.output)")

        let copy = directory + "/copy.db"
        let download = try run(["python3", client, "download", "db.backup", copy], socket: daemon.socketPath)
        #expect(download.status == 0 && download.output.contains("\"pages\""), "\(download.output)")
        let check = try runCtl([copy, "PRAGMA integrity_check; SELECT COUNT(*) FROM asset_transaction;"], executable: "/usr/bin/sqlite3")
        #expect(check.stdout == "ok\n30000\n", "\(check.stdout) \(check.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).sorted() == ["bank.csv", "copy.db"])

        // A refusal comes before any byte is sent, and the client says so.
        let refused = try run(["python3", client, "upload", "tx.import", csv, #"{"asset": "Nope"}"#], socket: daemon.socketPath)
        #expect(refused.status != 0 && refused.output.contains("not_found"), "\(refused.output)")
    }

    @Test func theStatusBarScriptPrintsThisMonth() throws {
        let daemon = try DaemonProcess()
        let script = Self.examples + "/waybar-savings.sh"
        let idle = try run(["sh", script], socket: daemon.socketPath)
        #expect(idle.status == 0)
        #expect(try JSONParser.parse(idle.output.trimmingCharacters(in: .whitespacesAndNewlines))["class"] == "idle", "\(idle.output)")

        _ = try daemon.call("goal.create", ["name": "Bike", "currency": "EUR", "target_amount": "1200", "deadline": "2030-01-01"])
        _ = try daemon.call("month.start")
        let bar = try run(["sh", script], socket: daemon.socketPath)
        let shown = try JSONParser.parse(bar.output.trimmingCharacters(in: .whitespacesAndNewlines))
        #expect(shown["class"] == "saving", "\(bar.output)")
        #expect(shown["text"]?.stringValue?.contains("0%") == true, "\(bar.output)")
        #expect(shown["tooltip"]?.stringValue?.contains("Bike") == true, "\(bar.output)")
        let plain = try run(["sh", script, "--plain"], socket: daemon.socketPath)
        #expect(plain.output.hasSuffix("EUR)\n"), "\(plain.output)")
    }

    @Test func theRatesScriptWritesWhatTheFileProviderReads() throws {
        let stub = try HTTPStub { request in
            #expect(request.query["ids"] == "bitcoin,ethereum")
            return .json(#"{"bitcoin":{"eur":91234.56789,"usd":98000.1,"last_updated_at":1795000000},"ethereum":{"eur":3100.5,"usd":3300,"last_updated_at":1795000000}}"#)
        }
        let directory = try makeScratchDirectory()
        let output = directory + "/rates.json"
        let fetched = try run(["sh", Self.examples + "/fetch-rates.sh", output], socket: "/nonexistent",
                              environment: ["COINGECKO_URL": stub.baseURL])
        #expect(fetched.status == 0, "\(fetched.output)")

        let daemon = try DaemonProcess(environment: ["SAVINGSD_RATES_PROVIDER": "file", "SAVINGSD_RATES_FILE": output])
        #expect(try daemon.call("rates.refresh")["status"] == "updated")
        let converted = try daemon.call("rates.convert", ["amount": "2", "from": "BTC", "to": "EUR"])
        #expect(converted["rate"] == "91234.56789", "the price arrives digit for digit: \(converted)")
    }
}
