import Foundation

/// The retry rule of every outside service (SPEC 5.5, 10): `retry_min` doubling with each
/// failure up to `retry_max`; a `Retry-After` answer is honoured instead (at least a second, at
/// most a day).
enum Backoff {
    static func delay(failures: Int, retryMin: Int, retryMax: Int, retryAfter: TimeInterval?) -> TimeInterval {
        if let retryAfter { return min(max(retryAfter, 1), 86_400) }
        var delay = max(1, retryMin)
        for _ in 1..<max(1, min(failures, 40)) where delay < retryMax { delay *= 2 }
        return TimeInterval(min(retryMax, delay))
    }
}
