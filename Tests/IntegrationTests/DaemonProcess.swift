import Foundation
import SavingsRPC
#if canImport(Glibc)
import Glibc
#endif

/// Where the built executables are: `SAVINGSD_BIN_DIR` (set by `make test`) or `.build/debug`.
enum Binaries {
    static let directory: String = {
        if let dir = ProcessInfo.processInfo.environment["SAVINGSD_BIN_DIR"], !dir.isEmpty { return dir }
        return URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent(".build/debug").path
    }()
    static var savingsd: String { directory + "/savingsd" }
    static var savingsctl: String { directory + "/savingsctl" }
}

/// A scratch directory with a short path (Unix socket paths are limited to 107 bytes).
func makeScratchDirectory() throws -> String {
    var template = Array("/tmp/sdt-XXXXXX".utf8CString)
    guard let result = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else {
        throw HarnessError("mkdtemp failed")
    }
    return String(cString: result)
}

/// One real `savingsd` process on a private socket, database and `NOTIFY_SOCKET`.
class DaemonProcess {
    let directory: String
    let socketPath: String
    let databasePath: String
    let logPath: String
    let notify: NotifyListener
    let process: Process

    /// The environment every daemon gets: nothing inherited that could point at real data.
    static func baseEnvironment(directory: String) -> [String: String] {
        [
            "PATH": ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin",
            "HOME": directory,
            "XDG_RUNTIME_DIR": directory + "/run",
            "XDG_DATA_HOME": directory + "/data",
            "XDG_CONFIG_HOME": directory + "/config",
            "TZ": "UTC",
        ]
    }

    /// Starts savingsd and, unless told otherwise, waits for READY=1.
    required init(directory: String? = nil, arguments: [String]? = nil, environment: [String: String] = [:],
                  executable: String = Binaries.savingsd, prefixArguments: [String] = [], waitForReady: Bool = true) throws {
        let directory = try directory ?? makeScratchDirectory()
        self.directory = directory
        socketPath = directory + "/d.sock"
        databasePath = directory + "/db/savings.db"
        logPath = directory + "/daemon-\(UUID().uuidString.prefix(6)).log"
        let notifyPath = directory + "/notify-\(UUID().uuidString.prefix(6))"
        notify = try NotifyListener(path: notifyPath)
        // A daemon started as another user (see `asNobody`) must reach it too.
        chmod(notifyPath, 0o666)
        _ = FileManager.default.createFile(atPath: logPath, contents: nil)
        let log = try FileHandle(forWritingTo: URL(fileURLWithPath: logPath))

        process = Process()
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = prefixArguments + (arguments ?? ["--socket", socketPath, "--database", databasePath])
        var env = Self.baseEnvironment(directory: directory)
        env["NOTIFY_SOCKET"] = notifyPath
        env.merge(environment) { $1 }
        process.environment = env
        process.standardOutput = log
        process.standardError = log
        try process.run()
        if waitForReady {
            guard notify.wait(for: "READY=1") else {
                process.terminate()
                throw HarnessError("savingsd did not report READY=1; log:\n\(self.log)")
            }
        }
    }

    deinit {
        if process.isRunning {
            kill(process.processIdentifier, SIGKILL)
            process.waitUntilExit()
        }
    }

    var log: String { (try? String(contentsOfFile: logPath, encoding: .utf8)) ?? "" }

    var pid: Int32 { process.processIdentifier }

    /// The daemon's resident memory now (VmRSS), in kB.
    var rssKilobytes: Int {
        (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("VmRSS:") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
    }

    /// The daemon's peak resident memory so far (VmHWM), in kB.
    var peakKilobytes: Int {
        (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8))?
            .split(separator: "\n").first { $0.hasPrefix("VmHWM:") }.flatMap { Int($0.split(separator: " ")[1]) } ?? 0
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits for the process to exit; returns its exit status, or nil on timeout / signal death.
    func waitForExit(timeout: TimeInterval = 30) -> Int32? {
        let deadline = Date().addingTimeInterval(timeout)
        while process.isRunning, Date() < deadline { usleep(20_000) }
        guard !process.isRunning else { return nil }
        return process.terminationReason == .exit ? process.terminationStatus : nil
    }

    /// SIGTERM and wait; the exit status (nil if it did not exit by itself).
    @discardableResult
    func stop() -> Int32? {
        signal(SIGTERM)
        return waitForExit()
    }

    func client() throws -> RPCClient { try RPCClient(socketPath: socketPath) }

    func raw() throws -> LineClient { try LineClient(socketPath: socketPath) }

    /// One call on a fresh connection.
    func call(_ method: String, _ params: [String: JSONValue] = [:]) throws -> JSONValue {
        let result = try client().call(method, params)
        AnswerLog.record(method, result)
        return result
    }

    /// The daemon's error for a call that must fail.
    func failure(_ method: String, _ params: [String: JSONValue] = [:]) throws -> RPCError {
        let result: JSONValue
        do {
            result = try client().call(method, params)
        } catch RPCClient.CallError.remote(let error) {
            return error
        }
        throw HarnessError("\(method) unexpectedly succeeded: \(JSONSerializer.serialize(result))")
    }
}

extension DaemonProcess {
    /// A euro account holding `amount`, all of it reserved for a new euro goal: further
    /// deposits into it are allocated to that goal automatically.
    func dedicatedAccount(_ asset: String, goal: String, target: String, amount: String) throws {
        _ = try call("asset.create", ["name": .string(asset), "currency": "EUR", "kind": "fiat"])
        _ = try call("goal.create", ["name": .string(goal), "currency": "EUR", "target_amount": .string(target), "deadline": "2030-01-01"])
        _ = try call("tx.add", ["asset": .string(asset), "amount": .string(amount)])
        _ = try call("allocation.set", ["asset": .string(asset), "goal": .string(goal), "amount": .string(amount)])
    }
}

/// Runs `savingsctl` to completion.
func runCtl(_ arguments: [String], environment: [String: String] = [:], directory workingDirectory: String? = nil,
            executable: String = Binaries.savingsctl) throws -> (status: Int32, stdout: String, stderr: String) {
    let directory = try makeScratchDirectory()
    let out = directory + "/out", err = directory + "/err"
    _ = FileManager.default.createFile(atPath: out, contents: nil)
    _ = FileManager.default.createFile(atPath: err, contents: nil)
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    if let workingDirectory { process.currentDirectoryURL = URL(fileURLWithPath: workingDirectory) }
    var env = DaemonProcess.baseEnvironment(directory: directory)
    env.merge(environment) { $1 }
    process.environment = env
    process.standardOutput = try FileHandle(forWritingTo: URL(fileURLWithPath: out))
    process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: err))
    process.standardInput = FileHandle.nullDevice
    try process.run()
    process.waitUntilExit()
    defer { try? FileManager.default.removeItem(atPath: directory) }
    return (process.terminationStatus,
            (try? String(contentsOfFile: out, encoding: .utf8)) ?? "",
            (try? String(contentsOfFile: err, encoding: .utf8)) ?? "")
}

func fileMode(_ path: String) -> Int? {
    var info = stat()
    guard lstat(path, &info) == 0 else { return nil }
    return Int(info.st_mode & 0o7777)
}
