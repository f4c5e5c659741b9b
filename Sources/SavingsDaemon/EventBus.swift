import Foundation
import Logging
import SavingsCore
import SavingsRPC
import Synchronization

/// Something that happened, delivered to subscribers and the `on_event` hook.
public struct DaemonEvent: Sendable, Equatable {
    public var topic: String
    public var at: Date
    public var data: JSONValue

    /// The JSON-RPC notification sent to subscribers.
    public var notification: JSONValue {
        ["jsonrpc": "2.0", "method": "event", "params": ["topic": .string(topic), "at": Wire.timestamp(at), "data": data]]
    }
}

/// Fan-out of daemon events. Each subscriber has a bounded buffer; one that falls behind is
/// dropped (and told why in the log) rather than ever slowing the daemon down.
public final class EventBus: Sendable {
    public static let topics: Set<String> = [
        "data.changed", "rates.updated", "rates.failed", "month.rolled_over", "plans.created", "plans.stale",
        "month.started", "month.completed", "reminder.due", "goal.reached", "asset.synced", "asset.sync_failed",
    ]
    public static let bufferSize = 256

    private struct Subscriber {
        var topics: Set<String>?
        var label: String
        var continuation: AsyncStream<DaemonEvent>.Continuation
    }

    private let subscribers = Mutex<[UInt64: Subscriber]>([:])
    private let nextID = Atomic<UInt64>(1)
    private let clock: any WallClock
    private let logger: Logger

    public init(clock: any WallClock, logger: Logger) {
        self.clock = clock
        self.logger = logger
    }

    /// Subscribes to `topics` (nil: all). The stream ends on `unsubscribe` or when dropped.
    public func subscribe(topics: Set<String>?, label: String) -> (id: UInt64, events: AsyncStream<DaemonEvent>) {
        let id = nextID.add(1, ordering: .relaxed).oldValue
        let (stream, continuation) = AsyncStream.makeStream(of: DaemonEvent.self, bufferingPolicy: .bufferingOldest(Self.bufferSize))
        subscribers.withLock { $0[id] = Subscriber(topics: topics, label: label, continuation: continuation) }
        return (id, stream)
    }

    public func unsubscribe(_ id: UInt64) {
        subscribers.withLock { $0.removeValue(forKey: id) }?.continuation.finish()
    }

    public func publish(_ topic: String, _ data: JSONValue) {
        let event = DaemonEvent(topic: topic, at: clock.now(), data: data)
        let dropped: [Subscriber] = subscribers.withLock { subscribers in
            var dropped: [Subscriber] = []
            for (id, subscriber) in subscribers where subscriber.topics?.contains(topic) ?? true {
                if case .dropped = subscriber.continuation.yield(event) {
                    subscribers.removeValue(forKey: id)
                    dropped.append(subscriber)
                }
            }
            return dropped
        }
        for subscriber in dropped {
            subscriber.continuation.finish()
            logger.warning("dropped event subscriber \(subscriber.label): it fell \(Self.bufferSize) events behind")
        }
        logger.debug("event", metadata: ["topic": "\(topic)"])
    }
}
