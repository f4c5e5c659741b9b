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

    /// `slow` works for `milliseconds`, reporting one step of its own after `stepAfter`, if given.
    static func dispatcher(milliseconds: Int, stepAfter: Int?) -> RPCDispatcher {
        var registry = MethodRegistry()
        registry.register(MethodSpec("slow", summary: "", params: [ParamSpec.progress],
                                     result: ResultSpec("r", "r", schema: ["type": "object"]), writes: false)) { _, call in
            if let stepAfter {
                try await Task.sleep(for: .milliseconds(stepAfter))
                call.progress("slow", phase: "rows", done: 7)
                try await Task.sleep(for: .milliseconds(milliseconds - stepAfter))
            } else {
                try await Task.sleep(for: .milliseconds(milliseconds))
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
        let result = await call(Self.dispatcher(milliseconds: 650, stepAfter: nil), progress: true, heard: heard)
        #expect(try result.get()["done"] == true)
        // 650 ms at one line per 100 ms of silence (checked every 50 ms): at least four.
        #expect(heard.phases.count >= 4, "\(heard.all)")
        #expect(Set(heard.phases) == ["working"])
        #expect(heard.all.first?["params"]?["method"] == "slow")
        let count = heard.all.count
        try await Task.sleep(for: .milliseconds(300))
        #expect(heard.all.count == count, "nothing once the call has returned")
    }

    @Test func itsOwnProgressPassesAndIsRepeatedInQuietStretches() async throws {
        let heard = Heard()
        _ = await call(Self.dispatcher(milliseconds: 700, stepAfter: 50), progress: true, heard: heard)
        let phases = heard.phases
        #expect(phases.first == "rows", "its own step first: \(phases)")
        #expect(phases.filter { $0 == "rows" }.count >= 4, "the step, then repeated: \(phases)")
        #expect(!phases.contains("working"))
        #expect(heard.all.last?["params"]?["done"] == 7)
    }

    @Test func nothingExtraWithoutProgress() async throws {
        let heard = Heard()
        _ = await call(Self.dispatcher(milliseconds: 400, stepAfter: nil), progress: false, heard: heard)
        #expect(heard.all.isEmpty)
    }
}
