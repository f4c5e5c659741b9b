import Logging
import Synchronization

/// Lines about what clients do (connections refused, clients gone mid-answer) written at most
/// once per `interval` for each kind: the first at once, those that follow within the interval
/// counted and said in one line when it ends ("refused 312 more connections in the last 1 s:
/// not allowed"). A burst of thousands writes a line a second, not thousands.
final class LogThrottle: Sendable {
    private struct Window {
        var opened: ContinuousClock.Instant
        var held = 0
        var flushing = false
    }

    private let logger: Logger
    private let interval: Duration
    private let windows = Mutex<[String: Window]>([:])

    init(logger: Logger, interval: Duration = .seconds(1)) {
        self.logger = logger
        self.interval = interval
    }

    /// One event of `kind`: `line` is written if none of its kind was in the last interval;
    /// otherwise it is counted, and `summary(count)` is written once the interval has passed.
    func note(_ kind: String, level: Logger.Level = .notice, _ line: @autoclosure () -> Logger.Message,
              metadata: @autoclosure () -> Logger.Metadata? = nil, summary: @escaping @Sendable (Int) -> Logger.Message) {
        let now = ContinuousClock.now
        let (write, flushAt) = windows.withLock { windows -> (Bool, ContinuousClock.Instant?) in
            guard var window = windows[kind], window.held > 0 || now < window.opened + interval else {
                windows[kind] = Window(opened: now)
                return (true, nil)
            }
            window.held += 1
            let flushAt: ContinuousClock.Instant? = window.flushing ? nil : window.opened + interval
            window.flushing = true
            windows[kind] = window
            return (false, flushAt)
        }
        if write { logger.log(level: level, line(), metadata: metadata()) }
        if let flushAt {
            Task {
                try? await Task.sleep(until: flushAt, clock: .continuous)
                flush(kind, level: level, summary: summary)
            }
        }
    }

    /// Writes what `kind` held back, and opens its next interval now.
    private func flush(_ kind: String, level: Logger.Level, summary: @Sendable (Int) -> Logger.Message) {
        let held = windows.withLock { windows -> Int in
            let held = windows[kind]?.held ?? 0
            windows[kind] = Window(opened: .now)
            return held
        }
        if held > 0 { logger.log(level: level, summary(held)) }
    }
}
