import Synchronization

/// Runs an async job in the background on request; requests made while it runs collapse into
/// one more run after it. A burst of writes then costs two runs of the job, not one each, and
/// the last run always sees the state after the last request.
final class Coalescer: Sendable {
    private let state = Mutex<(running: Bool, again: Bool)>((false, false))
    private let job: @Sendable () async -> Void

    init(_ job: @escaping @Sendable () async -> Void) { self.job = job }

    func request() {
        let start = state.withLock { state -> Bool in
            if state.running {
                state.again = true
                return false
            }
            state.running = true
            return true
        }
        guard start else { return }
        Task {
            while true {
                await job()
                let more = state.withLock { state -> Bool in
                    if state.again {
                        state.again = false
                        return true
                    }
                    state.running = false
                    return false
                }
                if !more { return }
            }
        }
    }
}
