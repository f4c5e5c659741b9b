import SavingsStore
import ServiceLifecycle
import Synchronization

/// Requests answered so far, and a way to wait for the next one without polling (for one
/// waiter, the trimmer; once its wait is cancelled, waits return at once).
final class RequestCounter: Sendable {
    private let state = Mutex<(count: UInt64, waiter: CheckedContinuation<Void, Never>?, cancelled: Bool)>((0, nil, false))

    func increment() {
        let waiter = state.withLock { state in
            state.count &+= 1
            defer { state.waiter = nil }
            return state.waiter
        }
        waiter?.resume()
    }

    var value: UInt64 { state.withLock { $0.count } }

    /// Returns once the count differs from `seen` (at once if it already does), or when the
    /// waiting task is cancelled.
    func next(after seen: UInt64) async {
        await withTaskCancellationHandler {
            await withCheckedContinuation { (continuation: CheckedContinuation<Void, Never>) in
                let now = state.withLock { state in
                    guard state.count == seen, !state.cancelled, state.waiter == nil else { return true }
                    state.waiter = continuation
                    return false
                }
                if now { continuation.resume() }
            }
        } onCancel: {
            state.withLock { state in
                state.cancelled = true
                defer { state.waiter = nil }
                return state.waiter
            }?.resume()
        }
    }
}

/// Hands the memory a burst of requests freed back to the kernel once the daemon has been
/// quiet for a moment: glibc keeps freed heap pages in its arenas otherwise, so a daemon that
/// recomputed a large month an hour ago would still hold that memory. Sleeps while nothing
/// happens (no timer runs on an idle daemon).
///
/// Start-up counts as the first burst: the first time the daemon is quiet after it, the
/// trimmer also unmaps the code that only start-up ran (`afterStartUp`).
struct IdleTrimService: Service {
    let requests: RequestCounter
    var quiet: Duration = .seconds(1)
    var trim: @Sendable () -> Void = MemoryRelease.returnFreedMemory
    var afterStartUp: @Sendable () -> Void = { MemoryRelease.releaseStartUpCode() }

    func run() async throws {
        await cancelWhenGracefulShutdown {
            var trimmedAt = requests.value
            var startingUp = true
            while !Task.isCancelled {
                if !startingUp { await requests.next(after: trimmedAt) }
                // Activity: wait for a quiet period with no request in it.
                var seen = requests.value
                while !Task.isCancelled {
                    do {
                        try await Pause.sleep(for: quiet)
                    } catch {
                        return
                    }
                    let now = requests.value
                    if now == seen { break }
                    seen = now
                }
                guard !Task.isCancelled else { return }
                trim()
                if startingUp { afterStartUp() }
                startingUp = false
                trimmedAt = seen
            }
        }
    }
}
