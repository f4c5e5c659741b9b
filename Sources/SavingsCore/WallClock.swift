import Foundation

/// The one source of "now" for the whole daemon, injectable so tests can move time.
public protocol WallClock: Sendable {
    func now() -> Date
}

/// The real clock.
public struct SystemClock: WallClock {
    public init() {}
    public func now() -> Date { Date() }
}
