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
        // Plain calls (read without the parser):
        #"{"jsonrpc":"2.0","id":-12,"method":"daemon.ping"}"#,
        #"{"jsonrpc":"2.0","id":0,"method":"daemon.ping"}"#,
        " {\t\"method\" : \"daemon.ping\" , \"params\" : { } ,\"id\":\"watchdog\", \"jsonrpc\":\"2.0\"}\r ",
        // Not plain, answered after parsing:
        #"{"jsonrpc":"2.0","id":1.50,"method":"daemon.ping"}"#,
        #"{"jsonrpc":"2.0","id":1e3,"method":"daemon.ping"}"#,
        #"{"jsonrpc":"2.0","id":"tab\there","method":"daemon.ping"}"#,
        #"{"jsonrpc":"2.0","id":"é","method":"daemon.ping"}"#,
        #"{"jsonrpc":"2.0","id":null,"method":"daemon.ping"}"#,
        #"{"jsonrpc":"2.0","id":12345678901234567890123,"method":"daemon.ping"}"#,
    ])
    func sameAnswerAsTheOrdinaryPath(_ line: String) async throws {
        let immediate = try #require(Self.dispatcher.handleImmediately(line: Array(line.utf8)))
        let ordinary = try #require(await Self.dispatcher.handle(line: Array(line.utf8), context: CallContext(connectionID: 1)))
        // Byte for byte: the same serialization of the same answer.
        #expect(String(decoding: immediate, as: UTF8.self) == String(decoding: ordinary, as: UTF8.self))
    }

    /// A plain call whose method fails validation is answered with the same error.
    @Test func plainCallOfAMethodThatRefusesIt() async throws {
        var registry = MethodRegistry()
        registry.registerImmediate(MethodSpec("needs", summary: "", params: [.required("x", .string, "")],
                                              result: ResultSpec("r", "r", schema: ["type": "object"]), writes: false)) { _ in .null }
        let dispatcher = RPCDispatcher(registry: registry)
        for line in [#"{"jsonrpc":"2.0","id":7,"method":"needs"}"#, #"{"jsonrpc":"2.0","id":"s","method":"needs","params":{}}"#] {
            let immediate = try #require(dispatcher.handleImmediately(line: Array(line.utf8)))
            let ordinary = try #require(await dispatcher.handle(line: Array(line.utf8), context: CallContext(connectionID: 1)))
            #expect(String(decoding: immediate, as: UTF8.self) == String(decoding: ordinary, as: UTF8.self))
            #expect(String(decoding: immediate, as: UTF8.self).contains("missing required parameter x"))
        }
    }

    @Test(arguments: [
        (#"{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}"#, "1", "daemon.ping"),
        (#"{"id":"a b","method":"m","jsonrpc":"2.0","params":{}}"#, #""a b""#, "m"),
        (#"{"jsonrpc":"2.0","id":-0,"method":"m"}"#, "-0", "m"),
    ])
    func plainRequests(_ line: String, id: String, method: String) throws {
        let bytes = Array(line.utf8)
        let plain = try #require(bytes.withUnsafeBytes { PlainRequest.scan($0) })
        #expect(String(decoding: bytes[plain.id], as: UTF8.self) == id)
        #expect(plain.method == method)
    }

    @Test(arguments: [
        #"{"jsonrpc":"2.0","method":"m"}"#,  // no id: a notification
        #"{"jsonrpc":"2.0","id":1}"#,
        #"{"id":1,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m","id":2}"#,  // repeated member
        #"{"jsonrpc":"2.0","id":1,"method":"m","extra":0}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m","params":{"a":1}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m","params":[]}"#,
        #"{"jsonrpc":"2.0","id":01,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":-,"method":"m"}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m"} x"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m",}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"m""#,
        #"{"jsonrpc":"2.0","id":1,"method":"m\"}"#,
        #"{"jsonrpc":"2.00","id":1,"method":"m"}"#,
        #"{}"#,
        "",
    ])
    func notPlain(_ line: String) {
        #expect(Array(line.utf8).withUnsafeBytes { PlainRequest.scan($0) } == nil)
    }

    @Test(arguments: [
        #"{"jsonrpc":"2.0","method":"daemon.ping"}"#,  // a notification: no answer at all
        #"[{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}]"#,  // batches take the ordinary path
        #"{"jsonrpc":"2.0","id":1,"method":"slow","params":{"x":"daemon.ping"}}"#,
        #"{"jsonrpc":"2.0","id":1,"method":"daemon.ping""#,  // malformed: the ordinary path reports it
        #"{"jsonrpc":"1.0","id":1,"method":"daemon.ping"}"#,
        #"{"jsonrpc":"2.0","id":5,"method":"daemon.ping","params":[1]}"#,  // positional: refused by the ordinary path
        #"{"jsonrpc":"2.0","id":1,"method":"daemon\u002eping"}"#,  // an escaped name: the ordinary path reads it
    ])
    func leftToTheOrdinaryPath(_ line: String) {
        #expect(Self.dispatcher.handleImmediately(line: Array(line.utf8)) == nil)
    }

    @Test func longLinesAreLeftAlone() {
        let padding = String(repeating: " ", count: RPCDispatcher.immediateLineLimit)
        #expect(Self.dispatcher.handleImmediately(line: Array((#"{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}"# + padding).utf8)) == nil)
    }
}
