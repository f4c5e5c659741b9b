import Foundation
import NIOCore
import NIOPosix

/// When an outside service (a rate provider, a chain's block explorer) is next asked (SPEC 5.5,
/// 10): on its interval after a success; after a failure `retry_min` doubling with each failure
/// up to `retry_max`, or as long as a `Retry-After` answer says (at least a second, at most a
/// day), and then not even a request asked for by a client goes out before that.
struct ProviderSchedule {
    var failures = 0
    var due = NIODeadline.now()
    /// Set by a 429: nothing goes out before this.
    var holdUntil: NIODeadline?

    static func delay(failures: Int, retryMin: Int, retryMax: Int, retryAfter: TimeInterval?) -> TimeInterval {
        if let retryAfter { return min(max(retryAfter, 1), 86_400) }
        var delay = max(1, retryMin)
        for _ in 1..<max(1, min(failures, 40)) where delay < retryMax { delay *= 2 }
        return TimeInterval(min(retryMax, delay))
    }

    /// After a success: due again in `interval` seconds (plus up to a tenth more, with `jitter`).
    mutating func succeeded(interval: Int, jitter: Bool = false) {
        failures = 0
        holdUntil = nil
        let milliseconds = Int64(interval) * 1000
        due = .now() + .milliseconds(milliseconds + (jitter ? Int64.random(in: 0...max(0, milliseconds / 10)) : 0))
    }

    /// After a failure; returns the seconds until the next try.
    mutating func failed(retryMin: Int, retryMax: Int, retryAfter: TimeInterval?) -> TimeInterval {
        failures += 1
        let delay = Self.delay(failures: failures, retryMin: retryMin, retryMax: retryMax, retryAfter: retryAfter)
        let until = NIODeadline.now() + .milliseconds(Int64(delay * 1000))
        if retryAfter != nil { holdUntil = until }
        due = until
        return delay
    }

    /// Whole seconds a 429 still asks to wait, nil when nothing holds.
    var heldSeconds: Int? {
        guard let holdUntil, holdUntil > .now() else { return nil }
        return Int((holdUntil - .now()).nanoseconds / 1_000_000_000)
    }
}

/// A service's sleep until its next due time that something else can cut short (a new watch,
/// a refresh that moved a schedule): the promise to complete is held by whoever may wake it.
struct WakeableSleep {
    let promise: EventLoopPromise<Void>
    private let timer: Scheduled<Void>

    init(for amount: TimeAmount) {
        let loop = MultiThreadedEventLoopGroup.singleton.next()
        let promise = loop.makePromise(of: Void.self)
        self.promise = promise
        timer = loop.scheduleTask(in: amount) { promise.succeed() }
    }

    func wait() async {
        let promise = promise
        await withTaskCancellationHandler {
            try? await promise.futureResult.get()
        } onCancel: {
            promise.succeed()
        }
        timer.cancel()
    }
}
