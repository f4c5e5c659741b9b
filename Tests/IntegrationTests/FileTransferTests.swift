import Foundation
import SavingsRPC
import Synchronization
import Testing
#if canImport(Glibc)
import Glibc
#endif

extension DaemonProcess {
    /// savingsd as nobody (uid 65534) with its state owned by nobody, as the system service runs
    /// under a user of its own: it cannot read or write the test's (root's) 0700 directories.
    static func asNobody(_ environment: [String: String] = [:], groups: [Int] = []) throws -> DaemonProcess {
        let directory = try makeScratchDirectory()
        chown(directory, 65534, 65534)
        chmod(directory, 0o755)
        let groupFlag = groups.isEmpty ? "--clear-groups" : "--groups=\(groups.map(String.init).joined(separator: ","))"
        return try DaemonProcess(directory: directory, environment: environment.merging(["SAVINGSD_LOG_LEVEL": "debug"]) { old, _ in old },
                                 executable: "/usr/bin/setpriv",
                                 prefixArguments: ["--reuid=65534", "--regid=65534", groupFlag, "--", Binaries.savingsd])
    }

    /// The daemon's open files that have no name (a transfer being held).
    var namelessFiles: [String] {
        let fds = "/proc/\(pid)/fd"
        return ((try? FileManager.default.contentsOfDirectory(atPath: fds)) ?? []).compactMap { fd in
            (try? FileManager.default.destinationOfSymbolicLink(atPath: fds + "/" + fd)).flatMap { $0.hasSuffix("(deleted)") ? $0 : nil }
        }
    }
}

@Suite struct FileTransferTests {
    static let canRunAsNobody = AccessTests.canSwitchUser && AccessTests.executableByOthers(Binaries.savingsd)
        && FileManager.default.isExecutableFile(atPath: "/usr/bin/sqlite3")

    /// The client's own files: a 0700 directory of the test's user, closed to the daemon.
    static func clientDirectory(owner: uid_t = getuid()) throws -> String {
        let directory = try makeScratchDirectory()
        chown(directory, owner, owner)
        chmod(directory, 0o700)
        return directory
    }

    static func csv(rows: Int, from start: Int = 0) -> String {
        var text = "date,amount,note,external_id\n"
        for n in start..<start + rows { text += "2026-0\(n % 9 + 1)-\(String(format: "%02d", n % 28 + 1)),\(n % 97 + 1).25,row \(n),r\(n)\n" }
        return text
    }

    /// A daemon as nobody whose account Bank holds `rows` rows sent by savingsctl from the
    /// client's directory (returned too, holding bank.csv).
    static func nobodyWithBank(rows: Int) throws -> (DaemonProcess, String) {
        let daemon = try DaemonProcess.asNobody()
        let mine = try clientDirectory()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let bank = mine + "/bank.csv"
        try csv(rows: rows).write(toFile: bank, atomically: true, encoding: .utf8)
        _ = try ok(["--socket", daemon.socketPath], ["tx", "import", "Bank", bank])
        return (daemon, mine)
    }

    func transactions(_ daemon: DaemonProcess, asset: String = "Bank") throws -> [JSONValue] {
        try daemon.call("tx.list", ["asset": .string(asset), "limit": 1000])["transactions"]?.arrayValue ?? []
    }

    @Test(.enabled(if: canRunAsNobody, "needs root, setpriv, sqlite3 and binaries others may run"))
    func filesTravelBetweenTheClientsDirectoryAndADaemonOfAnotherUser() throws {
        let daemon = try DaemonProcess.asNobody()
        let socket = ["--socket", daemon.socketPath]
        let mine = try Self.clientDirectory()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let bank = mine + "/bank.csv"
        try Self.csv(rows: 40).write(toFile: bank, atomically: true, encoding: .utf8)

        // The daemon itself cannot open the file: that is what the system service is like.
        let byPath = try daemon.failure("tx.import", ["asset": "Bank", "path": .string(bank)])
        #expect(byPath.message.contains("cannot read"), "\(byPath.message)")

        // savingsctl sends it.
        let imported = try ok(socket, ["tx", "import", "Bank", bank])
        #expect(imported.contains("40 imported, 0 already present"), "\(imported)")
        #expect(try transactions(daemon).count == 40)
        #expect(try ok(socket, ["tx", "import", "Bank", bank]).contains("0 imported, 40 already present"))

        // Export into the client's directory, then into a second daemon of the same kind.
        let export = mine + "/all.json"
        let exported = try ok(socket, ["export", export])
        #expect(exported.contains("exported to \(export)"), "\(exported)")
        #expect(fileMode(export) == 0o600)
        let document = try JSONParser.parse(try String(contentsOfFile: export, encoding: .utf8))
        #expect(document["format"] == "savingsd-export")
        #expect(document["transactions"]?.arrayValue?.count == 40)
        let second = try DaemonProcess.asNobody()
        let restored = try ok(["--socket", second.socketPath], ["import", export])
        #expect(restored.contains("transactions 40"), "\(restored)")
        #expect(try transactions(second) == transactions(daemon))

        // The export document on standard output equals the file.
        let printed = try runCtl(socket + ["export"])
        #expect(printed.status == 0)
        #expect(try JSONParser.parse(printed.stdout)["transactions"] == document["transactions"])

        // The earlier app's export.
        let legacy = mine + "/legacy.json"
        try LegacyImportIntegrationTests.document.write(toFile: legacy, atomically: true, encoding: .utf8)
        let third = try DaemonProcess.asNobody()
        let report = try ok(["--socket", third.socketPath], ["legacy-import", legacy])
        #expect(report.hasPrefix("imported"), "\(report)")
        #expect(try third.call("goal.list")["goals"]?.arrayValue?.count == 3)
        #expect(try ok(["--socket", third.socketPath], ["legacy-import", legacy]).contains("imported before"))

        // Nothing the transfers held is left on the daemon's side.
        let leftovers = try FileManager.default.contentsOfDirectory(atPath: daemon.directory + "/db").filter { $0.hasPrefix(".savingsd-transfer-") }
        #expect(leftovers.isEmpty, "\(leftovers)")
    }

    @Test(.enabled(if: canRunAsNobody, "needs root, setpriv, sqlite3 and binaries others may run"))
    func aBackupIsWrittenByTheClientWhileWritersContinue() throws {
        let (daemon, mine) = try Self.nobodyWithBank(rows: 5_000)

        let writing = Mutex(true)
        let socketPath = daemon.socketPath
        let writer = Thread.detachNewThreadWithResult {
            let client = try RPCClient(socketPath: socketPath)
            var n = 0
            while writing.withLock({ $0 }) {
                _ = try client.call("tx.add", ["asset": "Bank", "amount": "1.00", "note": .string("during \(n)")])
                n += 1
            }
        }
        let target = mine + "/copy.db"
        let backup = try runCtl(["--socket", daemon.socketPath, "backup", target])
        writing.withLock { $0 = false }
        try writer.value()
        #expect(backup.status == 0, "\(backup.stderr)")
        #expect(backup.stdout.contains("backup written to \(target)"), "\(backup.stdout)")
        #expect(fileMode(target) == 0o600)
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_uid == getuid(), "written by the client, as the client")
        let check = try runCtl([target, "PRAGMA integrity_check; SELECT count(*) >= 5000 FROM asset_transaction;"], executable: "/usr/bin/sqlite3")
        #expect(check.stdout == "ok\n1\n", "\(check.stdout) \(check.stderr)")
        #expect(try FileManager.default.contentsOfDirectory(atPath: mine).sorted() == ["bank.csv", "copy.db"])

        // An existing file is kept unless --overwrite.
        let again = try runCtl(["--socket", daemon.socketPath, "backup", target])
        #expect(again.status == 1 && again.stderr.contains("already exists"), "\(again.stderr)")
        #expect(try runCtl(["--socket", daemon.socketPath, "backup", target, "--overwrite"]).status == 0)
    }

    @Test(.enabled(if: canRunAsNobody, "needs root, setpriv, sqlite3 and binaries others may run"))
    func anUploadCutOffHalfWayImportsNothingAndLeavesNothing() throws {
        let daemon = try DaemonProcess.asNobody()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let bytes = Array(Self.csv(rows: 20_000).utf8)
        let client = try daemon.raw()
        try client.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"tx.import","params":{"asset":"Bank","upload":{"size":\#(bytes.count)}}}"#)
        let ready = try JSONParser.parse(try #require(try client.readLine()))
        #expect(ready["method"]?.stringValue == FileTransfer.uploadReady, "\(ready)")
        let chunk = try #require(ready["params"]?["max_chunk_bytes"]?.intValue)
        var offset = 0
        while offset < bytes.count / 2 {
            try client.send(FileTransfer.chunkLine(FileTransfer.uploadChunk, id: .number("1"), bytes: bytes[offset..<min(offset + chunk, bytes.count)]) + [0x0A])
            offset += chunk
        }
        // Held while it arrives, in a file without a name.
        var held: [String] = []
        for _ in 0..<100 where held.isEmpty {
            held = daemon.namelessFiles
            usleep(20_000)
        }
        #expect(!held.isEmpty, "the daemon holds the upload in a nameless file")
        client.close()
        var left = held
        for _ in 0..<250 where !left.isEmpty {
            usleep(20_000)
            left = daemon.namelessFiles
        }
        #expect(left.isEmpty, "released once the client is gone: \(left)")
        #expect(try transactions(daemon).isEmpty)
        let files = try FileManager.default.contentsOfDirectory(atPath: daemon.directory + "/db").filter { !$0.hasPrefix("savings.db") }
        #expect(files.isEmpty, "\(files)")
        #expect(try daemon.call("daemon.ping")["pong"] == true)
    }

    @Test(.enabled(if: canRunAsNobody, "needs root, setpriv, sqlite3 and binaries others may run"))
    func anOversizedUploadIsTooLargeAndTheDaemonServesOn() throws {
        let daemon = try DaemonProcess.asNobody(["SAVINGSD_MAX_UPLOAD_BYTES": "4096", "SAVINGSD_MAX_LINE_BYTES": "2048"])
        let mine = try Self.clientDirectory()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let big = mine + "/big.csv"
        // Far more than the socket holds: the client is still sending when it is cut off.
        let text = Self.csv(rows: 50_000)
        try text.write(toFile: big, atomically: true, encoding: .utf8)

        // Announced: refused before a byte is sent.
        let refused = try runCtl(["--socket", daemon.socketPath, "tx", "import", "Bank", big])
        #expect(refused.status == 1)
        #expect(refused.stderr.contains("larger than 4096 bytes") && refused.stderr.contains("too_large"), "\(refused.stderr)")
        #expect(refused.stderr.contains("max_upload_bytes"), "the hint names the setting: \(refused.stderr)")

        // Not announced (a pipe): cut off once past the bound, the connection closed.
        let client = try daemon.raw()
        try client.sendLine(#"{"jsonrpc":"2.0","id":"up","method":"tx.import","params":{"asset":"Bank","upload":{}}}"#)
        let ready = try JSONParser.parse(try #require(try client.readLine()))
        let chunk = try #require(ready["params"]?["max_chunk_bytes"]?.intValue)
        #expect(chunk < 2048, "chunks fit the line limit")
        let bytes = Array(text.utf8)
        var answer: JSONValue?
        var offset = 0
        sending: while offset < bytes.count {
            do {
                try client.send(FileTransfer.chunkLine(FileTransfer.uploadChunk, id: .string("up"), bytes: bytes[offset..<min(offset + chunk, bytes.count)]) + [0x0A])
            } catch {
                break sending
            }
            offset += chunk
            if let line = try client.pollLine() {
                answer = try JSONParser.parse(line)
                break sending
            }
        }
        if answer == nil { answer = try client.readLine().map { try JSONParser.parse($0) } }
        #expect(answer?["id"] == "up")
        #expect(answer?["error"]?["data"]?["kind"] == "too_large", "\(String(describing: answer))")
        #expect(offset < bytes.count, "refused before the whole file was taken")
        #expect(try client.readLine(timeoutMilliseconds: 5_000) == nil, "and the connection closed")

        #expect(try transactions(daemon).isEmpty)
        #expect(try daemon.call("daemon.ping")["pong"] == true)
        // A file within the bound goes in.
        let small = mine + "/small.csv"
        try Self.csv(rows: 20).write(toFile: small, atomically: true, encoding: .utf8)
        #expect(try ok(["--socket", daemon.socketPath], ["tx", "import", "Bank", small]).contains("20 imported"))
    }

    @Test(.enabled(if: canRunAsNobody, "needs root, setpriv, sqlite3 and binaries others may run"))
    func aReadOnlyPeerIsRefusedAnUploadAndServedABackup() throws {
        let daemon = try DaemonProcess.asNobody(["SAVINGSD_SOCKET_GROUP": "users", "SAVINGSD_READ_ONLY_GROUPS": "users"], groups: [100])
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "12.50"])
        // A third user, in the read-only group, with files of its own.
        let reader: uid_t = 65533
        let theirs = try Self.clientDirectory(owner: reader)
        let bank = theirs + "/bank.csv"
        try Self.csv(rows: 3).write(toFile: bank, atomically: true, encoding: .utf8)
        chown(bank, reader, reader)
        func asReader(_ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
            try runCtl(["--reuid=\(reader)", "--regid=\(reader)", "--groups=100", "--", Binaries.savingsctl, "--socket", daemon.socketPath] + arguments,
                       executable: "/usr/bin/setpriv")
        }
        let upload = try asReader(["tx", "import", "Bank", bank])
        #expect(upload.status == 1)
        #expect(upload.stderr.contains("read_only"), "\(upload.stderr)")
        #expect(try transactions(daemon).count == 1)

        let target = theirs + "/copy.db"
        let backup = try asReader(["backup", target])
        #expect(backup.status == 0, "\(backup.stderr)")
        var info = stat()
        #expect(stat(target, &info) == 0 && info.st_uid == reader && fileMode(target) == 0o600)
        let check = try runCtl([target, "PRAGMA integrity_check; SELECT amount FROM asset_transaction;"], executable: "/usr/bin/sqlite3")
        #expect(check.stdout == "ok\n12.5\n", "\(check.stdout) \(check.stderr)")
        #expect(try asReader(["export", theirs + "/all.json"]).status == 0)
    }

    /// The daemon stopping during a download: savingsctl keeps no file at the final name.
    @Test(.enabled(if: canRunAsNobody, "needs root, setpriv, sqlite3 and binaries others may run"))
    func aDownloadInterruptedByShutdownLeavesNoFile() throws {
        let (daemon, mine) = try Self.nobodyWithBank(rows: 60_000)

        let target = mine + "/copy.db"
        let ctl = Process()
        ctl.executableURL = URL(fileURLWithPath: Binaries.savingsctl)
        ctl.arguments = ["--socket", daemon.socketPath, "backup", target]
        ctl.standardOutput = FileHandle.nullDevice
        ctl.standardError = FileHandle.nullDevice
        try ctl.run()
        // savingsctl creates its temporary file just before it asks: hold it still there, so
        // the daemon is still sending (waiting for it to read) when it is told to stop.
        var partial: String?
        for _ in 0..<20_000 where partial == nil {
            partial = try FileManager.default.contentsOfDirectory(atPath: mine).first { $0.hasPrefix("copy.db.partial-") }
            if partial == nil { usleep(500) }
        }
        kill(ctl.processIdentifier, SIGSTOP)
        #expect(partial != nil, "the download began")
        daemon.signal(SIGTERM)
        usleep(300_000)
        kill(ctl.processIdentifier, SIGCONT)
        ctl.waitUntilExit()
        #expect(ctl.terminationStatus != 0)
        #expect(!FileManager.default.fileExists(atPath: target))
        #expect(try FileManager.default.contentsOfDirectory(atPath: mine) == ["bank.csv"])
        #expect(daemon.waitForExit() == 0)
    }
}

/// The upload's rules that do not need another user: limits, refusals before the first byte,
/// and a client that gives up.
@Suite struct UploadRulesTests {
    func start(_ client: LineClient, id: Int = 1, params: String = #""asset":"Bank""#) throws -> JSONValue {
        try client.sendLine(#"{"jsonrpc":"2.0","id":\#(id),"method":"tx.import","params":{\#(params),"upload":{}}}"#)
        return try JSONParser.parse(try #require(try client.readLine()))
    }

    @Test func aStalledUploadIsClosedByTheIdleTimeout() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_IDLE_TIMEOUT": "1"])
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let client = try daemon.raw()
        #expect(try start(client)["method"] == "upload.ready")
        try client.send(FileTransfer.chunkLine(FileTransfer.uploadChunk, id: .number("1"), bytes: Array("date,amount\n2026-01-01,5\n".utf8)) + [0x0A])
        let started = Date()
        let answer = try client.readLine(timeoutMilliseconds: 10_000).map { try JSONParser.parse($0) }
        #expect(Date().timeIntervalSince(started) < 8, "closed by the idle timeout, not left waiting")
        if let answer { #expect(answer["error"] != nil, "\(answer)") }
        #expect(try client.readLine(timeoutMilliseconds: 5_000) == nil)
        #expect(try daemon.call("tx.list", ["asset": "Bank"])["transactions"]?.arrayValue?.isEmpty == true)
    }

    @Test func refusalsComeBeforeTheFirstByteAndTheConnectionGoesOn() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_MAX_UPLOAD_BYTES": "2048"])
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let client = try daemon.raw()
        let unknown = try start(client, params: #""asset":"Nope""#)
        #expect(unknown["error"]?["data"]?["kind"] == "not_found", "\(unknown)")
        try client.sendLine(#"{"jsonrpc":"2.0","id":2,"method":"tx.import","params":{"asset":"Bank","upload":{"size":4096}}}"#)
        let large = try JSONParser.parse(try #require(try client.readLine()))
        #expect(large["error"]?["data"]?["kind"] == "too_large", "\(large)")
        try client.sendLine(#"{"jsonrpc":"2.0","id":3,"method":"tx.import","params":{"asset":"Bank","upload":{},"path":"/x.csv"}}"#)
        #expect(try JSONParser.parse(try #require(try client.readLine()))["error"]?["message"]?.stringValue?.contains("not both") == true)
        // In a batch, or as a notification, there is no request for the chunks to name.
        try client.sendLine(#"[{"jsonrpc":"2.0","id":4,"method":"tx.import","params":{"asset":"Bank","upload":{}}}]"#)
        let batch = try JSONParser.parse(try #require(try client.readLine()))
        #expect(batch.arrayValue?.first?["error"]?["message"]?.stringValue?.contains("not inside a batch") == true, "\(batch)")
        try client.sendLine(#"{"jsonrpc":"2.0","id":5,"method":"data.export","params":{"download":true,"path":"/x.json"}}"#)
        #expect(try JSONParser.parse(try #require(try client.readLine()))["error"]?["message"]?.stringValue?.contains("not both") == true)
        try client.sendLine(#"{"jsonrpc":"2.0","id":6,"method":"daemon.ping"}"#)
        #expect(try JSONParser.parse(try #require(try client.readLine()))["result"]?["pong"] == true)
    }

    @Test func anAbortedUploadImportsNothingAndTheConnectionGoesOn() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let client = try daemon.raw()
        #expect(try start(client, id: 9)["method"] == "upload.ready")
        try client.send(FileTransfer.chunkLine(FileTransfer.uploadChunk, id: .number("9"), bytes: Array("date,amount\n2026-01-01,5\n".utf8)) + [0x0A])
        try client.sendLine(JSONSerializer.serialize(FileTransfer.notification(FileTransfer.uploadAbort, id: .number("9"))))
        let answer = try JSONParser.parse(try #require(try client.readLine()))
        #expect(answer["id"] == 9 && answer["error"]?["data"]?["kind"] == "conflict", "\(answer)")
        try client.sendLine(#"{"jsonrpc":"2.0","id":10,"method":"tx.list","params":{"asset":"Bank"}}"#)
        #expect(try JSONParser.parse(try #require(try client.readLine()))["result"]?["transactions"]?.arrayValue?.isEmpty == true)
        // And a line that is not part of the upload ends it, and the connection.
        #expect(try start(client, id: 11)["method"] == "upload.ready")
        try client.sendLine(#"{"jsonrpc":"2.0","id":12,"method":"daemon.ping"}"#)
        let broken = try JSONParser.parse(try #require(try client.readLine()))
        #expect(broken["id"] == 11 && broken["error"]?["message"]?.stringValue?.contains("expected upload.chunk") == true, "\(broken)")
        #expect(try client.readLine(timeoutMilliseconds: 5_000) == nil)
    }
}
