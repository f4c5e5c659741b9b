import Foundation
import SavingsRPC
import Testing

/// What clients do is logged in proportion: a client gone mid-download is no error of the
/// daemon's, and a burst of refusals writes a line a second, not a line a refusal.
@Suite struct LogVolumeTests {
    /// Lines of the daemon's log containing `fragment`.
    static func lines(_ daemon: DaemonProcess, _ fragment: String) -> [Substring] {
        daemon.log.split(separator: "\n").filter { $0.contains(fragment) }
    }

    /// The count a summary line gives ("refused 312 more connections ..."), or 1 for a single line.
    static func count(_ line: Substring) -> Int {
        line.firstMatch(of: /(\d+) more/).flatMap { Int($0.1) } ?? 1
    }

    @Test func downloadsCutOffByTheirClientsAreNotErrors() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        // Enough rows that a download is still being sent when its client leaves.
        let csv = daemon.directory + "/rows.csv"
        var text = "date,amount,note,external_id\n"
        for index in 0..<20_000 { text += "2025-01-\(1 + index % 28)T10:00:00Z,\(1 + index % 90).25,a note for row \(index),r\(index)\n" }
        try text.write(toFile: csv, atomically: true, encoding: .utf8)
        _ = try daemon.call("tx.import", ["asset": "Bank", "path": .string(csv)])
        let started = Date()
        let downloads = 30
        for index in 0..<downloads {
            let client = try daemon.raw()
            let method = index.isMultiple(of: 3) ? "data.export" : "db.backup"
            try client.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":{"download":true}}"#)
            let start = try JSONParser.parse(try #require(try client.readLine(timeoutMilliseconds: 20_000)))
            #expect(start["method"] == "download.start", "\(start)")
            client.close()
        }
        #expect(try daemon.call("daemon.ping")["pong"] == true)
        let seconds = Date().timeIntervalSince(started)
        usleep(1_500_000)
        #expect(Self.lines(daemon, "I/O on closed channel").isEmpty, "\(Self.lines(daemon, "I/O on closed channel").prefix(3))")
        #expect(Self.lines(daemon, " ERROR ").isEmpty, "\(Self.lines(daemon, " ERROR ").prefix(3))")
        let cut = Self.lines(daemon, "cut short")
        #expect(!cut.isEmpty && cut.count <= Int(seconds) + 3, "\(cut.count) lines in \(seconds) s: \(cut.prefix(4))")
        #expect(cut.map(Self.count).reduce(0, +) <= downloads)
        #expect(cut.allSatisfy { $0.contains(" NOTICE ") }, "\(cut)")
    }

    @Test func aBurstOfRefusalsWritesALineASecond() throws {
        // One served per uid, sixteen parked: every further connection is refused as busy.
        let daemon = try DaemonProcess(environment: ["SAVINGSD_MAX_CONNECTIONS": "4", "SAVINGSD_MAX_CONNECTIONS_PER_UID": "1",
                                                     "SAVINGSD_BACKLOG": "16"])
        let held = try daemon.raw()
        #expect(try AdmissionTests.served(held))
        let parked = try (0..<16).map { _ in try daemon.raw() }
        // Connections are set up on several threads: the sixteen take their places before the
        // burst (else one of them could be the one refused, and a burst client parked).
        usleep(1_000_000)
        let started = Date()
        let burst = 400
        for _ in 0..<burst {
            let client = try daemon.raw()
            let line = try JSONParser.parse(try #require(try client.readLine(timeoutMilliseconds: 10_000)))
            #expect(line["error"]?["data"]?["kind"] == "busy")
            client.close()
        }
        let seconds = Date().timeIntervalSince(started)
        usleep(1_500_000)
        let refusals = Self.lines(daemon, "too many waiting")
        #expect(refusals.count <= Int(seconds) + 3, "\(refusals.count) lines for \(burst) refusals in \(seconds) s")
        #expect(refusals.map(Self.count).reduce(0, +) == burst, "every refusal counted: \(refusals)")
        withExtendedLifetime(parked) {}
    }

    @Test(.enabled(if: AccessTests.canSwitchUser && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
                   "needs root, setpriv, python3 and a 'users' group"))
    func aBurstOfStrangersWritesALineASecond() throws {
        let daemon = try sharedDaemon(["SAVINGSD_LOG_LEVEL": "info"])
        let burst = 300
        let script = """
            import socket, sys
            for _ in range(int(sys.argv[2])):
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
                assert b"permission_denied" in s.recv(65536)
                s.close()
            """
        let started = Date()
        let result = try runCtl(["--reuid=65534", "--regid=65534", "--groups=100", "--", "/usr/bin/python3", "-c", script,
                                 daemon.socketPath, String(burst)], executable: "/usr/bin/setpriv")
        #expect(result.status == 0, "\(result.stderr)")
        let seconds = Date().timeIntervalSince(started)
        usleep(1_500_000)
        let refusals = Self.lines(daemon, "not allowed")
        #expect(refusals.count <= Int(seconds) + 3, "\(refusals.count) lines for \(burst) refusals in \(seconds) s")
        #expect(refusals.map(Self.count).reduce(0, +) == burst, "every refusal counted: \(refusals)")
        #expect(refusals.first?.contains("uid 65534") == true, "the first names the peer: \(refusals.first ?? "")")
    }
}
