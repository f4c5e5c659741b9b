import Logging
import NIOCore
import Synchronization

/// Whether a connection is busy (a request in flight, or subscribed to events): an idle
/// timeout closes only connections that are neither.
final class ConnectionActivity: Sendable {
    private let state = Mutex((inFlight: 0, subscribed: false))

    func begin() { state.withLock { $0.inFlight += 1 } }
    func end() { state.withLock { $0.inFlight -= 1 } }
    func subscribe() { state.withLock { $0.subscribed = true } }
    var isIdle: Bool { state.withLock { $0.inFlight == 0 && !$0.subscribed } }
}

/// Closes a connection that sent nothing for the idle timeout while idle, or whose peer stopped
/// reading (its output stayed unwritable for `stall`), so no client holds the daemon's memory or
/// a connection slot forever. The stall is timed from the moment the output stops being
/// writable: nothing is done per answer.
final class IdleCloser: ChannelInboundHandler {
    typealias InboundIn = ByteBuffer
    let activity: ConnectionActivity
    let logger: Logger
    let stall: TimeAmount
    private var stallCheck: Scheduled<Void>?

    init(activity: ConnectionActivity, stall: TimeAmount, logger: Logger) {
        self.activity = activity
        self.stall = stall
        self.logger = logger
    }

    func userInboundEventTriggered(context: ChannelHandlerContext, event: Any) {
        switch event as? IdleStateHandler.IdleStateEvent {
        case .read? where activity.isIdle:
            logger.debug("closing an idle connection")
            context.close(promise: nil)
        default:
            context.fireUserInboundEventTriggered(event)
        }
    }

    func channelWritabilityChanged(context: ChannelHandlerContext) {
        if context.channel.isWritable {
            stallCheck?.cancel()
            stallCheck = nil
        } else if stallCheck == nil {
            let loopBound = NIOLoopBound((self, context), eventLoop: context.eventLoop)
            stallCheck = context.eventLoop.scheduleTask(in: stall) {
                let (handler, context) = loopBound.value
                handler.stallCheck = nil
                guard !context.channel.isWritable else { return }
                handler.logger.notice("closing a connection whose client stopped reading its answers")
                context.close(promise: nil)
            }
        }
        context.fireChannelWritabilityChanged()
    }

    func channelInactive(context: ChannelHandlerContext) {
        stallCheck?.cancel()
        stallCheck = nil
        context.fireChannelInactive()
    }
}

/// Connections being served, against `max_connections`.
final class ConnectionCount: Sendable {
    private let count = Mutex(0)

    func open(limit: Int) -> Bool {
        count.withLock { count in
            guard count < limit else { return false }
            count += 1
            return true
        }
    }

    func close() { count.withLock { $0 -= 1 } }
}
