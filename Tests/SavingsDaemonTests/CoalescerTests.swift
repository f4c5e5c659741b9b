import Synchronization
import Testing
@testable import SavingsDaemon

@Suite struct CoalescerTests {
    final class Log: Sendable {
        let runs = Mutex(0)
        let seen = Mutex<[Int]>([])
    }

    /// A burst of requests runs the job a few times, never concurrently, and the last run sees
    /// the last request.
    @Test func aBurstRunsTheJobOnceMoreAfterTheRunningOne() async throws {
        let log = Log()
        let latest = Mutex(0)
        let running = Mutex(false)
        let coalescer = Coalescer {
            #expect(running.withLock { was in defer { was = true }; return !was }, "never two runs at once")
            try? await Task.sleep(for: .milliseconds(20))
            log.runs.withLock { $0 += 1 }
            let value = latest.withLock { $0 }
            log.seen.withLock { $0.append(value) }
            running.withLock { $0 = false }
        }
        for n in 1...200 {
            latest.withLock { $0 = n }
            coalescer.request()
        }
        for _ in 0..<200 where log.seen.withLock({ $0.last }) != 200 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(log.seen.withLock { $0.last } == 200)
        #expect((1...3).contains(log.runs.withLock { $0 }), "\(log.runs.withLock { $0 }) runs for 200 requests")
    }

    /// With a wait, every request made before the run starts is served by that one run, which
    /// starts no sooner than the wait; a request during the run brings one more, after another wait.
    @Test func requestsBeforeTheDelayedRunAreServedByIt() async throws {
        let log = Log()
        let latest = Mutex(0)
        let clock = ContinuousClock()
        let started = Mutex<[ContinuousClock.Instant]>([])
        let coalescer = Coalescer(after: .milliseconds(150)) {
            started.withLock { $0.append(clock.now) }
            log.seen.withLock { $0.append(latest.withLock { $0 }) }
            try? await Task.sleep(for: .milliseconds(100))
        }
        let first = clock.now
        for n in 1...50 {
            latest.withLock { $0 = n }
            coalescer.request()
        }
        for _ in 0..<100 where started.withLock({ $0.isEmpty }) { try await Task.sleep(for: .milliseconds(10)) }
        #expect(try #require(started.withLock { $0.first }) - first >= .milliseconds(150))
        #expect(log.seen.withLock { $0 } == [50], "one run for all the requests made before it started")
        latest.withLock { $0 = 51 }
        coalescer.request()  // during the run (it lasts 100 ms)
        for _ in 0..<100 where log.seen.withLock({ $0.count }) < 2 { try await Task.sleep(for: .milliseconds(10)) }
        try await Task.sleep(for: .milliseconds(100))
        #expect(log.seen.withLock { $0 } == [50, 51])
        let runs = started.withLock { $0 }
        #expect(runs.count == 2 && runs[1] - runs[0] >= .milliseconds(250), "the second run waits after the first ends")
    }
}
