import Logging
import NIOCore
import NIOExtras
import NIOPosix
import SavingsRPC
import ServiceLifecycle

/// The JSON-RPC server over the Unix socket: one line per request, one line per response.
///
/// On graceful shutdown it stops accepting, lets every connection finish the request it is
/// running, then returns.
typealias NIOAsyncChannelListener = NIOAsyncChannel<RPCServer.Connection, Never>

struct RPCServer: Service {
    typealias Connection = NIOAsyncChannel<ByteBuffer, ByteBuffer>

    let listener: NIOAsyncChannelListener
    let dispatcher: RPCDispatcher
    let liveConfig: LiveConfig
    let notifier: SystemdNotifier
    let logger: Logger
    /// Called once the service runs (signal handling is in place): the moment to say READY=1.
    let onListening: @Sendable () async -> Void

    init(listener: NIOAsyncChannelListener, dispatcher: RPCDispatcher, liveConfig: LiveConfig,
         notifier: SystemdNotifier, logger: Logger, onListening: @escaping @Sendable () async -> Void) {
        self.onListening = onListening
        self.listener = listener
        self.dispatcher = dispatcher
        self.liveConfig = liveConfig
        self.notifier = notifier
        self.logger = logger
    }

    /// Binds the listening socket: the activated descriptor, or a fresh socket file (mode 0600).
    static func bind(socket: ListeningSocket, liveConfig: LiveConfig) async throws -> NIOAsyncChannel<Connection, Never> {
        // Half-closure lets a client send its requests, shut down its write side and still
        // read every answer (as `socat` and `nc -N` do).
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelOption(.allowRemoteHalfClosure, value: true)
        let initializer: @Sendable (any Channel) -> EventLoopFuture<Connection> = { channel in
            channel.eventLoop.makeCompletedFuture {
                let limit = liveConfig.current.maxLineBytes
                try channel.pipeline.syncOperations.addHandler(
                    ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: limit))
                return try Connection(wrappingChannelSynchronously: channel)
            }
        }
        switch socket {
        case .activated(let fd):
            return try await bootstrap.bind(fd, childChannelInitializer: initializer)
        case .path(let path):
            let previous = umask(0o077)
            defer { umask(previous) }
            let channel = try await bootstrap.bind(unixDomainSocketPath: path, childChannelInitializer: initializer)
            chmod(path, 0o600)
            return channel
        }
    }

    func run() async throws {
        await onListening()
        try await withGracefulShutdownHandler {
            try await withThrowingDiscardingTaskGroup { group in
                try await listener.executeThenClose { inbound in
                    var lastID: UInt64 = 0
                    for try await connection in inbound.cancelOnGracefulShutdown() {
                        lastID += 1
                        let id = lastID
                        group.addTask { await serve(connection, id: id) }
                    }
                }
            }
        } onGracefulShutdown: {
            logger.info("shutting down: no new connections; finishing requests in flight")
            notifier.stopping()
        }
        logger.info("RPC server stopped")
    }

    private func serve(_ connection: Connection, id: UInt64) async {
        let context = CallContext(connectionID: id)
        do {
            try await connection.executeThenClose { inbound, outbound in
                do {
                    for try await frame in inbound.cancelOnGracefulShutdown() {
                        guard let response = await dispatcher.handle(line: Array(frame.readableBytesView), context: context) else { continue }
                        try await outbound.write(Self.line(response))
                    }
                } catch is ByteToMessageDecoderError.PayloadTooLargeError {
                    let limit = liveConfig.current.maxLineBytes
                    logger.notice("closing connection: request line too large", metadata: ["connection": "\(id)"])
                    let failure = RPCError(code: RPCError.domainErrorCode,
                                           message: "request line exceeds the limit of \(limit) bytes",
                                           data: ["kind": "too_large", "limit": .int(limit)])
                    try await outbound.write(Self.line(JSONSerializer.bytes(RPCResponse.failure(id: .null, error: failure))))
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

/// Where the server listens: a descriptor from systemd, or a path it binds itself.
enum ListeningSocket: Sendable {
    case activated(Int32)
    case path(String)
}
