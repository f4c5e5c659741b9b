import Foundation
import NIOConcurrencyHelpers
import SavingsRPC
import Testing

/// Rules files, CSV files and paths from a local user allowed on the socket, as an attacker
/// would send them: each is refused clearly or handled in bounded time, the daemon stays up,
/// and another client's writes are answered meanwhile.
@Suite(.serialized) struct HostileImportTests {
    static func daemonWithAssets() throws -> DaemonProcess {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Konto", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("asset.create", ["name": "Cash", "currency": "EUR", "kind": "fiat"])
        return daemon
    }

    /// Runs `method` in the background while another client adds to Cash every 50 ms; the
    /// result (or error), how long it took, and the slowest write.
    static func underWrites(_ daemon: DaemonProcess, _ method: String, _ params: [String: JSONValue], attack: String = #function)
        async throws -> (result: Result<JSONValue, any Error>, seconds: Double, slowestWrite: Double) {
        let held = Unchecked(daemon)
        return try await onThread { try blockingUnderWrites(held.value, method, params, attack: attack) }
    }

    static func blockingUnderWrites(_ daemon: DaemonProcess, _ method: String, _ params: [String: JSONValue], attack: String)
        throws -> (result: Result<JSONValue, any Error>, seconds: Double, slowestWrite: Double) {
        let outcome = NIOLockedValueBox<Result<JSONValue, any Error>?>(nil)
        let started = Date()
        let socket = daemon.socketPath
        DispatchQueue.global().async {
            let result = Result { try RPCClient(socketPath: socket).call(method, params) }
            outcome.withLockedValue { $0 = result }
        }
        var slowest = 0.0
        while outcome.withLockedValue({ $0 }) == nil, Date().timeIntervalSince(started) < 120 {
            let write = Date()
            _ = try daemon.call("tx.add", ["asset": "Cash", "amount": "1"])
            slowest = max(slowest, Date().timeIntervalSince(write))
            usleep(50_000)
        }
        guard let result = outcome.withLockedValue({ $0 }) else { throw HarnessError("\(method) did not end within 120 s") }
        let seconds = Date().timeIntervalSince(started)
        print("[attack] \(attack): \(method) ended in \(String(format: "%.2f", seconds)) s, slowest tx.add meanwhile "
              + "\(Int(slowest * 1000)) ms, daemon peak RSS \(daemon.peakKilobytes / 1024) MB")
        return (result, seconds, slowest)
    }

    /// 62 KB of `[a.a.a…]` or `a.a.…a = 1` overflowed toml++'s stack (SIGSEGV): now refused
    /// before the parser, with the line.
    @Test(arguments: ["header", "dotted", "arrays"])
    func deeplyNestedRulesAreRefusedAndTheDaemonLives(kind: String) throws {
        let daemon = try Self.daemonWithAssets()
        let parts = Array(repeating: "a", count: 31_000).joined(separator: ".")
        let text = switch kind {
        case "header": "[\(parts)]\n"
        case "dotted": "\(parts) = 1\n"
        default: "x = " + String(repeating: "[", count: 31_000) + String(repeating: "]", count: 31_000) + "\n"
        }
        #expect(text.utf8.count < 64 * 1024)
        let csv = try makeScratchDirectory() + "/rows.csv"
        try "date,amount\n2026-01-01,1\n".write(toFile: csv, atomically: true, encoding: .utf8)
        let failure = try daemon.failure("tx.import", ["asset": "Konto", "path": .string(csv), "rules_text": .string(text)])
        #expect(failure.code == -32602)
        #expect(failure.message.contains("line 1: nested deeper than 16 levels"), "\(failure.message)")
        #expect(try daemon.call("daemon.ping") != .null)
    }

    /// `(a+)+$` against notes of 27 `a`s and a `!` took ICU 12-15 s inside the import's write
    /// (another client's tx.add timed out); `(.*a){25}` 62 s for one row. Matched without
    /// backtracking, before the write, both take milliseconds.
    @Test func catastrophicPatternsRunInLinearTimeOutsideTheWrite() async throws {
        let daemon = try Self.daemonWithAssets()
        let directory = try makeScratchDirectory()
        let note = String(repeating: "a", count: 27) + "!"
        let long = String(repeating: "a", count: 59) + "!"
        let rows = (1...3).map { "2026-01-0\($0),10,\(note)" } + ["2026-01-04,5,\(long)"]
        try ("date,amount,note\n" + rows.joined(separator: "\n") + "\n").write(toFile: directory + "/notes.csv", atomically: true, encoding: .utf8)
        let rules = """
            [columns]
            note = "note"
            [[when]]
            column = "note"
            matches = "(a+)+$"
            skip = true
            [[when]]
            column = "note"
            matches = "(.*a){25}"
            note = "long {note}"
            """
        let (result, seconds, slowest) = try await Self.underWrites(daemon, "tx.import", ["asset": "Konto", "path": .string(directory + "/notes.csv"),
                                                                                    "rules_text": .string(rules)])
        let imported = try result.get()
        // `(a+)+$` never matches (each note ends in '!'); `(.*a){25}` matches every note.
        #expect(imported["imported"] == 4, "\(JSONSerializer.serialize(imported))")
        #expect(seconds < 3, "took \(seconds) s")
        #expect(slowest < 1, "slowest write \(slowest) s")
        let notes = try daemon.call("tx.list", ["asset": "Konto"])["transactions"]?.arrayValue?.compactMap { $0["note"]?.stringValue } ?? []
        #expect(notes.allSatisfy { $0.hasPrefix("long ") }, "\(notes)")
    }

    /// A pattern and field whose match would pass the step budget refuse the file, naming the rule.
    @Test func aPatternPastItsBudgetRefusesTheFileNamingTheRule() async throws {
        let daemon = try Self.daemonWithAssets()
        let directory = try makeScratchDirectory()
        try ("date,amount,note\n2026-01-01,10," + String(repeating: "a", count: 60_000) + "\n")
            .write(toFile: directory + "/long.csv", atomically: true, encoding: .utf8)
        let rules = "[columns]\nnote = \"note\"\n[[when]]\ncolumn = \"note\"\nmatches = \"(.*a){200}!\"\nskip = true\n"
        let (result, seconds, slowest) = try await Self.underWrites(daemon, "tx.import", ["asset": "Konto", "path": .string(directory + "/long.csv"),
                                                                                    "rules_text": .string(rules)])
        guard case .failure(RPCClient.CallError.remote(let failure)) = result else { Issue.record("imported: \(result)"); return }
        #expect(failure.message.contains("when[1].matches '(.*a){200}!' takes more than 2000000 steps on one field (line 2)"), "\(failure.message)")
        #expect(seconds < 5)
        #expect(slowest < 1)
        #expect(try daemon.call("tx.list", ["asset": "Konto"])["transactions"]?.arrayValue?.isEmpty == true)
    }

    /// A `skip` pattern that matches no line searches a bounded number of lines, not the file.
    @Test func aHeaderSearchIsBounded() throws {
        let daemon = try Self.daemonWithAssets()
        let path = try makeScratchDirectory() + "/preamble.csv"
        try (String(repeating: "no header here\n", count: 12_000) + "date,amount\n2026-01-01,1\n").write(toFile: path, atomically: true, encoding: .utf8)
        let failure = try daemon.failure("tx.import", ["asset": "Konto", "path": .string(path), "rules_text": "skip = \"^date,amount$\"\n"])
        #expect(failure.message.contains("skip: none of the first 10001 lines matches"), "\(failure.message)")
    }

    /// A NUL byte in a field refuses the file; nothing is stored with it.
    @Test func aNulByteRefusesTheFile() throws {
        let daemon = try Self.daemonWithAssets()
        let path = try makeScratchDirectory() + "/nul.csv"
        try Data("date,amount,note\n2026-01-01,10,ok\n2026-01-02,5,bad\0note\n".utf8).write(to: URL(fileURLWithPath: path))
        let failure = try daemon.failure("tx.import", ["asset": "Konto", "path": .string(path)])
        #expect(failure.message.contains("line 3: a field holds a NUL byte"), "\(failure.message)")
        #expect(try daemon.call("tx.list", ["asset": "Konto"])["transactions"]?.arrayValue?.isEmpty == true)
    }

    /// Another user allowed on the socket may not make the daemon open files with its rights:
    /// not to read one (the first line came back in an error), not to write or replace one.
    @Test(.enabled(if: AccessTests.canSwitchUser, "needs root, setpriv and a 'users' group"))
    func anotherUserCannotNameFilesOnTheDaemonsSide() throws {
        let daemon = try sharedDaemon(["SAVINGSD_ALLOW_UIDS": "65534"])
        _ = try daemon.call("asset.create", ["name": "Konto", "currency": "EUR", "kind": "fiat"])
        let secret = daemon.directory + "/secret.key"
        try "CG-SECRET-KEY-1234\n".write(toFile: secret, atomically: true, encoding: .utf8)
        chmod(secret, 0o600)
        let rules = daemon.directory + "/rules.toml"
        try "[columns]\ndate = \"date\"\n".write(toFile: rules, atomically: true, encoding: .utf8)
        let target = daemon.directory + "/replaced"
        let calls: [(String, String)] = [
            ("tx.import", #"{"asset":"Konto","path":"\#(secret)"}"#),
            ("tx.import", #"{"asset":"Konto","path":"\#(secret)","rules":"\#(rules)"}"#),
            ("data.import", #"{"path":"\#(secret)"}"#),
            ("data.legacy_import", #"{"path":"\#(secret)"}"#),
            ("data.export", #"{"path":"\#(target)","overwrite":true}"#),
            ("db.backup", #"{"path":"\#(target)"}"#),
        ]
        for (method, params) in calls {
            let run = try runCtlAsNobody(groups: [100], ["--socket", daemon.socketPath, "call", method, params])
            #expect(run.status == 1, "\(method): \(run.stdout) \(run.stderr)")
            #expect(run.stderr.contains("permission_denied") || run.stdout.contains("permission_denied"), "\(method): \(run.stderr)")
            #expect(!run.stderr.contains("CG-SECRET") && !run.stdout.contains("CG-SECRET"), "\(method) leaked the file")
        }
        #expect(!FileManager.default.fileExists(atPath: target))
        // The daemon's own user still may.
        let own = try daemon.call("data.export", ["path": .string(target)])
        #expect(own["path"] == .string(target))
    }
}

/// A value handed to another thread by a test that owns it and waits for that thread.
struct Unchecked<T>: @unchecked Sendable {
    let value: T
    init(_ value: T) { self.value = value }
}

/// Runs `body` on a thread of its own and waits for it without holding one of the test runner's
/// threads (there are as many as cores): an attack test that waits 30 s on one starved the
/// other suites' asynchronous tests.
func onThread<T: Sendable>(_ body: @escaping @Sendable () throws -> T) async throws -> T {
    try await withCheckedThrowingContinuation { continuation in
        Thread { continuation.resume(with: Result { try body() }) }.start()
    }
}
