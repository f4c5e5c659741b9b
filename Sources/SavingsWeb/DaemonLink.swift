import AsyncAlgorithms
import Foundation
import NIOCore
import NIOConcurrencyHelpers
import NIOExtras
import NIOPosix
import SavingsCLI
import SavingsRPC

/// The web server's way to savingsd: its Unix socket, one connection per request or per
/// subscription, with the credentials of the user who started `savingsctl web`. So the
/// daemon's access rules (allowed users and groups, read-only groups) apply unchanged, and
/// savingsd itself opens no TCP port.
public struct DaemonLink: Sendable {
    public let socketPath: String
    /// Connections kept open for the calls that come often and only read (`keptAnswer`).
    let kept: KeptConnections

    public init(socketPath: String) {
        self.socketPath = socketPath
        kept = KeptConnections()
    }

    /// Calls `method`, which only reads, on a connection kept open between calls (the dashboard:
    /// a connection of its own each time cost its set-up on both sides); its answer unread.
    public func keptAnswer(_ method: String, _ params: [String: JSONValue] = [:]) async throws(Failure) -> Answer {
        try await kept.answer(Self.requestLine(method, params), method: method, link: self)
    }

    /// Why a call did not give a result: the daemon's error (with savingsctl's message and next
    /// step), or the daemon out of reach.
    public enum Failure: Error, Sendable, Equatable {
        case remote(RPCError, message: String)
        case unreachable(String)

        /// What the page shows.
        public var message: String {
            switch self {
            case .remote(_, let message): message
            case .unreachable(let reason): "savingsd cannot be reached: \(reason). It may be stopped or restarting; reload this page in a moment."
            }
        }

        /// Any error as a failure (one from `async let` comes untyped).
        public static func of(_ error: any Error) -> Failure { (error as? Failure) ?? .unreachable("\(error)") }

        /// The daemon's error kind (`read_only`, `not_found`, ...), when it answered one.
        public var kind: String? {
            if case .remote(let error, _) = self { return error.data?["kind"]?.stringValue }
            return nil
        }
    }

    typealias Line = NIOAsyncChannel<ByteBuffer, ByteBuffer>

    func connect() async throws(Failure) -> Line {
        do {
            return try await ClientBootstrap(group: MultiThreadedEventLoopGroup.singleton)
                // An answer (a dashboard of a thousand goals is 200 KB) read in few large reads,
                // not from 2 KB upwards.
                .channelOption(.recvAllocator, value: AdaptiveRecvByteBufferAllocator(minimum: 4_096, initial: 65_536, maximum: 1 << 20))
                .connect(unixDomainSocketPath: socketPath) { channel in
                    channel.eventLoop.makeCompletedFuture {
                        try channel.pipeline.syncOperations.addHandler(ByteToMessageHandler(LineBasedFrameDecoder()))
                        return try Line(wrappingChannelSynchronously: channel)
                    }
                }
        } catch {
            throw .unreachable(Self.reason(connecting: error))
        }
    }

    /// Why the socket could not be reached, in words (the page showed NIO's
    /// `connect(descriptor:addr:size:)… errno: 2`).
    static func reason(connecting error: any Error) -> String {
        switch (error as? IOError)?.errnoCode {
        case ENOENT?: "its socket is not there (the daemon is not running)"
        case ECONNREFUSED?: "nothing answers on its socket (the daemon is not running)"
        case EACCES?, EPERM?: "you may not use its socket"
        case EAGAIN?: "it is too busy to take the connection"
        default: "the connection to its socket failed"
        }
    }

    /// Calls `method` and returns its result.
    public func call(_ method: String, _ params: [String: JSONValue] = [:]) async throws(Failure) -> JSONValue {
        try Self.result(of: try await answer(method, params), method: method)
    }

    /// An answer as it came: its text, and where each top-level member lies in it.
    public struct Answer: Sendable {
        public var bytes: [UInt8]
        public var members: [(key: String, value: Range<Int>)]

        /// Where `key`'s value lies.
        public func range(of key: String) -> Range<Int>? { members.first { $0.key == key }?.value }
    }

    /// Calls `method` and returns its answer unread (progress notifications skipped).
    public func answer(_ method: String, _ params: [String: JSONValue] = [:]) async throws(Failure) -> Answer {
        try await exchange(method, params, notified: nil)
    }

    private typealias Writer = NIOAsyncChannelOutboundWriter<ByteBuffer>

    /// Sends `method` on a connection of its own and reads to its answer; each notification
    /// before it goes to `notified` (progress is skipped without one).
    private func exchange(_ method: String, _ params: [String: JSONValue],
                          notified: (@Sendable (JSONValue, Writer) async throws -> Void)?) async throws(Failure) -> Answer {
        let channel = try await connect()
        var answer: Answer?
        do {
            try await channel.executeThenClose { inbound, outbound in
                try await outbound.write(Self.requestLine(method, params))
                for try await line in inbound {
                    let bytes = Array(buffer: line)
                    guard let members = JSONParser.members(of: bytes) else {
                        throw Failure.unreachable("an answer to \(method) that is not a JSON object")
                    }
                    // Notifications have no id; the answer has ours.
                    if members.contains(where: { $0.key == "id" }) {
                        answer = Answer(bytes: bytes, members: members)
                        return
                    }
                    if let notified { try await notified(try JSONParser.parse(bytes), outbound) }
                }
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .unreachable("\(error)")
        }
        guard let answer else { throw .unreachable("the connection ended before the answer to \(method)") }
        return answer
    }

    /// An answer's result, or its error as the page says it (`WebHints`).
    public static func result(of answer: Answer, method: String) throws(Failure) -> JSONValue {
        if let error = answer.range(of: "error") {
            let error = (try? JSONParser.parse(answer.bytes, in: error)) ?? .null
            let rpcError = RPCError(code: error["code"]?.intValue ?? RPCError.internalErrorCode,
                                    message: error["message"]?.stringValue ?? "error", data: error["data"])
            throw .remote(rpcError, message: WebHints.message(for: rpcError, method: method))
        }
        guard let result = answer.range(of: "result") else { return .null }
        do {
            return try JSONParser.parse(answer.bytes, in: result)
        } catch {
            throw .unreachable("an answer to \(method) that is not JSON: \(error)")
        }
    }

    /// Subscribes to the daemon's events, calls `subscribed` once the daemon has answered the
    /// subscription (events from then on arrive), then `event` with each one's method and
    /// params, until either returns false or the connection ends (returns) or fails (throws).
    public func events(subscribed: @Sendable () async -> Bool, _ event: @Sendable (String, JSONValue) async -> Bool) async throws(Failure) {
        let channel = try await connect()
        // Cancelled (the page gone): the connection closes, which ends the reading below.
        let underlying = channel.channel
        do {
            try await withTaskCancellationHandler {
                try await Self.subscribe(channel, subscribed, event)
            } onCancel: {
                underlying.close(promise: nil)
            }
        } catch let failure as Failure {
            throw failure
        } catch {
            throw .unreachable("\(error)")
        }
    }

    private static func subscribe(_ channel: Line, _ subscribed: @Sendable () async -> Bool,
                                  _ event: @Sendable (String, JSONValue) async -> Bool) async throws {
        try await channel.executeThenClose { inbound, outbound in
            try await outbound.write(requestLine("events.subscribe"))
            for try await line in inbound {
                let message = try JSONParser.parse(Array(buffer: line))
                if let method = message["method"]?.stringValue {
                    if !(await event(method, message["params"] ?? .null)) { return }
                } else if let error = message["error"] {
                    throw Failure.unreachable("events.subscribe: \(error["message"]?.stringValue ?? "refused")")
                } else if message["id"] != nil, !(await subscribed()) {
                    return
                }
            }
        }
    }

    /// Calls an *upload* method (`tx.import`, `data.import`): `file` goes over the connection in
    /// the chunks the daemon's `upload.ready` allows ("Files over the connection"), and the
    /// answer follows once the daemon has used it. A refusal before the file is the answer.
    public func upload(_ method: String, _ params: [String: JSONValue], file: [UInt8]) async throws(Failure) -> JSONValue {
        var params = params
        params["upload"] = ["size": .int(file.count)]
        let answer = try await exchange(method, params) { message, outbound in
            guard message["method"]?.stringValue == "upload.ready" else { return }
            // Chunks as large as the daemon takes, within reason.
            let size = min(max(message["params"]?["max_chunk_bytes"]?.intValue ?? 65_536, 1_024), 1 << 20)
            var offset = 0
            while offset < file.count {
                let end = min(offset + size, file.count)
                let data = Data(file[offset..<end]).base64EncodedString()
                try await outbound.write(Self.notificationLine("upload.chunk", ["id": 1, "data": .string(data)]))
                offset = end
            }
            try await outbound.write(Self.notificationLine("upload.end", ["id": 1]))
        }
        return try Self.result(of: answer, method: method)
    }

    /// A *download* under way: its size, then its bytes as they come (the daemon waits while
    /// they are not taken); the sequence fails if the daemon's answer is an error or the
    /// connection ends early. `cancel` ends it (the browser gone).
    public struct Download: Sendable {
        public let bytes: Int
        public let chunks: AsyncThrowingChannel<ByteBuffer, any Error>
        let task: Task<Void, Never>
        /// Whether the body has begun to be read (`read` marks it).
        let reading = NIOLockedValueBox(false)

        public func cancel() { task.cancel() }

        /// Marks the download as read by a body (a download never read is given up).
        public func read() { reading.withLockedValue { $0 = true } }
    }

    /// Calls a *download* method (`db.backup`, `data.export`) and returns once the daemon has
    /// said how large the file is; a refusal before that is thrown.
    public func download(_ method: String, _ params: [String: JSONValue] = [:]) async throws(Failure) -> Download {
        var params = params
        params["download"] = true
        let channel = try await connect()
        let chunks = AsyncThrowingChannel<ByteBuffer, any Error>()
        let started = OneShot<Int>()
        let task = Task {
            let underlying = channel.channel
            do {
                try await withTaskCancellationHandler {
                    try await channel.executeThenClose { inbound, outbound in
                        try await outbound.write(Self.requestLine(method, params))
                        var expected = 0, received = 0
                        for try await line in inbound {
                            let bytes = Array(buffer: line)
                            let message = try JSONParser.parse(bytes)
                            switch message["method"]?.stringValue {
                            case "download.start"?:
                                expected = message["params"]?["bytes"]?.intValue ?? 0
                                started.resume(.success(expected))
                            case "download.chunk"?:
                                guard let text = message["params"]?["data"]?.stringValue, let data = Data(base64Encoded: text) else {
                                    throw Failure.unreachable("a chunk of \(method) that is not base64")
                                }
                                received += data.count
                                await chunks.send(ByteBuffer(bytes: data))
                            case nil where message["id"] != nil:
                                if let members = JSONParser.members(of: bytes) {
                                    _ = try Self.result(of: Answer(bytes: bytes, members: members), method: method)
                                }
                                guard received == expected else { throw Failure.unreachable("\(method) ended after \(received) of \(expected) bytes") }
                                // An answer that never said how large the file is, is no download.
                                if started.resume(.failure(.unreachable("\(method) answered without sending a file"))) { return }
                                chunks.finish()
                                return
                            default: continue
                            }
                        }
                        throw Failure.unreachable("the connection ended before the answer to \(method)")
                    }
                } onCancel: {
                    underlying.close(promise: nil)
                }
            } catch {
                let failure = (error as? Failure) ?? .unreachable("\(error)")
                if !started.resume(.failure(failure)) { chunks.fail(failure) }
            }
        }
        switch await started.value {
        case .success(let bytes):
            let download = Download(bytes: bytes, chunks: chunks, task: task)
            // A browser gone before the answer began has its body never read: the download is
            // given up after a minute without a reader rather than held open.
            Task {
                try? await Task.sleep(for: .seconds(60))
                if !download.reading.withLockedValue({ $0 }) { download.cancel() }
            }
            return download
        case .failure(let failure): throw failure
        }
    }

    /// A notification line (no id): `method` with `params`.
    private static func notificationLine(_ method: String, _ params: [String: JSONValue]) -> ByteBuffer {
        let notification: JSONValue = ["jsonrpc": "2.0", "method": .string(method), "params": .object(params)]
        return ByteBuffer(bytes: JSONSerializer.bytes(notification) + [0x0A])
    }

    /// A request line: `method` with `params`, id 1 (one request per connection).
    static func requestLine(_ method: String, _ params: [String: JSONValue] = [:]) -> ByteBuffer {
        let request: JSONValue = ["jsonrpc": "2.0", "id": 1, "method": .string(method), "params": .object(params)]
        return ByteBuffer(bytes: JSONSerializer.bytes(request) + [0x0A])
    }
}
