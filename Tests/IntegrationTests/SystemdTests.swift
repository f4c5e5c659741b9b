import Foundation
import SavingsRPC
import Testing

/// What systemd sees: watchdog pings, journald priorities, unit files that verify.
@Suite struct SystemdTests {
    @Test func watchdogPingsWhenEnabled() throws {
        let daemon = try DaemonProcess(environment: ["WATCHDOG_USEC": "400000"])
        #expect(daemon.notify.wait(for: "WATCHDOG=1", timeout: 10))
        #expect(daemon.notify.wait(for: "WATCHDOG=1", timeout: 10))
        #expect(daemon.stop() == 0)
    }

    /// The pings come from the serving path: when requests can no longer reach the daemon
    /// (here its socket file is gone), the pings stop and systemd would restart it.
    @Test func watchdogPingsStopWhenTheSocketStopsAnswering() throws {
        let daemon = try DaemonProcess(environment: ["WATCHDOG_USEC": "400000"])
        #expect(daemon.notify.wait(for: "WATCHDOG=1", timeout: 10))
        unlink(daemon.socketPath)
        daemon.notify.drain(waitMilliseconds: 500)
        let before = daemon.notify.count(of: "WATCHDOG=1")
        daemon.notify.drain(waitMilliseconds: 1_500)
        #expect(daemon.notify.count(of: "WATCHDOG=1") == before, "no pings while the socket cannot be reached")
        #expect(daemon.log.contains("did not answer daemon.ping"))
    }

    @Test func noWatchdogPingsWhenNotAskedFor() throws {
        let daemon = try DaemonProcess()
        usleep(500_000)
        #expect(daemon.notify.count(of: "WATCHDOG=1") == 0)
    }

    @Test func logLinesCarrySyslogPrioritiesUnderJournald() throws {
        let daemon = try DaemonProcess(environment: ["JOURNAL_STREAM": "8:12345"])
        #expect(daemon.stop() == 0)
        let lines = daemon.log.split(separator: "\n")
        #expect(lines.contains { $0.hasPrefix("<5>ready") })
        #expect(lines.allSatisfy { $0.hasPrefix("<") }, "every line starts with <N>")
        let plain = try DaemonProcess()
        #expect(plain.stop() == 0)
        #expect(plain.log.contains("NOTICE ready"))
    }

    @Test(arguments: [false, true])
    func unitFilesVerify(user: Bool) throws {
        let analyze = "/usr/bin/systemd-analyze"
        try #require(FileManager.default.isExecutableFile(atPath: analyze), "systemd-analyze is part of systemd")
        let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(user ? "systemd/user" : "systemd")
        let directory = try makeScratchDirectory()
        var units: [String] = []
        for name in ["savingsd.service", "savingsd.socket"] {
            var text = try String(contentsOf: root.appendingPathComponent(name), encoding: .utf8)
            // Point ExecStart at the binary just built; everything else is verified as shipped.
            text = text.split(separator: "\n", omittingEmptySubsequences: false).map { line in
                line.hasPrefix("ExecStart=") ? "ExecStart=\(Binaries.savingsd)" + line.drop { $0 != " " } : String(line)
            }.joined(separator: "\n")
            let path = directory + "/" + name
            try text.write(toFile: path, atomically: true, encoding: .utf8)
            units.append(path)
        }
        let runtime = directory + "/run"
        try FileManager.default.createDirectory(atPath: runtime, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        let process = Process()
        process.executableURL = URL(fileURLWithPath: analyze)
        process.arguments = (user ? ["--user"] : []) + ["verify", "--man=no"] + units
        process.environment = DaemonProcess.baseEnvironment(directory: directory).merging(["XDG_RUNTIME_DIR": runtime]) { $1 }
        let output = directory + "/verify.log"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        let log = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        #expect(process.terminationStatus == 0, "systemd-analyze verify: \(log)")
        #expect(log.isEmpty, "systemd-analyze printed warnings: \(log)")
    }

    /// The system unit's sandbox: `systemd-analyze security` must rate its exposure 1.2 or lower
    /// (the same figure as on the running unit, Tests/service/units.sh).
    @Test func systemUnitIsSandboxed() throws {
        let unit = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("systemd/savingsd.service").path
        let directory = try makeScratchDirectory()
        let output = directory + "/security.log"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/systemd-analyze")
        process.arguments = ["security", "--offline=true", "--no-pager", unit]
        process.environment = DaemonProcess.baseEnvironment(directory: directory)
        let handle = try FileHandle(forWritingTo: URL(fileURLWithPath: output))
        process.standardOutput = handle
        process.standardError = handle
        try process.run()
        process.waitUntilExit()
        let log = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let line = try #require(log.split(separator: "\n").first { $0.contains("Overall exposure level") }, "\(log)")
        let score = line.split(separator: ":").last?.split(separator: " ").first.flatMap { Decimal(string: String($0)) }
        let exposure = try #require(score, "\(line)")
        #expect(exposure <= Decimal(string: "1.2")!, "exposure \(exposure) is above 1.2")
    }
}
