import Foundation
import Synchronization

/// The configuration currently in force; SIGHUP swaps in the reloadable part.
public final class LiveConfig: Sendable {
    private let state: Mutex<DaemonConfig>

    public init(_ config: DaemonConfig) {
        self.state = Mutex(config)
    }

    public var current: DaemonConfig { state.withLock { $0 } }

    /// Applies the live-changeable settings of `new`; returns keys that need a restart.
    @discardableResult
    public func reload(_ new: DaemonConfig) -> [String] {
        state.withLock { config in
            let restartOnly = config.restartOnlyChanges(in: new)
            config = config.reloadable(from: new)
            return restartOnly
        }
    }
}
