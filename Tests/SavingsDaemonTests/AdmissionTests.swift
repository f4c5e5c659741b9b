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

