import Foundation
#if canImport(Glibc)
import Glibc
#endif

/// A blocking client connection to a line-oriented Unix socket: savingsctl and the
/// integration tests talk to savingsd through it exactly as any other client would.
public final class LineClient {
    public struct Failure: Error, Sendable, CustomStringConvertible {
        public var message: String
        /// The daemon could not be reached at all (no socket, refused, permission).
        public var unreachable: Bool
        /// The system's error number, when a system call failed (`EACCES` on connect, ...).
        public var code: Int32?
        /// Nothing came from the daemon within the wait.
        public var timedOut = false
        public var description: String { message }

        public init(message: String, unreachable: Bool, code: Int32? = nil, timedOut: Bool = false) {
            self.message = message
            self.unreachable = unreachable
            self.code = code
            self.timedOut = timedOut
        }
    }

    private var fd: Int32
    private var buffer: [UInt8] = []

    public init(socketPath: String) throws(Failure) {
        let fd = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue) | Int32(SOCK_CLOEXEC.rawValue), 0)
        guard fd >= 0 else { throw Failure(message: "socket(): \(Self.lastError())", unreachable: true) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        let bytes = Array(socketPath.utf8)
        guard bytes.count < MemoryLayout.size(ofValue: address.sun_path) else {
            Glibc.close(fd)
            throw Failure(message: "socket path is too long: \(socketPath)", unreachable: true)
        }
        withUnsafeMutableBytes(of: &address.sun_path) { buffer in
            buffer.copyBytes(from: bytes)
            buffer[bytes.count] = 0
        }
        let result = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) {
                connect(fd, $0, socklen_t(MemoryLayout<sockaddr_un>.size))
            }
        }
        guard result == 0 else {
            let code = errno
            let reason = Self.lastError()
            Glibc.close(fd)
            throw Failure(message: "cannot connect to \(socketPath): \(reason)", unreachable: true, code: code)
        }
        self.fd = fd
    }

    deinit { if fd >= 0 { Glibc.close(fd) } }

    /// Closes the connection now.
    public func close() {
        if fd >= 0 { Glibc.close(fd) }
        fd = -1
    }

    /// Makes a send that cannot progress for `milliseconds` fail ("temporarily unavailable")
    /// instead of blocking: for callers that must not hang on a peer that stopped reading.
    public func setSendTimeout(milliseconds: Int) {
        var value = timeval(tv_sec: milliseconds / 1000, tv_usec: (milliseconds % 1000) * 1000)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &value, socklen_t(MemoryLayout<timeval>.size))
    }

    /// Sends raw bytes (a newline is not added).
    public func send(_ bytes: [UInt8]) throws(Failure) {
        var offset = 0
        while offset < bytes.count {
            let written = bytes[offset...].withUnsafeBytes { Glibc.send(fd, $0.baseAddress, $0.count, Int32(MSG_NOSIGNAL)) }
            if written < 0 {
                if errno == EINTR { continue }
                throw Failure(message: "write failed: \(Self.lastError())", unreachable: false)
            }
            offset += written
        }
    }

    public func sendLine(_ line: String) throws(Failure) {
        try send(Array(line.utf8) + [0x0A])
    }

    /// Signals end of input; the daemon still answers what it has received.
    public func shutdownWrite() { shutdown(fd, Int32(SHUT_WR)) }

    /// A line that has already arrived, without waiting; nil when none has (yet).
    public func pollLine() throws(Failure) -> String? {
        if buffer.contains(0x0A) { return try readLine(timeoutMilliseconds: 0) }
        var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
        guard poll(&pollFD, 1, 0) > 0 else { return nil }
        do {
            return try readLine(timeoutMilliseconds: 0)
        } catch where error.timedOut {
            return nil
        }
    }

    /// Reads one line (without the newline); nil at end of stream. Throws on timeout.
    public func readLine(timeoutMilliseconds: Int32 = 30_000) throws(Failure) -> String? {
        while true {
            if let newline = buffer.firstIndex(of: 0x0A) {
                let line = String(decoding: buffer[..<newline], as: UTF8.self)
                buffer.removeSubrange(...newline)
                return line
            }
            var pollFD = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            let ready = poll(&pollFD, 1, timeoutMilliseconds)
            if ready < 0, errno == EINTR { continue }
            guard ready > 0 else {
                throw Failure(message: "no answer within \(timeoutMilliseconds / 1000) s", unreachable: false, timedOut: true)
            }
            var chunk = [UInt8](repeating: 0, count: 65536)
            let count = chunk.withUnsafeMutableBytes { recv(fd, $0.baseAddress, $0.count, 0) }
            if count < 0 {
                if errno == EINTR { continue }
                if errno == ECONNRESET { return nil }
                throw Failure(message: "read failed: \(Self.lastError())", unreachable: false)
            }
            if count == 0 {
                guard !buffer.isEmpty else { return nil }
                let line = String(decoding: buffer, as: UTF8.self)
                buffer.removeAll()
                return line
            }
            buffer.append(contentsOf: chunk[..<count])
        }
    }

    private static func lastError() -> String { String(cString: strerror(errno)) }
}

/// JSON-RPC calls over a `LineClient`.
public final class RPCClient {
    public enum CallError: Error, Sendable {
        case transport(LineClient.Failure)
        case remote(RPCError)
        case malformed(String)
        /// Our side failed: a file to send could not be read, or one received not written.
        case local(String)
    }

    public let connection: LineClient
    private var nextID = 1

    public init(socketPath: String) throws(LineClient.Failure) {
        connection = try LineClient(socketPath: socketPath)
    }

    /// Calls `method` and returns its result, or throws the daemon's error.
    /// `timeoutMilliseconds` bounds each silence: the wait for the answer or for the next
    /// notification before it (progress of long work). `deadlineMilliseconds`, if given, bounds
    /// the whole call however much progress arrives.
    /// Notifications arriving before the answer (progress) go to `onNotification`.
    public func call(_ method: String, _ params: [String: JSONValue] = [:], timeoutMilliseconds: Int32 = 30_000,
                     deadlineMilliseconds: Int? = nil,
                     onNotification: ((JSONValue) -> Void)? = nil) throws(CallError) -> JSONValue {
        let wait = Wait(silence: timeoutMilliseconds, deadline: deadlineMilliseconds)
        let id = try send(method, params)
        while true {
            switch try next(wait) {
            case .notification(let notification): onNotification?(notification)
            case .response(let responseID, let result) where responseID == id || responseID == .null: return try Self.value(result)
            case .response: continue
            }
        }
    }

    /// Calls a method that takes an upload (`FileTransfer`) with the bytes `read` gives, in
    /// turn, until it gives none. `size`, when known, is announced so an oversized file is
    /// refused before a byte is sent; `onSent` hears the bytes sent so far.
    public func upload(_ method: String, _ params: [String: JSONValue], size: Int?,
                       read: (_ maxBytes: Int) throws -> [UInt8], timeoutMilliseconds: Int32 = 30_000,
                       deadlineMilliseconds: Int? = nil, onSent: ((Int) -> Void)? = nil,
                       onNotification: ((JSONValue) -> Void)? = nil) throws(CallError) -> JSONValue {
        let wait = Wait(silence: timeoutMilliseconds, deadline: deadlineMilliseconds)
        var params = params
        params["upload"] = .object(size.map { ["size": .int($0)] } ?? [:])
        let id = try send(method, params)
        // The daemon checks the call first: a refusal is the answer, and nothing is sent.
        var maxChunk = 0
        waiting: while true {
            switch try next(wait) {
            case .notification(let notification)
                where notification["method"]?.stringValue == FileTransfer.uploadReady && notification["params"]?["id"] == id.json:
                maxChunk = min(FileTransfer.chunkBytes, notification["params"]?["max_chunk_bytes"]?.intValue ?? 0)
                break waiting
            case .notification(let notification): onNotification?(notification)
            case .response(let responseID, let result) where responseID == id || responseID == .null: return try Self.value(result)
            case .response: continue
            }
        }
        guard maxChunk > 0 else { throw .malformed("the daemon's upload.ready names no chunk size") }
        connection.setSendTimeout(milliseconds: Int(timeoutMilliseconds))
        defer { connection.setSendTimeout(milliseconds: 0) }
        var sent = 0
        var early: Result<JSONValue, RPCError>?
        do {
            sending: while true {
                let bytes: [UInt8]
                do {
                    bytes = try read(maxChunk)
                } catch {
                    // Ours to give up: the daemon discards what it has and the connection goes on.
                    try connection.sendLine(JSONSerializer.serialize(FileTransfer.notification(FileTransfer.uploadAbort, id: id)))
                    _ = try? response(to: id, wait)
                    throw CallError.local("cannot read the file: \(error)")
                }
                if bytes.isEmpty { break }
                try connection.send(FileTransfer.chunkLine(FileTransfer.uploadChunk, id: id, bytes: bytes) + [0x0A])
                sent += bytes.count
                onSent?(sent)
                // What the daemon said meanwhile: progress, or an answer that ends the upload early.
                while let line = try connection.pollLine() {
                    switch try Self.message(line) {
                    case .notification(let notification): onNotification?(notification)
                    case .response(let responseID, let result) where responseID == id || responseID == .null:
                        early = result
                        break sending
                    case .response: continue
                    }
                }
            }
            if early == nil { try connection.sendLine(JSONSerializer.serialize(FileTransfer.notification(FileTransfer.uploadEnd, id: id))) }
        } catch let failure as LineClient.Failure {
            // The daemon closed the connection while we sent: its answer says why, if it gave one.
            do {
                return try response(to: id, wait)
            } catch {
                if case .remote = error { throw error }
                throw .transport(failure)
            }
        } catch let error as CallError {
            throw error
        } catch {
            throw .malformed("\(error)")
        }
        if let early { return try Self.value(early) }
        return try response(to: id, wait)
    }

    /// Calls a method that gives a download (`FileTransfer`): `onStart` hears the file's size,
    /// `write` each chunk in order. The file is complete only when this returns.
    public func download(_ method: String, _ params: [String: JSONValue], timeoutMilliseconds: Int32 = 30_000,
                         deadlineMilliseconds: Int? = nil, onStart: ((Int) -> Void)? = nil,
                         write: (_ bytes: Data, _ received: Int) throws -> Void,
                         onNotification: ((JSONValue) -> Void)? = nil) throws(CallError) -> JSONValue {
        let wait = Wait(silence: timeoutMilliseconds, deadline: deadlineMilliseconds)
        var params = params
        params["download"] = true
        let id = try send(method, params)
        var expected: Int?
        var received = 0
        while true {
            switch try next(wait) {
            case .notification(let notification) where notification["params"]?["id"] == id.json:
                switch notification["method"]?.stringValue {
                case FileTransfer.downloadStart:
                    expected = notification["params"]?["bytes"]?.intValue
                    onStart?(expected ?? 0)
                case FileTransfer.downloadChunk:
                    guard let text = notification["params"]?["data"]?.stringValue, let bytes = Data(base64Encoded: text) else {
                        throw .malformed("a download chunk is not base64")
                    }
                    received += bytes.count
                    do {
                        try write(bytes, received)
                    } catch {
                        throw .local("cannot write the file: \(error)")
                    }
                default:
                    onNotification?(notification)
                }
            case .notification(let notification): onNotification?(notification)
            case .response(let responseID, let result) where responseID == id || responseID == .null:
                let value = try Self.value(result)
                guard let expected, expected == received, value["bytes"]?.intValue == received else {
                    throw .malformed("the download ended after \(received) of \(expected ?? 0) bytes")
                }
                return value
            case .response: continue
            }
        }
    }

    /// How long to wait: each silence, and the whole call.
    struct Wait {
        var silence: Int32
        var deadline: ContinuousClock.Instant?
        var deadlineMilliseconds: Int?

        init(silence: Int32, deadline milliseconds: Int?) {
            self.silence = silence
            deadlineMilliseconds = milliseconds
            deadline = milliseconds.map { ContinuousClock.now + .milliseconds($0) }
        }
    }

    /// A line from the daemon. A response whose id is null answers whatever was asked (a
    /// refused connection, a line the daemon could not read).
    enum Message {
        case notification(JSONValue)
        case response(RequestID, Result<JSONValue, RPCError>)
    }

    private func send(_ method: String, _ params: [String: JSONValue]) throws(CallError) -> RequestID {
        let id = RequestID.number(String(nextID))
        nextID += 1
        do {
            try connection.sendLine(JSONSerializer.serialize(RPCRequest(id: id, method: method, params: params).json))
        } catch {
            throw .transport(error)
        }
        return id
    }

    /// The response to `id`, notifications in between dropped.
    private func response(to id: RequestID, _ wait: Wait) throws(CallError) -> JSONValue {
        while true {
            if case .response(let responseID, let result) = try next(wait), responseID == id || responseID == .null { return try Self.value(result) }
        }
    }

    /// The next line, within the wait.
    private func next(_ wait: Wait) throws(CallError) -> Message {
        var milliseconds = wait.silence
        if let deadline = wait.deadline, let total = wait.deadlineMilliseconds {
            let left = ContinuousClock.now.duration(to: deadline) / .milliseconds(1)
            guard left >= 1 else {
                throw .transport(LineClient.Failure(message: "no answer within \(total / 1000) s", unreachable: false, timedOut: true))
            }
            milliseconds = Int32(min(Double(milliseconds), left))
        }
        let line: String?
        do {
            line = try connection.readLine(timeoutMilliseconds: milliseconds)
        } catch {
            throw .transport(error)
        }
        guard let line else { throw .transport(LineClient.Failure(message: "the daemon closed the connection", unreachable: false)) }
        return try Self.message(line)
    }

    static func value(_ result: Result<JSONValue, RPCError>) throws(CallError) -> JSONValue {
        switch result {
        case .success(let value): return value
        case .failure(let error): throw .remote(error)
        }
    }

    static func message(_ line: String) throws(CallError) -> Message {
        guard let response = try? JSONParser.parse(line), case .object(let members) = response else {
            throw .malformed("unreadable response from the daemon")
        }
        if members["id"] == nil, members["method"] != nil { return .notification(response) }
        let id: RequestID = switch members["id"] {
        case .string(let text)?: .string(text)
        case .number(let text)?: .number(text)
        default: .null
        }
        if let error = members["error"]?.objectValue {
            return .response(id, .failure(RPCError(code: error["code"]?.intValue ?? 0, message: error["message"]?.stringValue ?? "error",
                                                   data: error["data"])))
        }
        guard let result = members["result"] else { throw .malformed("response without result") }
        return .response(id, .success(result))
    }
}
