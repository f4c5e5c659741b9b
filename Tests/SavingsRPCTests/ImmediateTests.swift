import Foundation
import SavingsCore
import Testing
@testable import SavingsRPC

/// Immediate methods answered on the I/O thread give exactly what the ordinary path gives,
/// and anything else is left to the ordinary path.
@Suite struct ImmediateTests {
    static let dispatcher: RPCDispatcher = {
        var registry = MethodRegistry()
        let result = ResultSpec("r", "r", schema: ["type": "object"])
        registry.registerImmediate(MethodSpec("daemon.ping", summary: "", params: [.optional("echo", .string, "")],
                                              result: result, writes: false)) { params in
            ["pong": true, "echo": params.string("echo").map(JSONValue.string) ?? .null]
        }
        registry.register(MethodSpec("slow", summary: "", result: result, writes: false)) { _, _ in "slow" }
        return RPCDispatcher(registry: registry)
    }()

    @Test(arguments: [
        #"{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}"#,
        #"  {"id":"a b","method":"daemon.ping","jsonrpc":"2.0","params":{}}"#,
        #"{"jsonrpc":"2.0","id":2,"method":"daemon.ping","params":{"echo":"\"daemon.ping\" é"}}"#,
        #"{"jsonrpc":"2.0","id":3,"method":"daemon.ping","params":{"nope":1}}"#,
        #"{"jsonrpc":"2.0","id":4,"method":"daemon.ping","params":{"echo":5}}"#,
    ])
    func sameAnswerAsTheOrdinaryPath(_ line: String) async throws {
        let immediate = try #require(Self.dispatcher.handleImmediately(line: Array(line.utf8)))
        let ordinary = try #require(await Self.dispatcher.handle(line: Array(line.utf8), context: CallContext(connectionID: 1)))
        #expect(try JSONParser.parse(immediate) == (try JSONParser.parse(ordinary)))
    }

    @Test(arguments: [
        #"{"jsonrpc":"2.0","method":"daemon.ping"}"#,  // a notification: no answer at all
        #"[{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}]"#,  // batches take the ordinary path
        #"{"jsonrpc":"2.0","id":1,"method":"slow","params":{"x":"daemon.ping"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"daemon.ping""#,  // malformed: the ordinary path reports it
        #"{"jsonrpc":"1.0","id":1,"method":"daemon.ping"}"#,
        #"{"jsonrpc":"2.0","id":5,"method":"daemon.ping","params":[1]}"#,  // positional: refused by the ordinary path
    ])
    func leftToTheOrdinaryPath(_ line: String) {
        #expect(Self.dispatcher.handleImmediately(line: Array(line.utf8)) == nil)
    }

    @Test func longLinesAreLeftAlone() {
        let padding = String(repeating: " ", count: RPCDispatcher.immediateLineLimit)
        #expect(Self.dispatcher.handleImmediately(line: Array((#"{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}"# + padding).utf8)) == nil)
    }
}
