import Foundation
import SavingsRPC
import Testing
#if canImport(Glibc)
import Glibc
#endif

@Suite struct LifecycleTests {
    @Test func readyOnlyWhenServingAndStatusLines() throws {
        let daemon = try DaemonProcess()
        // READY=1 has arrived: the socket must answer at once, no retry.
        #expect(try daemon.call("daemon.ping") == ["pong": true])
        #expect(daemon.notify.states.contains { $0.hasPrefix("STATUS=serving") })
        let status = try daemon.call("daemon.status")
        #expect(status["version"] == "0.1.0")
        #expect(status["pid"] == .int(Int(daemon.pid)))
        #expect(status["socket"] == .string(daemon.socketPath))
        #expect(status["database"] == .string(daemon.databasePath))
        #expect(status["mode"] == "user")
        #expect(status["schema_version"]?.intValue ?? 0 >= 1)
        #expect(status["uptime_seconds"]?.intValue != nil)
    }

    @Test func sigtermSaysStoppingAndExitsCleanly() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("goal.create", GoalTests.emergency)
        let idle = try daemon.raw()  // an idle client must not hold up shutdown
        // Connections accepted but not yet served when SIGTERM lands once crashed the daemon
        // ("Deinited NIOAsyncWriter without calling finish()"): open many right before it.
        let justConnected = try (0..<30).map { _ in try daemon.raw() }
        #expect(daemon.stop() == 0, "\(daemon.log)")
        #expect(!daemon.log.contains("Fatal error"))
        // Stopping is not a failure: the cancelled background work must not log errors.
        #expect(!daemon.log.contains("CancellationError") && !daemon.log.contains(" ERROR "), "\(daemon.log)")
        _ = justConnected
        #expect(daemon.notify.count(of: "STOPPING=1") == 1)
        #expect(!FileManager.default.fileExists(atPath: daemon.socketPath), "the socket file is removed on exit")
        #expect(try idle.readLine() == nil)
        _ = idle
    }

    @Test func sigintAlsoStopsGracefully() throws {
        let daemon = try DaemonProcess()
        daemon.signal(SIGINT)
        #expect(daemon.waitForExit() == 0)
        #expect(daemon.notify.count(of: "STOPPING=1") == 1)
    }

    @Test func fileModes() throws {
        let directory = try makeScratchDirectory()
        chmod(directory, 0o755)
        let socket = directory + "/nested/run/d.sock"
        let database = directory + "/nested/data/savings.db"
        let daemon = try DaemonProcess(directory: directory, arguments: ["--socket", socket, "--database", database])
        #expect(fileMode(socket) == 0o600)
        #expect(fileMode(directory + "/nested/run") == 0o700)
        #expect(fileMode(directory + "/nested") == 0o700)
        #expect(fileMode(database) == 0o600)
        #expect(fileMode(directory + "/nested/data") == 0o700)
        #expect(fileMode(directory) == 0o755, "an existing parent is never chmod-ed")
        // Defaults in user mode land under XDG with the same modes.
        #expect(daemon.stop() == 0)
        let user = try DaemonProcess(directory: directory, arguments: [])
        let status = try RPCClient(socketPath: directory + "/run/savingsd/savingsd.sock").call("daemon.status")
        #expect(status["pid"] == .int(Int(user.pid)))
        #expect(status["socket"] == .string(directory + "/run/savingsd/savingsd.sock"))
        #expect(status["database"] == .string(directory + "/data/savingsd/savings.db"))
        #expect(fileMode(directory + "/run/savingsd") == 0o700)
        #expect(fileMode(directory + "/data/savingsd/savings.db") == 0o600)
    }

    @Test func aLiveDaemonKeepsItsSocketAndAStaleOneIsReplaced() throws {
        let first = try DaemonProcess()
        let rival = try DaemonProcess(directory: first.directory,
                                      arguments: ["--socket", first.socketPath, "--database", first.directory + "/other.db"],
                                      waitForReady: false)
        #expect(rival.waitForExit() == 1)
        #expect(rival.log.contains("another savingsd is already listening"))
        #expect(try first.call("daemon.ping") == ["pong": true])

        first.signal(SIGKILL)
        _ = first.waitForExit()
        #expect(FileManager.default.fileExists(atPath: first.socketPath), "kill -9 leaves the socket file behind")
        let successor = try DaemonProcess(directory: first.directory)
        #expect(try successor.call("daemon.ping") == ["pong": true])
    }

    @Test func aFileInTheSocketsPlaceIsNeverRemoved() throws {
        let directory = try makeScratchDirectory()
        try Data("precious".utf8).write(to: URL(fileURLWithPath: directory + "/d.sock"))
        let daemon = try DaemonProcess(directory: directory, waitForReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("is not a socket"))
        #expect(try String(contentsOfFile: directory + "/d.sock", encoding: .utf8) == "precious")
    }

    @Test(.enabled(if: getuid() == 0, "needs root to hand a directory to another user"))
    func aSocketDirectoryOthersControlIsRefused() throws {
        let directory = try makeScratchDirectory()
        let foreign = directory + "/foreign"
        try FileManager.default.createDirectory(atPath: foreign, withIntermediateDirectories: false)
        chown(foreign, 65534, 65534)
        let daemon = try DaemonProcess(directory: directory, arguments: ["--socket", foreign + "/d.sock", "--database", directory + "/x.db"],
                                       waitForReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("belongs to another user"))

        let open = directory + "/open"
        try FileManager.default.createDirectory(atPath: open, withIntermediateDirectories: false)
        chmod(open, 0o777)
        let second = try DaemonProcess(directory: directory, arguments: ["--socket", open + "/d.sock", "--database", directory + "/x.db"],
                                       waitForReady: false)
        #expect(second.waitForExit() == 1)
        #expect(second.log.contains("writable by other users"))
    }

    @Test func sighupReloadsOrKeepsTheOldConfiguration() throws {
        let directory = try makeScratchDirectory()
        let config = directory + "/savingsd.toml"
        try "timezone = \"America/New_York\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(directory: directory, arguments: [
            "--socket", directory + "/d.sock", "--database", directory + "/db/savings.db", "--config", config,
        ])
        #expect(try daemon.call("daemon.status")["timezone"] == "America/New_York")

        try "timezone = \"Europe/Berlin\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        daemon.signal(SIGHUP)
        #expect(daemon.notify.wait(for: "RELOADING=1"))
        #expect(daemon.notify.count(of: "READY=1") >= 1)
        #expect(daemon.notify.wait(for: "READY=1"))
        try waitUntil { try daemon.call("daemon.status")["timezone"] == "Europe/Berlin" }

        try "timezone = \"Mars/Olympus\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let readyBefore = daemon.notify.count(of: "READY=1")
        daemon.signal(SIGHUP)
        try waitUntil { daemon.notify.count(of: "READY=1") > readyBefore }
        #expect(try daemon.call("daemon.status")["timezone"] == "Europe/Berlin")
        #expect(daemon.log.contains("reload failed"))
        #expect(daemon.log.contains("unknown time zone 'Mars/Olympus'"))
        #expect(daemon.stop() == 0)
    }

    @Test func invalidConfigurationStopsStartupWithFileAndLine() throws {
        let directory = try makeScratchDirectory()
        let config = directory + "/savingsd.toml"
        try "[rpc]\nmax_line_bytes = 1048576\nsokcet = \"/x\"\n".write(toFile: config, atomically: true, encoding: .utf8)
        let daemon = try DaemonProcess(directory: directory, arguments: ["--config", config], waitForReady: false)
        #expect(daemon.waitForExit() == 1)
        #expect(daemon.log.contains("\(config):3: unknown key 'rpc.sokcet'"))
        #expect(!daemon.notify.states.contains("READY=1"))
    }

    @Test func checkConfigPrintsTheEffectiveValues() throws {
        let directory = try makeScratchDirectory()
        let config = directory + "/savingsd.toml"
        try "log_level = \"debug\"\n[rpc]\nmax_line_bytes = 2048\n".write(toFile: config, atomically: true, encoding: .utf8)
        let valid = try DaemonProcess(directory: directory, arguments: ["--check-config", "--config", config, "--socket", "/s.sock"],
                                      waitForReady: false)
        #expect(valid.waitForExit() == 0)
        #expect(valid.log.contains("rpc.max_line_bytes = 2048  # \(config):3"))
        #expect(valid.log.contains("rpc.socket = \"/s.sock\"  # command line"))
        #expect(valid.log.contains("log_level = \"debug\""))
        try "log_level = 3\n".write(toFile: config, atomically: true, encoding: .utf8)
        let invalid = try DaemonProcess(directory: directory, arguments: ["--check-config", "--config", config], waitForReady: false)
        #expect(invalid.waitForExit() == 1)
        #expect(invalid.log.contains("\(config):1: log_level: must be a string"))
        let version = try DaemonProcess(directory: directory, arguments: ["--version"], waitForReady: false)
        #expect(version.waitForExit() == 0)
        #expect(version.log.contains("0.1.0"))
    }

    @Test func socketActivationUsesThePassedSocket() throws {
        let activate = "/usr/bin/systemd-socket-activate"
        try #require(FileManager.default.isExecutableFile(atPath: activate), "systemd-socket-activate is part of systemd")
        let directory = try makeScratchDirectory()
        let socket = directory + "/activated.sock"
        let database = directory + "/db/savings.db"
        let notifyPath = directory + "/notify-activation"
        let notify = try NotifyListener(path: notifyPath)
        let process = Process()
        process.executableURL = URL(fileURLWithPath: activate)
        process.arguments = ["-l", socket, "-E", "NOTIFY_SOCKET=\(notifyPath)", "-E", "HOME=\(directory)",
                             "-E", "XDG_RUNTIME_DIR=\(directory)/run", Binaries.savingsd, "--database", database]
        process.environment = DaemonProcess.baseEnvironment(directory: directory)
        let log = directory + "/activation.log"
        _ = FileManager.default.createFile(atPath: log, contents: nil)
        process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: log))
        try process.run()
        defer {
            kill(process.processIdentifier, SIGTERM)
            process.waitUntilExit()
        }
        try waitUntil { FileManager.default.fileExists(atPath: socket) }
        // The first connection starts the daemon, which must answer on the inherited socket.
        let client = try RPCClient(socketPath: socket)
        #expect(try client.call("daemon.ping") == ["pong": true])
        #expect(notify.wait(for: "READY=1"))
        #expect(!FileManager.default.fileExists(atPath: directory + "/run/savingsd/savingsd.sock"),
                "with socket activation the daemon binds nothing itself")
        let logText = try String(contentsOfFile: log, encoding: .utf8)
        #expect(logText.contains("systemd socket"))
    }
}

/// Polls `condition` for up to `timeout` seconds.
func waitUntil(timeout: TimeInterval = 30, _ condition: () throws -> Bool) throws {
    let deadline = Date().addingTimeInterval(timeout)
    while Date() < deadline {
        if try condition() { return }
        usleep(50_000)
    }
    throw HarnessError("condition not met within \(timeout) s")
}
