import Synchronization
import Testing
@testable import SavingsDaemon

@Suite struct IdleTrimTests {
    /// Waiting for the next request ends with the request, or with the waiter's cancellation,
    /// whichever order things happen in; never hangs.
    @Test func waitingEndsOnARequestOrOnCancellation() async throws {
        let counter = RequestCounter()
        await counter.next(after: 5)  // already different: at once
        let waiter = Task { await counter.next(after: 0) }
        try await Task.sleep(for: .milliseconds(20))
        counter.increment()
        await waiter.value
        #expect(counter.value == 1)

        let cancelled = Task { await counter.next(after: 1) }
        try await Task.sleep(for: .milliseconds(20))
        cancelled.cancel()
        await cancelled.value
        let cancelledFirst = Task {
            withUnsafeCurrentTask { $0?.cancel() }
            await counter.next(after: 1)
        }
        await cancelledFirst.value
    }

    /// The service sleeps on an idle daemon, trims after a burst has gone quiet, and stops when
    /// its task is cancelled.
    @Test func theServiceStopsWhenCancelled() async throws {
        let counter = RequestCounter()
        let service = IdleTrimService(requests: counter, quiet: .milliseconds(20))
        let running = Task { try await service.run() }
        for _ in 0..<10 {
            counter.increment()
            try await Task.sleep(for: .milliseconds(5))
        }
        try await Task.sleep(for: .milliseconds(100))
        running.cancel()
        try await running.value
    }
}
