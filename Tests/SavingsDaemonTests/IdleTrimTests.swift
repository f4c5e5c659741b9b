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

    /// Start-up counts as a burst: one trim and one release of the start-up code once it has
    /// gone quiet; then no trim while nothing happens; one trim once a burst of requests has
    /// gone quiet, not during it, and no second release; the service stops when its task is
    /// cancelled.
    @Test func oneTrimAfterABurstHasGoneQuiet() async throws {
        let counter = RequestCounter()
        let trims = Mutex(0), releases = Mutex(0)
        let service = IdleTrimService(requests: counter, quiet: .milliseconds(200),
                                      trim: { trims.withLock { $0 += 1 } }, afterStartUp: { releases.withLock { $0 += 1 } })
        let running = Task { try await service.run() }
        for _ in 0..<300 where releases.withLock({ $0 }) == 0 { try await Task.sleep(for: .milliseconds(10)) }
        #expect(trims.withLock { $0 } == 1 && releases.withLock { $0 } == 1, "start-up has gone quiet")
        try await Task.sleep(for: .milliseconds(500))
        #expect(trims.withLock { $0 } == 1, "idle since: nothing more to give back")
        // A burst three times as long as the quiet period, never quiet for that long, unless
        // this task itself was held off the threads for that long (a full run on two cores can
        // hold them for a minute): then the service rightly saw a quiet stretch, and the burst
        // proves nothing.
        var longestGap = Duration.zero
        var last = ContinuousClock.now
        for _ in 0..<30 {
            counter.increment()
            try await Task.sleep(for: .milliseconds(20))
            longestGap = max(longestGap, last.duration(to: .now))
            last = .now
        }
        let burstHeld = longestGap < .milliseconds(150)
        if burstHeld { #expect(trims.withLock { $0 } == 1, "not while requests keep coming") }
        for _ in 0..<300 where trims.withLock({ $0 }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        let settled = trims.withLock { $0 }
        try await Task.sleep(for: .milliseconds(500))
        #expect(settled >= 2, "once after the burst")
        if burstHeld {
            #expect(trims.withLock { $0 } == settled, "then asleep")
            #expect(settled == 2, "exactly once")
        }
        #expect(releases.withLock { $0 } == 1, "start-up code is released once")
        running.cancel()
        try await running.value
    }
}
