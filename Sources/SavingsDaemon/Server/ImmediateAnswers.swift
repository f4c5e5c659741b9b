import NIOCore
import SavingsRPC
import Synchronization

/// Answers immediate methods (`daemon.ping`) on the connection's event loop, without the hops
/// to and from the connection's task, but only once the peer is admitted and while no line
/// handed to that task is still unanswered, so answers never overtake one another. Everything
/// else goes on to the task.
final class ImmediateAnswers: ChannelDuplexHandler {
    typealias InboundIn = ByteBuffer
    typealias InboundOut = ByteBuffer
    typealias OutboundIn = Outgoing
    typealias OutboundOut = ByteBuffer

    let dispatcher: RPCDispatcher?
    let gate: AdmissionGate
    /// Lines handed to the task and not yet answered (touched on the event loop only).
    private var pending = 0

    init(dispatcher: RPCDispatcher?, gate: AdmissionGate) {
        self.dispatcher = dispatcher
        self.gate = gate
    }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        let frame = unwrapInboundIn(data)
        // Before admission every line goes to the task, which answers only once the peer is served.
        if pending == 0, gate.isOpen, let dispatcher, frame.readableBytes <= RPCDispatcher.immediateLineLimit,
           let answer = frame.withUnsafeReadableBytes({ dispatcher.handleImmediately(line: $0) }) {
            context.writeAndFlush(wrapOutboundOut(RPCServer.line(answer)), promise: nil)
            return
        }
        pending += 1
        context.fireChannelRead(data)
    }

    func write(context: ChannelHandlerContext, data: NIOAny, promise: EventLoopPromise<Void>?) {
        switch unwrapOutboundIn(data) {
        case .response(let line):
            pending = max(0, pending - 1)
            if let line {
                context.write(wrapOutboundOut(line), promise: promise)
            } else {
                promise?.succeed()
            }
        case .other(let line):
            context.write(wrapOutboundOut(line), promise: promise)
        }
    }
}

/// The dispatcher for immediate answers, known once the methods are registered (the socket is
/// bound before that).
final class ImmediateDispatcher: Sendable {
    private let value = Mutex<RPCDispatcher?>(nil)

    var dispatcher: RPCDispatcher? {
        get { value.withLock { $0 } }
        set { value.withLock { $0 = newValue } }
    }
}
