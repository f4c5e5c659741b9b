import Foundation
import Logging
import NIOCore
import NIOExtras
import NIOPosix
import SavingsCore
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
    let connections: AsyncStream<Accepted>
    /// Who is served and who waits; it starts and stops the listener's accepting.
    let admission: Admission
    /// The connections' event loops (`rpc.event_loops`), shut down once the server has stopped.
    let loops: MultiThreadedEventLoopGroup
}

/// An accepted connection with who is on the other end and what it is doing.
struct Accepted: Sendable {
    let connection: RPCServer.Connection
    let peer: AccessPolicy.Peer?
    /// Its supplementary groups as the kernel reported them (nil when it could not).
    let peerGroups: [UInt32]?
    /// Its place in the admission, in accept order (see `Admission.arrived`).
    let ticket: UInt64
    /// Opened once it is served: the immediate path answers nothing before.
    let gate: AdmissionGate
    let activity: ConnectionActivity
}

struct RPCServer: Service {
    typealias Connection = NIOAsyncChannel<ByteBuffer, Outgoing>

    let listener: RPCListener
    let dispatcher: RPCDispatcher
    /// Lines answered by the connections' tasks (immediate answers allocate next to nothing).
    let requests = RequestCounter()
    let liveConfig: LiveConfig
    let notifier: SystemdNotifier
    let events: EventBus
    let logger: Logger
    /// Lines about refused connections and the like, at most one a second of each kind.
    let throttle: LogThrottle
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
        throttle = LogThrottle(logger: logger)
    }

    /// Binds the listening socket: the activated descriptor, or a fresh socket file (mode 0600).
    /// How long an answer may wait for a client that does not read (or the idle timeout, if shorter).
    static let writeStall = TimeAmount.seconds(30)

    static func bind(socket: ListeningSocket, liveConfig: LiveConfig, immediate: ImmediateDispatcher,
                     logger: Logger) async throws -> RPCListener {
        let (connections, continuation) = AsyncStream.makeStream(of: Accepted.self)
        // Half-closure lets a client send its requests, shut down its write side and still
        // read every answer (as `socat` and `nc -N` do).
        let loops = MultiThreadedEventLoopGroup(numberOfThreads: liveConfig.current.eventLoops)
        let acceptSwitch = AcceptSwitch()
        let admission = Admission { accepting in
            acceptSwitch.refresh()
            logger.debug(accepting ? "accepting connections again" : "max_connections served: new connections wait in the backlog")
        }
        let bootstrap = ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton, childGroup: loops)
            .serverChannelOption(.backlog, value: Int32(liveConfig.current.access.backlog))
            .serverChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture { try channel.pipeline.syncOperations.addHandler(AcceptOrder(admission: admission)) }
            }
            .childChannelOption(.allowRemoteHalfClosure, value: true)
            .childChannelInitializer { channel in
                // Counted at once, so the listener stops accepting at max_connections in time.
                let ticket = admission.arrived(ObjectIdentifier(channel), limits: Admission.Limits(liveConfig.current.access))
                channel.closeFuture.whenComplete { _ in admission.withdraw(ticket, limits: Admission.Limits(liveConfig.current.access)) }
                let gate = AdmissionGate()
                // Who connected: SO_PEERCRED and SO_PEERGROUPS, read once at accept.
                let peer = Self.peerOption(channel, SO_PEERCRED) { (peer: AccessPolicy.Peer) in peer }
                let groups = Self.peerOption(channel, SO_PEERGROUPS) { (groups: PeerGroups) in groups.list }
                return peer.and(groups).flatMapThrowing { peer, groups in
                    let config = liveConfig.current
                    let activity = ConnectionActivity { admission.reconsider(limits: Admission.Limits(liveConfig.current.access)) }
                    try channel.pipeline.syncOperations.addHandler(
                        IdleStateHandler(readTimeout: .seconds(Int64(config.access.idleTimeout))))
                    try channel.pipeline.syncOperations.addHandler(
                        IdleCloser(activity: activity, stall: min(Self.writeStall, .seconds(Int64(config.access.idleTimeout))), logger: logger))
                    try channel.pipeline.syncOperations.addHandler(
                        ByteToMessageHandler(LineBasedFrameDecoder(), maximumBufferSize: config.maxLineBytes))
                    // Accepted before the methods exist (the first moments of start-up): the
                    // connection's task answers everything.
                    try channel.pipeline.syncOperations.addHandler(ImmediateAnswers(dispatcher: immediate.dispatcher, gate: gate))
                    let connection = try Connection(wrappingChannelSynchronously: channel)
                    if case .terminated = continuation.yield(Accepted(connection: connection, peer: peer, peerGroups: groups,
                                                                      ticket: ticket, gate: gate, activity: activity)) {
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
                if let group = liveConfig.current.socketGroup, let entry = getgrnam(group) {
                    // Group members reach the socket: 0660 in a 0750 directory of that group.
                    let directory = (path as NSString).deletingLastPathComponent
                    chown(directory, uid_t.max, entry.pointee.gr_gid)
                    chmod(directory, 0o750)
                    chown(path, uid_t.max, entry.pointee.gr_gid)
                    chmod(path, 0o660)
                } else {
                    chmod(path, 0o600)
                }
            }
        } catch {
            continuation.finish()
            try? await loops.shutdownGracefully()
            throw error
        }
        channel.closeFuture.whenComplete { _ in continuation.finish() }
        acceptSwitch.attach(channel) { admission.isAccepting }
        return RPCListener(channel: channel, connections: connections, admission: admission, loops: loops)
    }

    /// A socket option of the connection's peer, or nil when it cannot be read.
    private static func peerOption<Value: Sendable, Result: Sendable>(
        _ channel: any Channel, _ name: Int32, _ transform: @escaping @Sendable (Value) -> Result
    ) -> EventLoopFuture<Result?> {
        guard let provider = channel as? any SocketOptionProvider else { return channel.eventLoop.makeSucceededFuture(nil) }
        let value: EventLoopFuture<Value> = provider.unsafeGetSocketOption(level: SocketOptionLevel(SOL_SOCKET), name: SocketOptionName(name))
        return value.map { Optional(transform($0)) }.recover { _ in nil }
    }

    func run() async throws {
        await onListening()
        await withGracefulShutdownHandler {
            await withDiscardingTaskGroup { group in
                var lastID: UInt64 = 0
                // Ends when the listening channel closes (graceful shutdown, below).
                for await accepted in listener.connections {
                    lastID += 1
                    let id = lastID
                    let admitted = decide(accepted, id: id)
                    group.addTask { await admit(accepted, admitted, id: id) }
                }
            }
        } onGracefulShutdown: {
            logger.info("shutting down: no new connections; finishing requests in flight")
            notifier.stopping()
            listener.channel.close(promise: nil)
        }
        try? await listener.loops.shutdownGracefully()
        logger.info("RPC server stopped")
    }

    /// What admission decided for a connection, in arrival order (before its task starts).
    private enum Admitted {
        case denied
        case peer(AccessPolicy.Peer, AccessPolicy.Grant, Admission.Decision?)
    }

    /// Checks who connected and asks for its place: served, parked until there is room for its
    /// uid, or refused. Runs in the accept loop, so places are given in arrival order.
    private func decide(_ accepted: Accepted, id: UInt64) -> Admitted {
        let config = liveConfig.current
        let limits = Admission.Limits(config.access)
        let grant = accepted.peer.map { peer in
            config.access.grant(peer, daemonUID: getuid()) { AccessPolicy.groups(of: $0, reported: accepted.peerGroups) }
        } ?? .denied
        logger.debug("connection", metadata: ["connection": "\(id)", "peer": "\(accepted.peer.map(\.description) ?? "unknown")",
                                              "access": "\(grant.rawValue)"])
        guard let peer = accepted.peer, grant != .denied else {
            listener.admission.skipped(ticket: accepted.ticket, limits: limits)
            return .denied
        }
        // The daemon's own health check (HeartbeatService) must get through a full house, or a
        // busy daemon would stop feeding the watchdog: it is served outside the count.
        if peer.pid == getpid() {
            listener.admission.skipped(ticket: accepted.ticket, limits: limits)
            return .peer(peer, grant, nil)
        }
        let channel = accepted.connection.channel
        let activity = accepted.activity
        let occupant = Admission.Occupant(uid: peer.uid, ticket: accepted.ticket, evictable: { activity.isEvictable }) { reason in
            // Its last line says why; then it closes (its task ends, and its place is taken).
            let error = RPCError(code: RPCError.domainErrorCode, message: reason, data: ["kind": "busy", "limit": .int(limits.total)])
            let line = Self.line(JSONSerializer.bytes(RPCResponse.failure(id: .null, error: error)))
            channel.writeAndFlush(Outgoing.other(line)).whenComplete { _ in channel.close(promise: nil) }
        }
        return .peer(peer, grant, listener.admission.enter(uid: peer.uid, ticket: accepted.ticket, limits: limits, occupant: occupant))
    }

    /// Serves the connection once its turn comes, or refuses it; nothing is answered before.
    private func admit(_ accepted: Accepted, _ admitted: Admitted, id: UInt64) async {
        guard case .peer(let peer, let grant, let decision) = admitted else {
            throttle.note("not allowed", "refused a connection: not allowed", metadata: ["peer": "\(accepted.peer.map(\.description) ?? "unknown")"]) {
                "refused \($0) more connections in the last 1 s: not allowed"
            }
            await refuse(accepted.connection, RPCError(code: RPCError.domainErrorCode,
                                                       message: "permission denied: this user may not use savingsd (see [rpc] allow_uids, allow_groups)",
                                                       data: ["kind": "permission_denied"]))
            return
        }
        if let decision {
            switch await decision.outcome {
            case .served:
                break
            case .busy:
                let limits = Admission.Limits(liveConfig.current.access)
                throttle.note("too many waiting", "refused a connection: too many waiting", metadata: ["parked": "\(limits.parked)"]) {
                    "refused \($0) more connections in the last 1 s: too many waiting"
                }
                await refuse(accepted.connection, RPCError(
                    code: RPCError.domainErrorCode,
                    message: "too many connections waiting (\(limits.parked) beyond the \(limits.total) served); try again later",
                    data: ["kind": "busy", "limit": .int(limits.total)]))
                return
            case .withdrawn:
                try? await accepted.connection.executeThenClose { _, _ in }
                return
            }
        }
        defer {
            logger.debug("connection closed", metadata: ["connection": "\(id)"])
            if decision != nil { listener.admission.left(uid: peer.uid, ticket: accepted.ticket, limits: Admission.Limits(liveConfig.current.access)) }
        }
        accepted.gate.open()
        await serve(accepted.connection, id: id, activity: accepted.activity, mayWrite: grant == .full,
                    mayNamePaths: peer.uid == getuid() || peer.uid == 0)
    }

    /// Sends `error` as the only line, then closes; what the client already sent is taken in
    /// first (at most a couple of seconds), so the close does not reset the connection before
    /// it has read why.
    private func refuse(_ connection: Connection, _ error: RPCError) async {
        try? await connection.executeThenClose { inbound, outbound in
            try await outbound.write(.other(Self.line(JSONSerializer.bytes(RPCResponse.failure(id: .null, error: error)))))
            outbound.finish()
            try await withThrowingTaskGroup(of: Void.self) { group in
                group.addTask { for try await _ in inbound {} }
                group.addTask { try await Pause.sleep(for: .seconds(2)) }
                try await group.next()
                group.cancelAll()
            }
        }
    }

    private func serve(_ connection: Connection, id: UInt64, activity: ConnectionActivity, mayWrite: Bool, mayNamePaths: Bool) async {
        let request = SubscriptionRequest()
        let (notifications, notifier) = AsyncStream<JSONValue>.makeStream(bufferingPolicy: .bufferingNewest(64))
        var context = CallContext(connectionID: id, subscribe: { topics in request.set(topics) },
                                  notify: { notifier.yield($0) })
        context.mayWrite = mayWrite
        context.mayNamePaths = mayNamePaths
        do {
            try await connection.executeThenClose { inbound, outbound in
                try await withThrowingDiscardingTaskGroup { group in
                    var subscription: UInt64?
                    var failure: (any Error)?
                    // Progress of long requests, written between the caller's lines.
                    group.addTask {
                        for await notification in notifications {
                            try await outbound.write(.other(Self.line(JSONSerializer.bytes(notification))))
                        }
                    }
                    // The connection's lines: read here between requests, and by a request
                    // that takes an upload while it runs (its chunks follow it on the line).
                    let lines = InboundLines(inbound.cancelOnGracefulShutdown().makeAsyncIterator(),
                                             maxLineBytes: { liveConfig.current.maxLineBytes })
                    let ending = ConnectionEnding()
                    var context = context
                    context.receive = {
                        // Waiting for a chunk counts as idle: a stalled upload is closed by the idle timeout.
                        activity.end()
                        defer { activity.begin() }
                        do {
                            guard let frame = try await lines.next() else { return nil }
                            // Taken by the request, not answered: counted as answered, so the
                            // immediate path knows nothing is outstanding.
                            try await outbound.write(.response(nil))
                            return Array(frame.readableBytesView)
                        } catch where error is ByteToMessageDecoderError.PayloadTooLargeError || error is LineTooLong {
                            throw DomainError(.tooLarge, "a line of the upload exceeds the limit of \(liveConfig.current.maxLineBytes) bytes (send chunks of at most max_chunk_bytes)")
                        } catch {
                            // Closed by the idle timeout, reset by the client, or the daemon stopping.
                            return nil
                        }
                    }
                    context.send = { line in
                        do {
                            try await outbound.write(.other(Self.line(line)))
                        } catch {
                            // The client went away (or was closed for not reading): not the daemon's fault.
                            throw ConnectionGone()
                        }
                    }
                    context.endConnection = { ending.set() }
                    do {
                        while let frame = try await lines.next() {
                            activity.begin()
                            activity.requestStarted()
                            let response = await dispatcher.handle(line: Array(frame.readableBytesView), context: context)
                            activity.end()
                            requests.increment()
                            // Every line forwarded gets one `.response`, even without an answer.
                            do {
                                try await outbound.write(.response(response.map(Self.line)))
                            } catch {
                                activity.requestFinished()
                                throw error
                            }
                            activity.requestFinished()
                            // An upload that failed half-way: the rest of its chunks may still be
                            // coming, so the connection cannot go on.
                            if ending.isSet {
                                logger.debug("closing the connection after a failed upload", metadata: ["connection": "\(id)"])
                                break
                            }
                            // events.subscribe answered: from now on events flow on this connection too.
                            if subscription == nil, let topics = request.take() {
                                let (subscriber, stream) = events.subscribe(topics: topics, label: "connection \(id)")
                                subscription = subscriber
                                activity.subscribe()
                                group.addTask {
                                    for await event in stream {
                                        try await outbound.write(.other(Self.line(JSONSerializer.bytes(event.notification))))
                                    }
                                }
                            }
                        }
                    } catch where error is ByteToMessageDecoderError.PayloadTooLargeError || error is LineTooLong {
                        let limit = liveConfig.current.maxLineBytes
                        throttle.note("line too large", "closing connection: request line too large", metadata: ["connection": "\(id)"]) {
                            "closed \($0) more connections in the last 1 s: request line too large"
                        }
                        let error = RPCError(code: RPCError.domainErrorCode, message: "request line exceeds the limit of \(limit) bytes",
                                             data: ["kind": "too_large", "limit": .int(limit)])
                        try? await outbound.write(.other(Self.line(JSONSerializer.bytes(RPCResponse.failure(id: .null, error: error)))))
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

    static func line(_ bytes: [UInt8]) -> ByteBuffer {
        var buffer = ByteBuffer()
        buffer.reserveCapacity(bytes.count + 1)
        buffer.writeBytes(bytes)
        buffer.writeInteger(UInt8(ascii: "\n"))
        return buffer
    }
}
