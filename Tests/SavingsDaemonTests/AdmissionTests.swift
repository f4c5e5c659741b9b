import Dispatch
import Foundation
import NIOCore
import NIOPosix
import Synchronization
import Testing
@testable import SavingsDaemon

@Suite struct AdmissionUnitTests {
    final class Switch: Sendable {
        let calls = Mutex<[Bool]>([])
        func set(_ value: Bool) { calls.withLock { $0.append(value) } }
        var all: [Bool] { calls.withLock { $0 } }
    }

    final class Connection {}

    @Test func servesParksRefusesAndWakesInAcceptOrder() async {
        let accepting = Switch()
        let admission = Admission { accepting.set($0) }
        let limits = Admission.Limits(total: 2, perUID: 1, parked: 2)
        let connections = (0..<5).map { _ in Connection() }
        for connection in connections { admission.stamp(ObjectIdentifier(connection)) }
        // Set up out of order: the tickets still follow the accept order.
        let tickets = [4, 2, 0, 1, 3].reduce(into: [Int: UInt64]()) { tickets, index in
            tickets[index] = admission.arrived(ObjectIdentifier(connections[index]), limits: limits)
        }
        #expect(accepting.all == [false], "five arriving for two places: stop accepting")
        #expect(await admission.enter(uid: 7, ticket: tickets[0]!, limits: limits).outcome == .served)
        // uid 7 holds its share: its next ones park (the later-accepted one asks first), then busy.
        let third = admission.enter(uid: 7, ticket: tickets[2]!, limits: limits)
        let second = admission.enter(uid: 7, ticket: tickets[1]!, limits: limits)
        #expect(await admission.enter(uid: 7, ticket: tickets[3]!, limits: limits).outcome == .busy)
        #expect(admission.counts == (served: 1, parked: 2))
        // Another uid is served at once.
        #expect(await admission.enter(uid: 8, ticket: tickets[4]!, limits: limits).outcome == .served)
        admission.left(uid: 7, limits: limits)
        #expect(await second.outcome == .served, "the first accepted of the parked goes first")
        admission.withdraw(tickets[2]!, limits: limits)
        #expect(await third.outcome == .withdrawn)
        #expect(admission.counts == (served: 2, parked: 0))
    }

    /// A connection that closes before it asks (or whose setup fails) no longer holds a place.
    @Test func aConnectionClosedBeforeItAsksIsTakenOffTheCount() async {
        let accepting = Switch()
        let admission = Admission { accepting.set($0) }
        let limits = Admission.Limits(total: 1, perUID: 1, parked: 4)
        let gone = Connection()
        let ticket = admission.arrived(ObjectIdentifier(gone), limits: limits)
        #expect(accepting.all == [false])
        admission.withdraw(ticket, limits: limits)
        #expect(accepting.all == [false, true], "accepting again")
        #expect(await admission.enter(uid: 1, ticket: ticket, limits: limits).outcome == .withdrawn)
        #expect(admission.counts == (served: 0, parked: 0))
    }

    /// A served connection as the server registers it: closable while `idle`, recording why it
    /// was closed.
    final class Held: Sendable {
        let uid: UInt32
        let ticket: UInt64
        let idle: Mutex<Bool>
        let closed = Mutex<String?>(nil)

        init(uid: UInt32, ticket: UInt64, idle: Bool = true) {
            self.uid = uid
            self.ticket = ticket
            self.idle = Mutex(idle)
        }

        var occupant: Admission.Occupant {
            Admission.Occupant(uid: uid, ticket: ticket, evictable: { self.idle.withLock { $0 } }) { reason in
                self.closed.withLock { $0 = reason }
            }
        }

        var reason: String? { closed.withLock { $0 } }
    }

    /// Connects one connection of `uid` and asks for its place.
    func connect(_ admission: Admission, uid: UInt32, limits: Admission.Limits, idle: Bool = true) -> (Held, Admission.Decision) {
        let ticket = admission.arrived(ObjectIdentifier(Connection()), limits: limits)
        let held = Held(uid: uid, ticket: ticket, idle: idle)
        return (held, admission.enter(uid: uid, ticket: ticket, limits: limits, occupant: held.occupant))
    }

    /// Two uids holding every place with subscriptions (never idle-timed-out) do not shut a
    /// third out: it takes the place of the youngest connection of a uid over its fair share.
    @Test func aThirdUIDIsServedInThePlaceOfTheYoungestConnectionOverItsShare() async {
        let admission = Admission { _ in }
        let limits = Admission.Limits(total: 4, perUID: 2, parked: 16)
        var held: [Held] = []
        for uid: UInt32 in [0, 65534, 0, 65534] {
            let (connection, decision) = connect(admission, uid: uid, limits: limits)
            #expect(await decision.outcome == .served)
            held.append(connection)
        }
        #expect(admission.isAccepting, "with every place taken, newcomers are still accepted one at a time")
        let (third, decision) = connect(admission, uid: 65533, limits: limits)
        #expect(await decision.outcome == .served, "served at once")
        #expect(held.map { $0.reason != nil } == [false, false, false, true], "the youngest connection over its share is closed")
        #expect(held[3].reason?.contains("fair share of 1") == true, "\(held[3].reason ?? "")")
        #expect(admission.counts == (served: 4, parked: 0))
        // Its close does not count again; its client connecting again waits (its uid is over its share).
        admission.left(uid: 65534, ticket: held[3].ticket, limits: limits)
        #expect(admission.counts == (served: 4, parked: 0))
        let (back, again) = connect(admission, uid: 65534, limits: limits)
        #expect(admission.counts == (served: 4, parked: 1))
        #expect(held.allSatisfy { $0 === held[3] || $0.reason == nil }, "nobody else is closed for it")
        // A place that frees goes to it.
        admission.left(uid: 0, ticket: held[2].ticket, limits: limits)
        #expect(await again.outcome == .served)
        withExtendedLifetime((third, back)) {}
    }

    /// A connection in the middle of a request is never closed: the newcomer below its share
    /// waits, and takes the first place a connection over its share leaves by falling idle.
    @Test func onlyAnIdleOrSubscribedConnectionIsClosedForANewcomer() async {
        let admission = Admission { _ in }
        let limits = Admission.Limits(total: 2, perUID: 2, parked: 16)
        let busy = (0..<2).map { _ in connect(admission, uid: 7, limits: limits, idle: false).0 }
        let (_, decision) = connect(admission, uid: 8, limits: limits)
        #expect(admission.counts == (served: 2, parked: 1), "waits: both of uid 7's connections are answering requests")
        busy[0].idle.withLock { $0 = true }
        admission.reconsider(limits: limits)
        #expect(await decision.outcome == .served)
        #expect(busy[0].reason != nil && busy[1].reason == nil)
        #expect(admission.counts == (served: 2, parked: 0))
    }

    /// A freed place goes to a uid below its share before those that came earlier above theirs.
    @Test func aFreedPlaceGoesFirstToAUIDBelowItsShare() async {
        let admission = Admission { _ in }
        let limits = Admission.Limits(total: 2, perUID: 2, parked: 16)
        let first = (0..<2).map { _ in connect(admission, uid: 7, limits: limits, idle: false).0 }
        let (_, sevenAgain) = connect(admission, uid: 7, limits: limits)
        let (_, eight) = connect(admission, uid: 8, limits: limits)
        #expect(admission.counts == (served: 2, parked: 2))
        admission.left(uid: 7, ticket: first[0].ticket, limits: limits)
        #expect(await eight.outcome == .served, "uid 8 holds none of its share of one")
        #expect(admission.counts == (served: 2, parked: 1))
        admission.left(uid: 7, ticket: first[1].ticket, limits: limits)
        #expect(await sevenAgain.outcome == .served)
    }

    /// Changes of mind come from many threads at once and reach the listener's loop in any
    /// order; the listener must end up doing what the admission says last. (It once applied the
    /// value each change carried: an older "stop" could land after a newer "go on" and the
    /// daemon never accepted again, with a burst of clients left in the backlog.)
    @Test func theListenerEndsWhereTheAdmissionEndsWhateverOrderItsChangesArriveIn() async throws {
        let directory = NSTemporaryDirectory() + "admission-\(UUID().uuidString.prefix(8))"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        let switcher = AcceptSwitch()
        // Each change reaches the switch a little late, as a busy thread's would.
        let admission = Admission { _ in
            usleep(UInt32.random(in: 0...50))
            switcher.refresh()
        }
        let channel = try await ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .bind(unixDomainSocketPath: directory + "/s.sock").get()
        switcher.attach(channel) { admission.isAccepting }
        let limits = Admission.Limits(total: 2, perUID: 2, parked: 100)
        for round in 0..<20 {
            // Connections arrive on four threads and close (before they ask) on four others.
            let open = Mutex<(tickets: [UInt64], arriving: Int)>(([], 4))
            let threads = DispatchGroup()
            for worker in 0..<8 {
                threads.enter()
                Thread {
                    defer { threads.leave() }
                    if worker < 4 {
                        for _ in 0..<200 {
                            let ticket = admission.arrived(ObjectIdentifier(Connection()), limits: limits)
                            open.withLock { $0.tickets.append(ticket) }
                        }
                        open.withLock { $0.arriving -= 1 }
                        return
                    }
                    while true {
                        let (ticket, done) = open.withLock { ($0.tickets.popLast(), $0.arriving == 0 && $0.tickets.isEmpty) }
                        if let ticket { admission.withdraw(ticket, limits: limits) } else if done { return }
                    }
                }.start()
            }
            threads.wait()
            // Half the rounds end with the listener full (two arriving), half with room.
            let held = round.isMultiple(of: 2) ? (0..<2).map { _ in admission.arrived(ObjectIdentifier(Connection()), limits: limits) } : []
            try await channel.eventLoop.submit {}.get()
            let autoRead = try await channel.getOption(ChannelOptions.autoRead).get()
            #expect(autoRead == admission.isAccepting, "round \(round): the listener reads \(autoRead), the admission says \(admission.isAccepting)")
            #expect(admission.isAccepting == held.isEmpty)
            for ticket in held { admission.withdraw(ticket, limits: limits) }
        }
        try await channel.close()
    }
}

