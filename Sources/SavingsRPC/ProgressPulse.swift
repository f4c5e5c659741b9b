import Synchronization

/// Keeps a long request audible: while a method that was asked for `progress` runs, the caller
/// hears from it at least every `interval`, the handler's own progress passed through and,
/// in a quiet stretch (a backup before an import, a long check), its last progress sent
/// again (or `phase: "working"` before the first). A client can then treat silence as trouble
/// and give up early, while long work goes on as long as it needs.
public final class ProgressPulse: Sendable {
    let method: String
    let send: @Sendable (JSONValue) -> Void
    let interval: Duration
    /// The last notification and how many intervals have passed since anything was sent.
    private let state: Mutex<(last: JSONValue?, quiet: Int)>

    public init(method: String, interval: Duration, send: @escaping @Sendable (JSONValue) -> Void) {
        self.method = method
        self.interval = interval
        self.send = send
        state = Mutex((nil, 0))
    }

    /// The handler's own notifications: forwarded, and remembered for the quiet stretches.
    public func forward(_ notification: JSONValue) {
        state.withLock { $0 = (notification, 0) }
        send(notification)
    }

    /// Runs until cancelled: after each interval in which nothing was sent, sends one line.
    public func beat() async {
        let working: JSONValue = ["jsonrpc": "2.0", "method": "progress",
                                  "params": ["method": .string(method), "phase": "working", "done": 0]]
        while !Task.isCancelled {
            // Half the interval per tick: nothing is ever quiet for more than one interval.
            do { try await Task.sleep(for: interval / 2) } catch { return }
            let due: JSONValue? = state.withLock { state in
                state.quiet += 1
                guard state.quiet >= 2 else { return nil }
                state.quiet = 0
                return state.last ?? working
            }
            if let due, !Task.isCancelled { send(due) }
        }
    }

    /// Runs `body` with a context whose notifications go through a pulse, when the call asked
    /// for progress and the transport can send it; otherwise runs `body` as it is.
    static func around<T: Sendable>(_ method: String, asked: Bool, context: CallContext, interval: Duration,
                                    _ body: (CallContext) async throws -> T) async throws -> T {
        guard asked, let notify = context.notify else { return try await body(context) }
        let pulse = ProgressPulse(method: method, interval: interval, send: notify)
        var pulsed = context
        pulsed.notify = { pulse.forward($0) }
        let ticker = Task { await pulse.beat() }
        defer { ticker.cancel() }
        return try await body(pulsed)
    }
}
