import Foundation
import Synchronization
import SavingsRPC
#if canImport(Glibc)
import Glibc
#endif

struct BenchError: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}

/// Seconds on the monotonic clock.
func monotonicSeconds() -> Double {
    var now = timespec()
    clock_gettime(CLOCK_MONOTONIC, &now)
    return Double(now.tv_sec) + Double(now.tv_nsec) / 1e9
}

/// Summary of repeated samples (seconds).
struct Samples {
    var values: [Double] = []
    mutating func add(_ value: Double) { values.append(value) }
    @discardableResult
    mutating func time<T>(_ body: () throws -> T) rethrows -> T {
        let start = monotonicSeconds()
        let result = try body()
        values.append(monotonicSeconds() - start)
        return result
    }
    private var sorted: [Double] { values.sorted() }
    func quantile(_ q: Double) -> Double {
        let s = sorted
        guard !s.isEmpty else { return .nan }
        return s[min(s.count - 1, Int((Double(s.count - 1) * q).rounded(.up)))]
    }
    var median: Double { quantile(0.5) }
    var mean: Double { values.reduce(0, +) / Double(values.count) }
    var p99: Double { quantile(0.99) }
}

/// Calls `body` (connect or bind) with the Unix socket address of `path`.
func withUnixAddress(_ path: String, _ body: (UnsafePointer<sockaddr>, socklen_t) -> Int32) throws -> Int32 {
    var address = sockaddr_un()
    address.sun_family = sa_family_t(AF_UNIX)
    let bytes = Array(path.utf8)
    guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else { throw BenchError("socket path too long: \(path)") }
    withUnsafeMutableBytes(of: &address.sun_path) { raw in
        raw.copyBytes(from: bytes)
        raw[bytes.count] = 0
    }
    return withUnsafePointer(to: &address) {
        $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { body($0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
    }
}

/// A blocking line client on a Unix socket: what a compiled client does, and nothing more.
final class LineSocket: @unchecked Sendable {
    private let fd: Int32

    init(path: String) throws {
        fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw BenchError("socket() failed") }
        let descriptor = fd
        guard try withUnixAddress(path, { connect(descriptor, $0, $1) }) == 0 else {
            close(fd)
            throw BenchError("cannot connect to \(path): \(String(cString: strerror(errno)))")
        }
    }

    deinit { close(fd) }

    /// Sends `line` (which ends in "\n") and reads the next line back; its length.
    @discardableResult
    func roundTrip(_ line: [UInt8]) throws -> Int {
        var sent = 0
        while sent < line.count {
            let n = line[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            guard n > 0 else { throw BenchError("write failed: \(String(cString: strerror(errno)))") }
            sent += n
        }
        return try readLine()
    }

    /// The line `roundTrip` last read, as text.
    var lastLine: String { String(decoding: storage[lineStart..<lineEnd], as: UTF8.self) }

    private var storage = [UInt8](repeating: 0, count: 1 << 16)
    private var start = 0, end = 0, lineStart = 0, lineEnd = 0

    private func readLine() throws -> Int {
        while true {
            if let newline = storage[start..<end].firstIndex(of: UInt8(ascii: "\n")) {
                (lineStart, lineEnd) = (start, newline)
                start = newline + 1
                return lineEnd - lineStart
            }
            if start > 0 {
                storage.withUnsafeMutableBufferPointer { raw in
                    _ = memmove(raw.baseAddress!, raw.baseAddress! + start, end - start)
                }
                end -= start
                start = 0
            }
            if end == storage.count { storage.append(contentsOf: repeatElement(0, count: storage.count)) }
            let n = storage.withUnsafeMutableBufferPointer { raw in read(fd, raw.baseAddress! + end, raw.count - end) }
            guard n > 0 else { throw BenchError("the server closed the connection") }
            end += n
        }
    }
}

/// A real sd_notify endpoint, so readiness is measured the way systemd sees it.
final class NotifyEndpoint {
    let path: String
    private let fd: Int32

    init(path: String) throws {
        self.path = path
        unlink(path)
        fd = socket(AF_UNIX, Int32(SOCK_DGRAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        let descriptor = fd
        guard descriptor >= 0, try withUnixAddress(path, { bind(descriptor, $0, $1) }) == 0 else { throw BenchError("cannot bind \(path)") }
    }

    deinit { close(fd) }

    /// Blocks until a datagram holds READY=1; false after `timeout` seconds.
    func waitForReady(timeout: Double) -> Bool {
        let deadline = monotonicSeconds() + timeout
        var buffer = [UInt8](repeating: 0, count: 4096)
        while monotonicSeconds() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let n = buffer.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if n > 0, String(decoding: buffer[0..<n], as: UTF8.self).split(separator: "\n").contains("READY=1") { return true }
        }
        return false
    }
}

/// One real savingsd process on the benchmark's socket and database.
final class DaemonUnderTest {
    let process = Process()
    let socket: String
    /// Seconds from spawning to READY=1 on NOTIFY_SOCKET.
    let startSeconds: Double

    init(executable: String, directory: String, database: String) throws {
        socket = directory + "/d.sock"
        let notify = try NotifyEndpoint(path: directory + "/notify")
        process.executableURL = URL(fileURLWithPath: executable)
        process.arguments = ["--socket", socket, "--database", database, "--log-level", "warning"]
        process.environment = [
            "PATH": "/usr/bin:/bin", "HOME": directory, "TZ": "UTC", "NOTIFY_SOCKET": notify.path,
            "XDG_RUNTIME_DIR": directory + "/run", "XDG_CONFIG_HOME": directory + "/config", "XDG_DATA_HOME": directory + "/data",
        ]
        let logPath = directory + "/daemon.log"
        if !FileManager.default.fileExists(atPath: logPath) { _ = FileManager.default.createFile(atPath: logPath, contents: nil) }
        guard let log = FileHandle(forWritingAtPath: logPath) else { throw BenchError("cannot write \(logPath)") }
        log.seekToEndOfFile()
        process.standardOutput = log
        process.standardError = log
        let start = monotonicSeconds()
        try Children.run(process)
        guard notify.waitForReady(timeout: 120) else {
            process.terminate()
            throw BenchError("savingsd did not report READY=1 (see \(directory)/daemon.log)")
        }
        startSeconds = monotonicSeconds() - start
    }

    deinit { stop() }

    func stop() {
        guard process.isRunning else { return }
        process.terminate()
        process.waitUntilExit()
    }

    /// Resident and peak resident memory in bytes, from /proc; the resident part split into
    /// anonymous memory (the daemon's own data) and file-backed pages (mapped code and data
    /// of the binary and its libraries).
    var memory: (rss: Int, peak: Int, anonymous: Int, fileBacked: Int) {
        let status = (try? String(contentsOfFile: "/proc/\(process.processIdentifier)/status", encoding: .utf8)) ?? ""
        func field(_ name: String) -> Int {
            guard let line = status.split(separator: "\n").first(where: { $0.hasPrefix(name + ":") }) else { return 0 }
            return (Int(line.split(separator: " ").dropFirst().first ?? "0") ?? 0) * 1024
        }
        return (field("VmRSS"), field("VmHWM"), field("RssAnon"), field("RssFile"))
    }

    func client() throws -> RPCClient { try RPCClient(socketPath: socket) }
}

/// Runs a program to completion; its standard output, or an error with its standard error.
@discardableResult
func run(_ executable: String, _ arguments: [String], input: String? = nil) throws -> String {
    let process = Process()
    process.executableURL = URL(fileURLWithPath: executable)
    process.arguments = arguments
    // Standard error goes to a file: a pipe left unread while standard output is read would
    // stall a program with much to say on both.
    let out = Pipe()
    let errorPath = NSTemporaryDirectory() + "bench-stderr-\(UUID().uuidString)"
    guard FileManager.default.createFile(atPath: errorPath, contents: nil), let err = FileHandle(forUpdatingAtPath: errorPath) else {
        throw BenchError("cannot create \(errorPath)")
    }
    defer {
        try? err.close()
        try? FileManager.default.removeItem(atPath: errorPath)
    }
    process.standardOutput = out
    process.standardError = err
    let stdin = Pipe()
    process.standardInput = input == nil ? FileHandle.nullDevice : stdin
    try Children.run(process)
    if let input {
        stdin.fileHandleForWriting.write(Data(input.utf8))
        try stdin.fileHandleForWriting.close()
    }
    let output = out.fileHandleForReading.readDataToEndOfFile()
    process.waitUntilExit()
    try err.seek(toOffset: 0)
    let errors = err.readDataToEndOfFile()
    guard process.terminationStatus == 0 else {
        throw BenchError("\(executable) \(arguments.joined(separator: " ")) failed: \(String(decoding: errors, as: UTF8.self).prefix(400))")
    }
    return String(decoding: output, as: UTF8.self)
}

/// The full path of a program on PATH, if installed.
func which(_ name: String) -> String? {
    for directory in (ProcessInfo.processInfo.environment["PATH"] ?? "/usr/bin:/bin").split(separator: ":") {
        let path = "\(directory)/\(name)"
        if access(path, X_OK) == 0 { return path }
    }
    return nil
}

@_silgen_name("sched_getaffinity")
private func schedGetAffinity(_ thread: pid_t, _ size: Int, _ mask: UnsafeMutableRawPointer) -> Int32
@_silgen_name("sched_setaffinity")
private func schedSetAffinity(_ thread: pid_t, _ size: Int, _ mask: UnsafeRawPointer) -> Int32

/// Which CPUs a thread may run on. A round trip between two processes costs very different
/// amounts depending on whether the kernel wakes the other side on the same CPU (a switch) or
/// on another one (an interrupt to wake that CPU); the scheduler picks either, so latency is
/// measured with both placements fixed, for the baseline and the daemon alike.
enum Placement {
    /// glibc's `cpu_set_t`: 1024 CPUs.
    private static let setBytes = 128

    /// The CPUs this process may use, in order.
    static var allowedCPUs: [Int] {
        var set = [UInt8](repeating: 0, count: setBytes)
        guard set.withUnsafeMutableBytes({ schedGetAffinity(0, setBytes, $0.baseAddress!) }) == 0 else { return [] }
        return (0..<(setBytes * 8)).filter { set[$0 / 8] & (1 << UInt8($0 % 8)) != 0 }
    }

    /// Restricts one thread (0: the calling one) to `cpus`.
    static func pin(thread: pid_t, to cpus: [Int]) throws {
        var set = [UInt8](repeating: 0, count: setBytes)
        for cpu in cpus { set[cpu / 8] |= 1 << UInt8(cpu % 8) }
        guard set.withUnsafeBytes({ schedSetAffinity(thread, setBytes, $0.baseAddress!) }) == 0 else {
            throw BenchError("sched_setaffinity(\(thread)): errno \(errno)")
        }
    }

    /// Restricts every thread of a process (threads it starts later inherit the setting).
    static func pin(process: pid_t, to cpus: [Int]) throws {
        let tasks = (try? FileManager.default.contentsOfDirectory(atPath: "/proc/\(process)/task")) ?? []
        for task in tasks.compactMap({ pid_t($0) }) { try pin(thread: task, to: cpus) }
    }
}

/// Raises this process's soft limit of open files to `count` (at most the hard limit); the
/// processes it starts inherit it.
func raiseOpenFileLimit(to count: rlim_t) {
    var limit = rlimit()
    getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
    limit.rlim_cur = min(limit.rlim_max, max(limit.rlim_cur, count))
    setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
}

/// The processes the benchmark starts (daemons, the echo server, the web server, tools), so an
/// interrupted run stops them rather than leave them running.
enum Children {
    private static let started = Mutex<[Process]>([])

    /// Starts `process` and keeps it for `stopAll`.
    static func run(_ process: Process) throws {
        try process.run()
        started.withLock { $0.append(process) }
    }

    /// Sends SIGTERM to every one still running (each stops by itself: the daemons shut down,
    /// the tools end). No waiting: the run exits at once, before its own code meets a child gone.
    static func stopAll() {
        for process in started.withLock({ $0.filter(\.isRunning) }) { kill(process.processIdentifier, SIGTERM) }
    }
}

/// On SIGINT or SIGTERM the run stops its children, removes its work directory (unless kept),
/// and exits as a process killed by that signal would (130, 143).
func stopCleanlyOnSignals(work: @escaping @Sendable () -> String?, keep: Bool) -> [any DispatchSourceSignal] {
    [SIGINT, SIGTERM].map { number in
        signal(number, SIG_IGN)
        let source = DispatchSource.makeSignalSource(signal: number, queue: .global())
        source.setEventHandler {
            Children.stopAll()
            if let work = work() {
                if keep {
                    FileHandle.standardError.write(Data("savings-bench: kept the work directory \(work)\n".utf8))
                } else {
                    try? FileManager.default.removeItem(atPath: work)
                }
            }
            FileHandle.standardError.write(Data("savings-bench: interrupted; its processes were stopped\n".utf8))
            _exit(128 + number)
        }
        source.resume()
        return source
    }
}
