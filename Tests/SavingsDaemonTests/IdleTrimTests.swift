import Synchronization
import Testing
@testable import SavingsDaemon

@Suite struct IdleTrimTests {
    /// Waiting for the next request ends with the request, or with the waiter's cancellation,
    /// whichever comes first; never hangs.
    @Test func waitingEndsOnARequestOrOnCancellation() async throws {
        let counter = RequestCounter()
        await counter.next(after: 5)  // already different: at once
        let waiter = Task { await counter.next(after: 0) }
        try await Task.sleep(for: .milliseconds(20))
        counter.increment()
        await waiter.value
        #expect(counter.value == 1)

        // Cancelled while waiting.
        let waiting = RequestCounter()
        let cancelled = Task { await waiting.next(after: 0) }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        await cancelled.value

        // Cancelled before it waits.
        let fresh = RequestCounter()
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await fresh.next(after: 0)
        }
        await cancelledFirst.value
    }

    /// No trim while nothing happens; one trim once a burst of requests has gone quiet, not
    /// during it; the service stops when its task is cancelled.
    @Test func oneTrimAfterABurstHasGoneQuiet() async throws {
        let counter = RequestCounter()
        let trims = Mutex(0)
        let service = IdleTrimService(requests: counter, quiet: .milliseconds(200), trim: { trims.withLock { $0 += 1 } })
        let running = Task { try await service.run() }
        try await Task.sleep(for: .milliseconds(300))
        #expect(trims.withLock { $0 } == 0, "idle from the start: nothing to give back")
        // A burst three times as long as the quiet period, never quiet for that long.
        for _ in 0..<30 {
            counter.increment()
            try await Task.sleep(for: .milliseconds(20))
        }
        #expect(trims.withLock { $0 } == 0, "not while requests keep coming")
        for _ in 0..<300 where trims.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(500))
        #expect(trims.withLock { $0 } == 1, "once after the burst, then asleep")
        running.cancel()
        try await running.value
    }
}
