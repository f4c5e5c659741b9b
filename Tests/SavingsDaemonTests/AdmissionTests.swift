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
}
