import SavingsCore
import SavingsRPC

/// `events.subscribe`: the connection becomes a stream of event notifications.
enum EventMethods {
    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        registry.register(MethodSpec(
            "events.subscribe",
            summary: "Receive events on this connection as {\"method\":\"event\",\"params\":{topic,at,data}} notifications.",
            params: [.optional("topics", .stringArray, "topics to receive (default: all): \(EventBus.topics.sorted().joined(separator: ", "))")],
            result: ResultSpec("subscribed", "{\"subscribed\": [topic]}", schema: Schema.object([
                "subscribed": Schema.array(Schema.enumeration(EventBus.topics.sorted())),
            ])),
            writes: false)) { params, call in
            let topics = params.strings("topics").map(Set.init)
            if let unknown = topics?.subtracting(EventBus.topics).sorted(), !unknown.isEmpty {
                throw DomainError.invalidField("topics", "unknown topic \(unknown.joined(separator: ", ")); known: \(EventBus.topics.sorted().joined(separator: ", "))")
            }
            guard let subscribe = call.subscribe else {
                throw DomainError(.invalidState, "this connection cannot stream events")
            }
            subscribe(topics)
            return ["subscribed": .array((topics ?? EventBus.topics).sorted().map(JSONValue.string))]
        }
    }
}
