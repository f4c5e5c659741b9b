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

/// Whether the immediate path may answer a connection: shut until the peer is admitted, so
/// nothing is answered to a connection that is refused or parked (SPEC 9).
final class AdmissionGate: Sendable {
    private let state = Atomic<Bool>(false)

    func open() { state.store(true, ordering: .releasing) }
    var isOpen: Bool { state.load(ordering: .acquiring) }
}

/// The listening channel, once bound, and whether it should accept: the admission decides
/// before the channel exists (connections arrive while it is being bound).
final class AcceptSwitch: Sendable {
    private let state = Mutex<(channel: (any Channel)?, accepting: Bool)>((nil, true))

    func attach(_ channel: any Channel) {
        let accepting = state.withLock { state in
            state.channel = channel
            return state.accepting
        }
        if !accepting { channel.setOption(ChannelOptions.autoRead, value: false).whenFailure { _ in } }
    }

    func set(_ accepting: Bool) {
        let channel = state.withLock { state in
            state.accepting = accepting
            return state.channel
        }
        channel?.setOption(ChannelOptions.autoRead, value: accepting).whenFailure { _ in }
    }
}
