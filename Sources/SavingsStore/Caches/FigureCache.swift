import Foundation
import SavingsCore
import Synchronization

/// The last portfolio snapshot, reused until something changes: any committed write (the
/// version moves on) or the clock reaching the next transaction dated after the snapshot.
/// A snapshot read while a write commits is never kept, so no figure is served stale.
final class FigureCache: Sendable {
    private struct Entry {
        var version: UInt64
        var pivot: CurrencyCode
        var at: Date
        /// The earliest transaction dated after `at`; the snapshot holds until then.
        var validUntil: Date?
        var portfolio: Portfolio
    }

    private let state = Mutex<(version: UInt64, entry: Entry?)>((0, nil))
    private let snapshots = Mutex<UInt64>(0)

    /// A load under way. Right after a write, the goal check and the client's next request
    /// both want the new snapshot: they share one load instead of each reading everything.
    /// A load is forgotten once it ends, so a failed one is not handed out again.
    private struct Load {
        var id: UInt64
        var version: UInt64
        var pivot: CurrencyCode
        var at: Date
        var task: Task<(portfolio: Portfolio, validUntil: Date?), any Error>
    }

    private let loading = Mutex<(loads: UInt64, current: Load?)>((0, nil))

    /// The load under way for `version` and `pivot` started at or before `now`, or a new one
    /// from `start`; its result is for the caller to judge (`validUntil`).
    func sharedLoad(version: UInt64, now: Date, pivot: CurrencyCode,
                    start: @escaping @Sendable () async throws -> (portfolio: Portfolio, validUntil: Date?))
        -> (at: Date, task: Task<(portfolio: Portfolio, validUntil: Date?), any Error>) {
        loading.withLock { loading in
            if let current = loading.current, current.version == version, current.pivot == pivot, current.at <= now {
                return (current.at, current.task)
            }
            loading.loads += 1
            let id = loading.loads
            let task = Task { [self] in
                defer { self.loading.withLock { if $0.current?.id == id { $0.current = nil } } }
                return try await start()
            }
            loading.current = Load(id: id, version: version, pivot: pivot, at: now, task: task)
            return (now, task)
        }
    }

    /// A number for a freshly loaded snapshot, never handed out before.
    func nextSnapshot() -> UInt64 { snapshots.withLock { $0 += 1; return $0 } }

    /// Called after every write transaction.
    func invalidate() {
        state.withLock { state in
            state.version &+= 1
            state.entry = nil
        }
    }

    var version: UInt64 { state.withLock { $0.version } }

    func lookup(now: Date, pivot: CurrencyCode) -> Portfolio? {
        state.withLock { state in
            guard let entry = state.entry, entry.version == state.version, entry.pivot == pivot, now >= entry.at,
                  entry.validUntil.map({ now < $0 }) ?? true else { return nil }
            return entry.portfolio
        }
    }

    /// Keeps `portfolio` if no write committed since `version` was read.
    func store(_ portfolio: Portfolio, version: UInt64, now: Date, pivot: CurrencyCode, validUntil: Date?) {
        state.withLock { state in
            guard state.version == version else { return }
            state.entry = Entry(version: version, pivot: pivot, at: now, validUntil: validUntil, portfolio: portfolio)
        }
    }
}
