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
}
