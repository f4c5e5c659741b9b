import Foundation
import SavingsCLI
import SavingsRPC

/// Files travel over the connection: savingsctl opens and writes them with the user's own
/// permissions, so a daemon running as another user (the system service) never needs to see
/// the user's files. A download is written under a temporary name beside its target (mode
/// 0600) and renamed only once the daemon's answer says it is complete.
extension ClientSession {
    /// Sends the file at `path` (`-`: standard input) to an upload method. On a terminal a bar
    /// shows the bytes sent, then the daemon's own progress (`total` counts its `unit`).
    func upload(_ method: String, _ params: [String: JSONValue], file path: String, unit: String, total: Int? = nil) throws -> JSONValue {
        let source = try SourceFile(path)
        let bar = isatty(STDERR_FILENO) == 1 && !json ? ProgressLine(total: total, unit: unit) : nil
        defer { bar?.finish() }
        do {
            return try client.upload(
                method, params.merging(["progress": true]) { old, _ in old }, size: source.size,
                read: { try source.read(upTo: $0) },
                timeoutMilliseconds: silence, deadlineMilliseconds: Self.longRunningDeadline,
                onSent: { sent in bar?.show(phase: "sending", done: sent, total: source.size, unit: "bytes") },
                onNotification: { bar?.show($0) })
        } catch {
            throw Self.failure(error, method: method)
        }
    }

    /// Receives a download method's file into `path`, or onto standard output when it is nil.
    func download(_ method: String, _ params: [String: JSONValue], to path: String?, overwrite: Bool, unit: String) throws -> JSONValue {
        let target = try path.map { try PartialFile(beside: $0, overwrite: overwrite) }
        let bar = isatty(STDERR_FILENO) == 1 && !json ? ProgressLine(total: nil, unit: unit) : nil
        defer { bar?.finish() }
        var size = 0
        do {
            let result = try client.download(
                method, params.merging(["progress": true]) { old, _ in old },
                timeoutMilliseconds: silence, deadlineMilliseconds: Self.longRunningDeadline,
                onStart: { size = $0 },
                write: { bytes, received in
                    try (target?.write(bytes) ?? SourceFile.writeAll(bytes, to: STDOUT_FILENO))
                    bar?.show(phase: "receiving", done: received, total: size, unit: "bytes")
                },
                onNotification: { bar?.show($0) })
            try target?.complete()
            return result
        } catch let error as RPCClient.CallError {
            target?.discard()
            throw Self.failure(error, method: method)
        } catch {
            target?.discard()
            throw error
        }
    }
}

extension ProgressLine {
    /// A daemon's progress notification. The bytes it reports receiving or sending are shown
    /// from this side, as they arrive or leave.
    func show(_ notification: JSONValue) {
        let params = notification["params"] ?? .null
        let phase = Render.text(params["phase"])
        guard phase != "receiving", phase != "sending" else { return }
        show(phase: phase, done: params["done"]?.intValue ?? 0, total: params["total"]?.intValue)
    }
}

/// A file savingsctl reads to send: opened once, read in chunks.
final class SourceFile {
    let descriptor: Int32
    let size: Int?
    private let owned: Bool

    init(_ path: String) throws {
        if path == "-" {
            descriptor = STDIN_FILENO
            owned = false
        } else {
            descriptor = open(path, O_RDONLY | O_CLOEXEC)
            guard descriptor >= 0 else { throw ClientFailure.usage("cannot read \(path): \(String(cString: strerror(errno)))") }
            owned = true
        }
        var info = stat()
        size = fstat(descriptor, &info) == 0 && (info.st_mode & S_IFMT) == S_IFREG ? Int(info.st_size) : nil
        if (info.st_mode & S_IFMT) == S_IFDIR {
            if owned { close(descriptor) }
            throw ClientFailure.usage("\(path) is a directory, not a file")
        }
    }

    deinit { if owned { close(descriptor) } }

    /// Up to `count` bytes; empty at the end.
    func read(upTo count: Int) throws -> [UInt8] {
        var bytes = [UInt8](repeating: 0, count: count)
        var filled = 0
        while filled < count {
            let got = bytes.withUnsafeMutableBytes { Glibc.read(descriptor, $0.baseAddress! + filled, count - filled) }
            if got < 0, errno == EINTR { continue }
            guard got >= 0 else { throw ClientFailure(message: String(cString: strerror(errno)), exitCode: 1) }
            if got == 0 { break }
            filled += got
        }
        bytes.removeSubrange(filled...)
        return bytes
    }

    static func writeAll(_ bytes: Data, to descriptor: Int32) throws {
        try bytes.withUnsafeBytes { (buffer: UnsafeRawBufferPointer) in
            var offset = 0
            while offset < buffer.count {
                let written = Glibc.write(descriptor, buffer.baseAddress! + offset, buffer.count - offset)
                if written < 0, errno == EINTR { continue }
                guard written > 0 else { throw ClientFailure(message: String(cString: strerror(errno)), exitCode: 1) }
                offset += written
            }
        }
    }
}

/// A download being written: `NAME.partial-XXXXXX` beside `NAME`, mode 0600, renamed into place
/// once complete, removed on failure or when savingsctl is interrupted.
final class PartialFile {
    let path: String
    let temporary: String
    let overwrite: Bool
    private var descriptor: Int32

    init(beside path: String, overwrite: Bool) throws {
        self.path = path
        self.overwrite = overwrite
        var info = stat()
        if stat(path, &info) == 0 {
            guard overwrite, (info.st_mode & S_IFMT) != S_IFDIR else {
                throw ClientFailure(message: "\(path) already exists (--overwrite replaces it)", exitCode: 1)
            }
        }
        var template = Array((path + ".partial-XXXXXX").utf8CString)
        descriptor = template.withUnsafeMutableBufferPointer { mkstemp($0.baseAddress!) }
        guard descriptor >= 0 else {
            throw ClientFailure(message: "cannot create \(path): \(String(cString: strerror(errno)))", exitCode: 1)
        }
        _ = fcntl(descriptor, F_SETFD, FD_CLOEXEC)
        temporary = String(decoding: template.dropLast().map { UInt8(bitPattern: $0) }, as: UTF8.self)
        Interruption.removeOnSignal(temporary)
    }

    func write(_ bytes: Data) throws { try SourceFile.writeAll(bytes, to: descriptor) }

    /// Makes the file durable and gives it its name (never replacing one without `overwrite`).
    func complete() throws {
        defer { Interruption.removeOnSignal(nil) }
        guard fsync(descriptor) == 0, close(descriptor) == 0 else {
            descriptor = -1
            throw failure("cannot write \(path)")
        }
        descriptor = -1
        if overwrite {
            guard rename(temporary, path) == 0 else { throw failure("cannot move the file into place at \(path)") }
        } else {
            guard link(temporary, path) == 0 else {
                throw failure(errno == EEXIST ? "\(path) appeared meanwhile (--overwrite replaces it)" : "cannot create \(path)")
            }
            unlink(temporary)
        }
    }

    func discard() {
        if descriptor >= 0 { close(descriptor) }
        descriptor = -1
        unlink(temporary)
        Interruption.removeOnSignal(nil)
    }

    private func failure(_ message: String) -> ClientFailure {
        let reason = String(cString: strerror(errno))
        unlink(temporary)
        return ClientFailure(message: "\(message): \(reason)", exitCode: 1)
    }
}

/// Removes a download's temporary file when savingsctl is interrupted (Ctrl-C, a terminal
/// closed, a kill), then dies of the signal as it would have.
enum Interruption {
    nonisolated(unsafe) private static var pending: UnsafeMutablePointer<CChar>?

    static func removeOnSignal(_ path: String?) {
        let previous = pending
        pending = path.map { strdup($0) }
        free(previous)
        for signal in [SIGINT, SIGTERM, SIGHUP] {
            Glibc.signal(signal, path == nil ? SIG_DFL : { number in
                if let path = Interruption.pending { unlink(path) }
                Glibc.signal(number, SIG_DFL)
                raise(number)
            })
        }
    }
}
