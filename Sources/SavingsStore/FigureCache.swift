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
