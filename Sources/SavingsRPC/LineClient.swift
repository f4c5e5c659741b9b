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
        let deadline = deadlineMilliseconds.map { ContinuousClock.now + .milliseconds($0) }
        let id = nextID
        nextID += 1
        let request = RPCRequest(id: .number(String(id)), method: method, params: params)
        var object: [String: JSONValue] = [:]
        do {
            try connection.sendLine(JSONSerializer.serialize(request.json))
        } catch {
            throw .transport(error)
        }
        while true {
            let line: String?
            var wait = timeoutMilliseconds
            if let deadline, let deadlineMilliseconds {
                let left = ContinuousClock.now.duration(to: deadline) / .milliseconds(1)
                guard left >= 1 else {
                    throw .transport(LineClient.Failure(message: "no answer within \(deadlineMilliseconds / 1000) s", unreachable: false,
                                                        timedOut: true))
                }
                wait = Int32(min(Double(wait), left))
            }
            do {
                line = try connection.readLine(timeoutMilliseconds: wait)
            } catch {
                throw .transport(error)
            }
            guard let line else { throw .transport(LineClient.Failure(message: "the daemon closed the connection", unreachable: false)) }
            guard let response = try? JSONParser.parse(line), case .object(let members) = response else {
                throw .malformed("unreadable response from the daemon")
            }
            if members["id"] == nil, members["method"] != nil {
                onNotification?(response)
                continue
            }
            object = members
            break
        }
        if let error = object["error"]?.objectValue {
            throw .remote(RPCError(code: error["code"]?.intValue ?? 0, message: error["message"]?.stringValue ?? "error",
                                   data: error["data"]))
        }
        guard let result = object["result"] else { throw .malformed("response without result") }
        return result
    }
}
