import NIOCore
import Synchronization

/// Who is served and who waits (SPEC 9, admission). At `maxConnections` served the listener
/// stops accepting (the kernel's backlog holds newcomers); a uid at its share has its further
/// connections parked until one of its own closes; `busy` only when the parked ones pass the
/// backlog's size. Every decision is made under one lock, in arrival order.
final class Admission: Sendable {
    struct Limits: Sendable, Equatable {
        var total: Int
        var perUID: Int
        var parked: Int

        init(_ policy: AccessPolicy) {
            total = policy.maxConnections
            perUID = policy.perUIDLimit
            parked = policy.backlog
        }

        init(total: Int, perUID: Int, parked: Int) {
            self.total = total
            self.perUID = perUID
            self.parked = parked
        }
    }

    enum Outcome: Sendable, Equatable {
        case served
        case busy
        /// The connection closed while it waited.
        case withdrawn
    }

    /// The answer for one connection: known at once, or once a parked connection's turn comes.
    final class Decision: Sendable {
        private let state = Mutex<(outcome: Outcome?, waiting: CheckedContinuation<Outcome, Never>?)>((nil, nil))

        init(_ outcome: Outcome? = nil) { state.withLock { $0.outcome = outcome } }

        func resolve(_ outcome: Outcome) {
            let waiting = state.withLock { state -> CheckedContinuation<Outcome, Never>? in
                guard state.outcome == nil else { return nil }
                state.outcome = outcome
                defer { state.waiting = nil }
                return state.waiting
            }
            waiting?.resume(returning: outcome)
        }

        /// The outcome, waiting for it while the connection is parked.
        var outcome: Outcome {
            get async {
                await withCheckedContinuation { continuation in
                    let known = state.withLock { state -> Outcome? in
                        if state.outcome == nil { state.waiting = continuation }
                        return state.outcome
                    }
                    if let known { continuation.resume(returning: known) }
                }
            }
        }
    }

    private struct Waiting {
        let ticket: UInt64
        let uid: UInt32
        let decision: Decision
    }

    private struct State {
        var served = 0
        var servedByUID: [UInt32: Int] = [:]
        /// Accepted, not yet decided: they count against the total, so the listener stops in time.
        var arriving = 0
        var parked: [Waiting] = []
        /// Tickets of connections that have not asked yet (each counted in `arriving`); one that
        /// closes first leaves the set, and its `enter`, if it ever comes, finds it gone.
        var issued: Set<UInt64> = []
        var nextTicket: UInt64 = 0
        var stamps: [ObjectIdentifier: UInt64] = [:]
        var accepting = true
    }

    private let state = Mutex(State())
    /// Called with the new value whenever accepting should start or stop.
    private let setAccepting: @Sendable (Bool) -> Void

    init(setAccepting: @escaping @Sendable (Bool) -> Void) {
        self.setAccepting = setAccepting
    }

    /// Stamps a connection as the listener accepts it (tickets grow in accept order; the
    /// connections are then set up on several threads at once and reach `enter` in any order).
    func stamp(_ connection: ObjectIdentifier) {
        state.withLock { state in
            state.nextTicket += 1
            state.stamps[connection] = state.nextTicket
        }
    }

    /// A connection is being set up (on its event loop, before anything is read from it): it
    /// counts against the total from now, so the listener stops in time. Returns its ticket
    /// (the one `stamp` gave it); `withdraw(ticket)` from its close callback ends its wait if it
    /// is parked when it closes, or takes it off the count if it closes before it asks.
    func arrived(_ connection: ObjectIdentifier, limits: Limits) -> UInt64 {
        let (ticket, change) = state.withLock { state -> (UInt64, Bool?) in
            let ticket: UInt64
            if let stamped = state.stamps.removeValue(forKey: connection) {
                ticket = stamped
            } else {
                state.nextTicket += 1
                ticket = state.nextTicket
            }
            state.issued.insert(ticket)
            state.arriving += 1
            return (ticket, Self.acceptingChange(&state, limits))
        }
        if let change { setAccepting(change) }
        return ticket
    }

    /// Serves `uid` now, or parks it until it may be served, or refuses it when too many wait.
    /// Parked connections are served in the order they were accepted.
    func enter(uid: UInt32, ticket: UInt64, limits: Limits) -> Decision {
        let (decision, change) = state.withLock { state -> (Decision, Bool?) in
            let decision: Decision
            if state.issued.remove(ticket) == nil {
                decision = Decision(.withdrawn)
            } else {
                state.arriving -= 1
                if state.served < limits.total, state.servedByUID[uid, default: 0] < limits.perUID {
                    state.served += 1
                    state.servedByUID[uid, default: 0] += 1
                    decision = Decision(.served)
                } else if state.parked.count < limits.parked {
                    decision = Decision()
                    // In accept order, whatever order the connections were set up in.
                    let index = state.parked.lastIndex { $0.ticket < ticket }.map { $0 + 1 } ?? 0
                    state.parked.insert(Waiting(ticket: ticket, uid: uid, decision: decision), at: index)
                } else {
                    decision = Decision(.busy)
                }
            }
            return (decision, Self.acceptingChange(&state, limits))
        }
        if let change { setAccepting(change) }
        return decision
    }

    /// A connection that will not ask (refused before admission) leaves the arriving count.
    func skipped(ticket: UInt64, limits: Limits) {
        let change = state.withLock { state in
            if state.issued.remove(ticket) != nil { state.arriving -= 1 }
            return Self.acceptingChange(&state, limits)
        }
        if let change { setAccepting(change) }
    }

    /// A served connection of `uid` closed: the first parked ones that now fit are served.
    func left(uid: UInt32, limits: Limits) {
        let (woken, change) = state.withLock { state -> ([Waiting], Bool?) in
            state.served -= 1
            state.servedByUID[uid, default: 1] -= 1
            if state.servedByUID[uid] == 0 { state.servedByUID[uid] = nil }
            var woken: [Waiting] = []
            var index = 0
            while index < state.parked.count, state.served < limits.total {
                let waiting = state.parked[index]
                if state.servedByUID[waiting.uid, default: 0] < limits.perUID {
                    state.parked.remove(at: index)
                    state.served += 1
                    state.servedByUID[waiting.uid, default: 0] += 1
                    woken.append(waiting)
                } else {
                    index += 1
                }
            }
            return (woken, Self.acceptingChange(&state, limits))
        }
        if let change { setAccepting(change) }
        for waiting in woken { waiting.decision.resolve(.served) }
    }

    /// The connection behind `ticket` closed: if it is parked, its wait ends.
    func withdraw(_ ticket: UInt64, limits: Limits) {
        let (waiting, change) = state.withLock { state -> (Waiting?, Bool?) in
            guard let index = state.parked.firstIndex(where: { $0.ticket == ticket }) else {
                // Not yet asked (or never will: its setup failed): it no longer arrives. Otherwise
                // served or refused already, and nothing is to be done here.
                guard state.issued.remove(ticket) != nil else { return (nil, nil) }
                state.arriving -= 1
                return (nil, Self.acceptingChange(&state, limits))
            }
            let waiting = state.parked.remove(at: index)
            return (waiting, Self.acceptingChange(&state, limits))
        }
        if let change { setAccepting(change) }
        waiting?.decision.resolve(.withdrawn)
    }

    /// Whether the listener should accept now.
    var isAccepting: Bool { state.withLock { $0.accepting } }

    /// Connections served, and parked, now.
    var counts: (served: Int, parked: Int) { state.withLock { ($0.served, $0.parked.count) } }

    /// Accept while fewer than the total are served or about to be; stop otherwise.
    private static func acceptingChange(_ state: inout State, _ limits: Limits) -> Bool? {
        let should = state.served + state.arriving < limits.total
        guard should != state.accepting else { return nil }
        state.accepting = should
        return should
    }
}

/// On the listening channel, before NIO's own acceptor: sees each accepted connection first, in
/// accept order, and stamps it for the admission.
final class AcceptOrder: ChannelInboundHandler, Sendable {
    typealias InboundIn = any Channel
    typealias InboundOut = any Channel
    let admission: Admission

    init(admission: Admission) { self.admission = admission }

    func channelRead(context: ChannelHandlerContext, data: NIOAny) {
        admission.stamp(ObjectIdentifier(unwrapInboundIn(data)))
        context.fireChannelRead(data)
    }
}
