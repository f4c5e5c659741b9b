import NIOCore
import NIOPosix

/// Waiting inside the daemon's services. Timers run on the event loop, which turns deadlines
/// into relative waits read off one monotonic clock, so a pause lasts its real duration even
/// when the wall clock jumps (or is faked in tests).
enum Pause {
    static func sleep(for duration: Duration) async throws {
        let (seconds, attoseconds) = duration.components
        let nanoseconds = max(0, seconds * 1_000_000_000 + attoseconds / 1_000_000_000)
        let scheduled = MultiThreadedEventLoopGroup.singleton.next().scheduleTask(in: .nanoseconds(nanoseconds)) {}
        try await withTaskCancellationHandler {
            try await scheduled.futureResult.get()
        } onCancel: {
            scheduled.cancel()
        }
    }
}
