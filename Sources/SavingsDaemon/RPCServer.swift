import Logging
import NIOCore
import NIOExtras
import NIOPosix
import SavingsRPC
import ServiceLifecycle
import Synchronization

/// The JSON-RPC server over the Unix socket: one line per request, one line per response.
///
/// On graceful shutdown it stops accepting, lets every connection finish the request it is
/// running, then returns.
/// The listening socket and the connections it accepts, in the order accepted.
///
/// The server channel is a classic NIO channel feeding our own `AsyncStream` rather than an
/// async server channel: a connection accepted while shutdown ends the stream is then still
/// in our hands and is closed properly, instead of being dropped unfinished (which traps).
struct RPCListener: Sendable {
    let channel: any Channel
    let connections: AsyncStream<RPCServer.Connection>
}

struct RPCServer: Service {
    typealias Connection = NIOAsyncChannel<ByteBuffer, ByteBuffer>

    let listener: RPCListener
    let dispatcher: RPCDispatcher
    let liveConfig: LiveConfig
    let notifier: SystemdNotifier
    let events: EventBus
    let logger: Logger
    /// Called once the service runs (signal handling is in place): the moment to say READY=1.
    let onListening: @Sendable () async -> Void

    init(listener: RPCListener, dispatcher: RPCDispatcher, liveConfig: LiveConfig, notifier: SystemdNotifier,
         events: EventBus, logger: Logger, onListening: @escaping @Sendable () async -> Void) {
        self.events = events
        self.onListening = onListening
        self.listener = listener
        self.dispatcher = dispatcher
        self.liveConfig = liveConfig
        self.notifier = notifier
        self.logger = logger
    }

    /// Binds the listening socket: the activated descriptor, or a fresh socket file (mode 0600).
    static func bind(socket: ListeningSocket, liveConfig: LiveConfig) async throws -> RPCListener {
        let (connections, continuation) = AsyncStream.makeStream(of: Connection.self)
        // Half-closure lets a client send its requests, shut down its write side and still
        // read every answer (as `socat` and `nc -N` do).
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    let limit = liveConfig.current.maxLineBytes
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: limit))
                    let connection = try Connection(wrappingChannelSynchronously: channel)
                    if case .terminated = continuation.yield(connection) {
                        // Accepted after the server stopped: close it cleanly.
                        Task { try? await connection.executeThenClose { _, _ in } }
                    }
                }
            }
        let channel: any Channel
        do {
            switch socket {
            case .activated(let fd):
                channel = try await bootstrap.withBoundSocket(fd).get()
            case .path(let path):
                let previous = umask(0o077)
                defer { umask(previous) }
                channel = try await bootstrap.bind(unixDomainSocketPath: path).get()
                chmod(path, 0o600)
            }
        } catch {
            continuation.finish()
            throw error
        }
        channel.closeFuture.whenComplete { _ in continuation.finish() }
        return RPCListener(channel: channel, connections: connections)
    }

    func run() async throws {
        await onListening()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                var lastID: UInt64 = 0
                // Ends when the listening channel closes (graceful shutdown, below).
                for await connection in listener.connections {
                    lastID += 1
                    let id = lastID
                    group.addTask { await serve(connection, id: id) }
                }
            }
        } onGracefulShutdown: {
            logger.info("shutting down: no new connections; finishing requests in flight")
            notifier.stopping()
            listener.channel.close(promise: nil)
        }
        logger.info("RPC server stopped")
    }

    private func serve(_ connection: Connection, id: UInt64) async {
        let request = SubscriptionRequest()
        let (notifications, notifier) = AsyncStream<JSONValue>.makeStream(bufferingPolicy: .bufferingNewest(64))
        let context = CallContext(connectionID: id, subscribe: { topics in request.set(topics) },
                                  notify: { notifier.yield($0) })
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    var subscription: UInt64?
                    var failure: (any Error)?
                    // Progress of long requests, written between the caller's lines.
                    group.addTask {
                        for await notification in notifications {
                            try await outbound.write(Self.line(JSONSerializer.bytes(notification)))
                        }
                    }
                    do {
                        for try await frame in inbound.cancelOnGracefulShutdown() {
                            if let response = await dispatcher.handle(line: Array(frame.readableBytesView), context: context) {
                                try await outbound.write(Self.line(response))
                            }
                            // events.subscribe answered: from now on events flow on this connection too.
                            if subscription == nil, let topics = request.take() {
                                let (subscriber, stream) = events.subscribe(topics: topics, label: "connection \(id)")
                                subscription = subscriber
                                group.addTask {
                                    for await event in stream {
                                        try await outbound.write(Self.line(JSONSerializer.bytes(event.notification)))
                                    }
                                }
                            }
                        }
                    } catch is ByteToMessageDecoderError.PayloadTooLargeError {
                        let limit = liveConfig.current.maxLineBytes
                        logger.notice("closing connection: request line too large", metadata: ["connection": "\(id)"])
                        let error = RPCError(code: RPCError.domainErrorCode, message: "request line exceeds the limit of \(limit) bytes",
                                             data: ["kind": "too_large", "limit": .int(limit)])
                        try? await outbound.write(Self.line(JSONSerializer.bytes(RPCResponse.failure(id: .null, error: error))))
                    } catch {
                        failure = error
                    }
                    // Ending the subscription and the progress stream ends their tasks, so the group can finish.
                    if let subscription { events.unsubscribe(subscription) }
                    notifier.finish()
                    if let failure { throw failure }
                }
            }
        } catch is NIOExtrasErrors.LeftOverBytesError {
            logger.debug("connection closed mid-line", metadata: ["connection": "\(id)"])
        } catch {
            logger.debug("connection ended: \(error)", metadata: ["connection": "\(id)"])
        }
    }

    private static func line(_ bytes: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(bytes.count + 1)
        buffer.writeBytes(bytes)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }
}

/// A pending `events.subscribe` of one connection, set by the handler, taken by the server.
final class SubscriptionRequest: Sendable {
    private let topics = Mutex<Set<String>??>(nil)

    func set(_ value: Set<String>?) { topics.withLock { $0 = .some(value) } }

    func take() -> Set<String>?? { topics.withLock { value in defer { value = nil }; return value } }
}

/// Where the server listens: a descriptor from systemd, or a path it binds itself.
enum ListeningSocket: Sendable {
    case activated(Int32)
    case path(String)
}
