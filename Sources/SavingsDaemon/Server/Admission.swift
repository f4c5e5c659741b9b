import NIOCore
import Synchronization

/// Who is served and who waits (SPEC 9, admission). While more connections are being set up
/// than places are free the listener stops accepting (the kernel's backlog holds newcomers);
/// otherwise it accepts, one at a time once every place is taken, so that who waits is known.
/// A uid at `perUID` has its further connections parked until one of its own closes; with
/// every place taken a newcomer is parked too, unless its uid holds less than its fair share
/// (`total` divided among the uids served or waiting): then the youngest idle or subscribed
/// connection of the uid furthest over its share is closed, with a `busy` line saying why, and
/// the newcomer takes its place. A place that frees goes to a parked connection of a uid below
/// its share first, then in arrival order. `busy` for a newcomer only when the parked ones pass
/// the backlog's size. Every decision is made under one lock.
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

    /// A served connection the admission may close to make room for another uid's.
    final class Occupant: Sendable {
        let uid: UInt32
        let ticket: UInt64
        /// Whether it may be closed now: no request in hand, or subscribed to events.
        let evictable: @Sendable () -> Bool
        /// Closes it, telling its client why.
        let evict: @Sendable (_ reason: String) -> Void

        init(uid: UInt32, ticket: UInt64, evictable: @escaping @Sendable () -> Bool, evict: @escaping @Sendable (String) -> Void) {
            self.uid = uid
            self.ticket = ticket
            self.evictable = evictable
            self.evict = evict
        }
    }

    private struct Waiting {
        let ticket: UInt64
        let uid: UInt32
        let decision: Decision
        let occupant: Occupant?
    }

    private struct State {
        var served = 0
        var servedByUID: [UInt32: Int] = [:]
        /// Served connections that can be closed to make room, by ticket.
        var occupants: [UInt64: Occupant] = [:]
        /// Tickets closed to make room: already off the counts when their connections end.
        var evicted: Set<UInt64> = []
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
    /// Whether a parked connection's uid is below its fair share (a place may be made for it
    /// as soon as a connection over its share falls idle): read without the lock.
    private let hungry = Atomic<Bool>(false)
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
    /// With every place taken, a uid below its fair share is served in the place of a
    /// connection of the uid furthest over its share (see the type). `occupant`: how to close
    /// the connection later to make room for another uid's (nil: never).
    func enter(uid: UInt32, ticket: UInt64, limits: Limits, occupant: Occupant? = nil) -> Decision {
        let (decision, settled, change) = state.withLock { state -> (Decision, Settled, Bool?) in
            let decision: Decision
            var settled = Settled()
            if state.issued.remove(ticket) == nil {
                decision = Decision(.withdrawn)
            } else {
                state.arriving -= 1
                let waiting = Waiting(ticket: ticket, uid: uid, decision: Decision(), occupant: occupant)
                if state.served < limits.total, state.servedByUID[uid, default: 0] < limits.perUID {
                    Self.serve(waiting, &state)
                    decision = Decision(.served)
                } else if state.parked.count < limits.parked {
                    decision = waiting.decision
                    // In accept order, whatever order the connections were set up in.
                    let index = state.parked.lastIndex { $0.ticket < ticket }.map { $0 + 1 } ?? 0
                    state.parked.insert(waiting, at: index)
                    settled = Self.settle(&state, limits)
                } else if let victim = Self.victim(for: uid, share: Self.share(state, limits, extra: uid), &state, limits) {
                    // Past the bound, a uid below its share still takes a place from one above it.
                    settled.evicted.append(victim)
                    Self.serve(waiting, &state)
                    decision = Decision(.served)
                } else {
                    decision = Decision(.busy)
                }
            }
            hungry.store(settled.hungry, ordering: .relaxed)
            return (decision, settled, Self.acceptingChange(&state, limits))
        }
        if let change { setAccepting(change) }
        settled.apply()
        return decision
    }

    /// A served connection may have fallen idle (a request answered, or a subscription made):
    /// if a parked uid is below its share, a place is made for it now.
    func reconsider(limits: Limits) {
        guard hungry.load(ordering: .relaxed) else { return }
        let settled = state.withLock { state in
            let settled = Self.settle(&state, limits)
            hungry.store(settled.hungry, ordering: .relaxed)
            return settled
        }
        settled.apply()
    }

    /// What settling decided, acted on outside the lock.
    private struct Settled {
        var woken: [Waiting] = []
        var evicted: [(occupant: Occupant, reason: String)] = []
        /// A parked uid is still below its share.
        var hungry = false

        func apply() {
            for (occupant, reason) in evicted { occupant.evict(reason) }
            for waiting in woken { waiting.decision.resolve(.served) }
        }
    }

    private static func serve(_ waiting: Waiting, _ state: inout State) {
        state.served += 1
        state.servedByUID[waiting.uid, default: 0] += 1
        if let occupant = waiting.occupant { state.occupants[waiting.ticket] = occupant }
    }

    /// Each uid's fair share: the total divided among the uids served or waiting (and `extra`).
    private static func share(_ state: State, _ limits: Limits, extra: UInt32? = nil) -> Int {
        var uids = Set(state.servedByUID.keys)
        for waiting in state.parked { uids.insert(waiting.uid) }
        if let extra { uids.insert(extra) }
        return max(1, limits.total / max(1, uids.count))
    }

    /// For `uid` below its share: the youngest connection that may be closed of the uid
    /// furthest over its share, taken off the counts (its close will not count again), with the
    /// reason its client is told; nil when `uid` is not below its share or none may be closed.
    private static func victim(for uid: UInt32, share: Int, _ state: inout State, _ limits: Limits) -> (occupant: Occupant, reason: String)? {
        guard state.servedByUID[uid, default: 0] < min(limits.perUID, share) else { return nil }
        // The uids over their share, furthest first; among equals the youngest connection goes.
        var best: (over: Int, occupant: Occupant)?
        for occupant in state.occupants.values {
            let over = state.servedByUID[occupant.uid, default: 0] - share
            guard over > 0, occupant.uid != uid else { continue }
            if let current = best, current.over > over || (current.over == over && current.occupant.ticket > occupant.ticket) { continue }
            guard occupant.evictable() else { continue }
            best = (over, occupant)
        }
        guard let (_, occupant) = best else { return nil }
        let held = state.servedByUID[occupant.uid, default: 0]
        state.occupants[occupant.ticket] = nil
        state.evicted.insert(occupant.ticket)
        state.served -= 1
        state.servedByUID[occupant.uid] = held > 1 ? held - 1 : nil
        let reason = "closed to make room for another user: uid \(occupant.uid) held \(held) of the \(limits.total) connections "
            + "(rpc.max_connections), more than its fair share of \(share); connect again later"
        return (occupant, reason)
    }

    /// Gives free places to parked connections (a uid below its share first, then in arrival
    /// order), and with none free makes places for parked uids below their share.
    private static func settle(_ state: inout State, _ limits: Limits) -> Settled {
        var settled = Settled()
        guard !state.parked.isEmpty else { return settled }
        // The same for every step: serving a parked connection, or closing one of a uid over
        // its share (which keeps others), leaves the uids served or waiting as they were.
        let share = share(state, limits)
        func below(_ uid: UInt32) -> Bool { state.servedByUID[uid, default: 0] < min(limits.perUID, share) }
        while state.served < limits.total {
            let fits = state.parked.indices.filter { state.servedByUID[state.parked[$0].uid, default: 0] < limits.perUID }
            guard let index = fits.first(where: { below(state.parked[$0].uid) }) ?? fits.first else { break }
            let waiting = state.parked.remove(at: index)
            serve(waiting, &state)
            settled.woken.append(waiting)
        }
        var index = 0
        while state.served >= limits.total, index < state.parked.count {
            let waiting = state.parked[index]
            guard below(waiting.uid) else {
                index += 1
                continue
            }
            guard let victim = victim(for: waiting.uid, share: share, &state, limits) else {
                settled.hungry = true
                index += 1
                continue
            }
            settled.evicted.append(victim)
            state.parked.remove(at: index)
            serve(waiting, &state)
            settled.woken.append(waiting)
        }
        return settled
    }

    /// A connection that will not ask (refused before admission) leaves the arriving count.
    func skipped(ticket: UInt64, limits: Limits) {
        let change = state.withLock { state in
            if state.issued.remove(ticket) != nil { state.arriving -= 1 }
            return Self.acceptingChange(&state, limits)
        }
        if let change { setAccepting(change) }
    }

    /// A served connection of `uid` (`ticket`, when it was entered with one) closed: the parked
    /// ones that now fit are served, a uid below its share first.
    func left(uid: UInt32, ticket: UInt64? = nil, limits: Limits) {
        let (settled, change) = state.withLock { state -> (Settled, Bool?) in
            // One closed to make room was taken off the counts then.
            if let ticket, state.evicted.remove(ticket) != nil { return (Settled(), nil) }
            if let ticket { state.occupants[ticket] = nil }
            state.served -= 1
            state.servedByUID[uid, default: 1] -= 1
            if state.servedByUID[uid] == 0 { state.servedByUID[uid] = nil }
            let settled = Self.settle(&state, limits)
            hungry.store(settled.hungry, ordering: .relaxed)
            return (settled, Self.acceptingChange(&state, limits))
        }
        if let change { setAccepting(change) }
        settled.apply()
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

    /// Accept while fewer than the total are served or about to be, and, with every place
    /// taken, one at a time (to see whether the newcomer's uid is below its share); stop while
    /// more are being set up than there are places.
    private static func acceptingChange(_ state: inout State, _ limits: Limits) -> Bool? {
        let should = state.served + state.arriving < limits.total || state.arriving == 0
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
