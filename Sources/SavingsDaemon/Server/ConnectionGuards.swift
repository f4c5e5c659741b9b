import Logging
import NIOCore
import Synchronization

/// Whether a connection is busy (a request in flight, or subscribed to events): an idle
/// timeout closes only connections that are neither. The admission may close one that has no
/// request in hand (an upload waiting for its next chunk still has), or is subscribed, to make
/// room for another uid's; `settled` tells it when a connection becomes so.
final class ConnectionActivity: Sendable {
    private let state = Mutex((inFlight: 0, requests: 0, subscribed: false))
    private let settled: @Sendable () -> Void

    init(settled: @escaping @Sendable () -> Void = {}) { self.settled = settled }

    func begin() { state.withLock { $0.inFlight += 1 } }
    func end() { state.withLock { $0.inFlight -= 1 } }

    /// A request is being handled (from its line read to its answer written).
    func requestStarted() { state.withLock { $0.requests += 1 } }

    func requestFinished() {
        let none = state.withLock { state -> Bool in
            state.requests -= 1
            return state.requests == 0
        }
        if none { settled() }
    }

    func subscribe() {
        state.withLock { $0.subscribed = true }
        settled()
    }

    var isIdle: Bool { state.withLock { $0.inFlight == 0 && !$0.subscribed } }
    var isEvictable: Bool { state.withLock { $0.requests == 0 || $0.subscribed } }
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

/// The listening channel, once bound, kept accepting exactly while the admission says so.
/// Changes are decided on many threads and reach the channel's event loop in any order, so each
/// one only asks the loop to apply the admission's state as it is when the loop runs it: the
/// last to run applies the last state, whatever order they came in. (Applying the value each
/// change carried let an older "stop" land after a newer "go on", and the daemon then stopped
/// accepting for good with its places free: a burst of 1,000 clients hung in the backlog.)
final class AcceptSwitch: Sendable {
    private let state = Mutex<(channel: (any Channel)?, current: (@Sendable () -> Bool)?)>((nil, nil))

    /// The channel to drive, and where the state to apply is read.
    func attach(_ channel: any Channel, current: @escaping @Sendable () -> Bool) {
        state.withLock { $0 = (channel, current) }
        refresh()
    }

    /// The admission changed its mind: the loop applies whatever it says when it gets there.
    func refresh() {
        guard case let (channel?, current?) = state.withLock({ $0 }) else { return }
        channel.eventLoop.execute {
            channel.setOption(ChannelOptions.autoRead, value: current()).whenFailure { _ in }
        }
    }
}
