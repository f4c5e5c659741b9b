import Synchronization
import Testing
@testable import SavingsRPC

/// A long call that asked for progress is never silent for longer than the pulse's interval.
@Suite struct ProgressPulseTests {
    final class Heard: Sendable {
        let lines = Mutex<[JSONValue]>([])
        func append(_ line: JSONValue) { lines.withLock { $0.append(line) } }
        var all: [JSONValue] { lines.withLock { $0 } }
        var phases: [String] { all.compactMap { $0["params"]?["phase"]?.stringValue } }
    }

    /// `slow` reports one step of its own first if `step`, then works until `heard` holds
    /// `until` lines (waiting on what arrives, not on the clock: the tests run beside others
    /// that may hold every thread for a while: on two cores, a full run's blocking integration
    /// tests have held both for over a minute), for at most 300 s.
    static func dispatcher(step: Bool, until: Int, heard: Heard) -> RPCDispatcher {
        var registry = MethodRegistry()
        registry.register(MethodSpec("slow", summary: "", params: [ParamSpec.progress],
                                     result: ResultSpec("r", "r", schema: ["type": "object"]), writes: false)) { _, call in
            if step { call.progress("slow", phase: "rows", done: 7) }
            let start = ContinuousClock.now
            while heard.all.count < until, start.duration(to: .now) < .seconds(300) {
                try await Task.sleep(for: .milliseconds(20))
            }
            return ["done": true]
        }
        var dispatcher = RPCDispatcher(registry: registry)
        dispatcher.progressInterval = .milliseconds(100)
        return dispatcher
    }

    func call(_ dispatcher: RPCDispatcher, progress: Bool, heard: Heard) async -> Result<JSONValue, RPCError> {
        await dispatcher.call("slow", params: progress ? ["progress": true] : [:],
                              context: CallContext(connectionID: 1, notify: { heard.append($0) }))
    }

    @Test func aQuietCallSaysItIsWorking() async throws {
        let heard = Heard()
        let start = ContinuousClock.now
        let result = await call(Self.dispatcher(step: false, until: 3, heard: heard), progress: true, heard: heard)
        #expect(try result.get()["done"] == true)
        #expect(heard.all.count >= 3, "\(heard.all)")
        #expect(start.duration(to: .now) >= .milliseconds(300), "one line per interval of silence, not more")
        #expect(Set(heard.phases) == ["working"])
        #expect(heard.all.first?["params"]?["method"] == "slow")
        let count = heard.all.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(heard.all.count == count, "nothing once the call has returned")
    }

    @Test func itsOwnProgressPassesAndIsRepeatedInQuietStretches() async throws {
        let heard = Heard()
        _ = await call(Self.dispatcher(step: true, until: 4, heard: heard), progress: true, heard: heard)
        let phases = heard.phases
        #expect(phases.count >= 4, "the step, then repeated: \(phases)")
        #expect(Set(phases) == ["rows"], "\(phases)")
        #expect(heard.all.last?["params"]?["done"] == 7)
    }

    @Test func nothingExtraWithoutProgress() async throws {
        let heard = Heard()
        var registry = MethodRegistry()
        registry.register(MethodSpec("slow", summary: "", params: [ParamSpec.progress],
                                     result: ResultSpec("r", "r", schema: ["type": "object"]), writes: false)) { _, _ in
            try await Task.sleep(for: .milliseconds(400))
            return ["done": true]
        }
        var dispatcher = RPCDispatcher(registry: registry)
        dispatcher.progressInterval = .milliseconds(100)
        _ = await call(dispatcher, progress: false, heard: heard)
        #expect(heard.all.isEmpty)
    }
}
