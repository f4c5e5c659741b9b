import Synchronization

/// Runs an async job in the background on request, a short while later: requests made before
/// the run starts are all served by it, and requests made while it runs collapse into one more
/// run after it. A burst of writes then costs one or two runs of the job, not one each, and the
/// last run always sees the state after the last request. The wait (`after`) leaves the CPU to
/// whatever a client asks right after its write (the job values every goal; the client's next
/// read would otherwise compete with it).
final class Coalescer: Sendable {
    private struct State {
        /// A run is waiting to start: it will see every request made until then.
        var waiting = false
        var running = false
        /// A request came during the run: one more run follows.
        var again = false
    }

    private let state = Mutex(State())
    private let delay: Duration
    private let job: @Sendable () async -> Void

    init(after delay: Duration = .zero, _ job: @escaping @Sendable () async -> Void) {
        self.delay = delay
        self.job = job
    }

    func request() {
        let start = state.withLock { state -> Bool in
            if state.waiting { return false }
            if state.running {
                state.again = true
                return false
            }
            state.waiting = true
            return true
        }
        guard start else { return }
        Task {
            while true {
                if delay > .zero { try? await Task.sleep(for: delay) }
                state.withLock { state in
                    state.waiting = false
                    state.running = true
                }
                await job()
                let more = state.withLock { state -> Bool in
                    state.running = false
                    guard state.again else { return false }
                    state.again = false
                    state.waiting = true
                    return true
                }
                if !more { return }
            }
        }
    }
}
