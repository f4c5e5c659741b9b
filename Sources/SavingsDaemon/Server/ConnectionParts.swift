import Foundation
import NIOCore
import Synchronization

/// What the connection's task writes: the answer to a line it was handed (nil when the line
/// needed none), or anything else (progress, events, refusals).
enum Outgoing: Sendable {
    case response(ByteBuffer?)
    case other(ByteBuffer)
}

/// A request line longer than `max_line_bytes`.
struct LineTooLong: Error {}

/// A request could not send what it had for its client: the connection is closed (the client
/// went away mid-download, or was closed for not reading).
struct ConnectionGone: Error, CustomStringConvertible {
    var description: String { "the connection closed before the answer was complete" }
}

/// A pending `events.subscribe` of one connection, set by the handler, taken by the server.
final class SubscriptionRequest: Sendable {
    private let topics = Mutex<Set<String>??>(nil)

    func set(_ value: Set<String>?) { topics.withLock { $0 = .some(value) } }

    func take() -> Set<String>?? { topics.withLock { value in defer { value = nil }; return value } }
}

/// Where the server listens: a descriptor from systemd, or a path it binds itself.
enum ListeningSocket: Sendable {
    case activated(Int32)
    case path(String)
}
