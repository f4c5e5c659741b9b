import Foundation
import SavingsCore
import Testing
@testable import SavingsRPC

/// The JSON-RPC 2.0 specification's examples, adapted to by-name parameters, run in-process.
@Suite struct DispatcherTests {
    struct Boom: Error {}

    static func makeDispatcher() -> RPCDispatcher {
        var registry = MethodRegistry()
        let result = ResultSpec("r", "r", schema: ["type": "object"])
        registry.register(MethodSpec("subtract", summary: "minuend - subtrahend",
                                     params: [.required("minuend", .integer, "a"), .required("subtrahend", .integer, "b")],
                                     result: result, writes: false)) { params, _ in
            .int(params.int("minuend")! - params.int("subtrahend")!)
        }
        registry.register(MethodSpec("notify_hello", summary: "", params: [.optional("value", .integer, "")],
                                     result: result, writes: false)) { _, _ in .null }
        registry.register(MethodSpec("get_data", summary: "", result: result, writes: false)) { _, _ in ["hello", 5] }
        registry.register(MethodSpec("fail.domain", summary: "", result: result, writes: false)) { _, _ in
            throw DomainError(.notFound, "no goal matches 'x'", details: ["reference": "x"])
        }
        registry.register(MethodSpec("fail.internal", summary: "", result: result, writes: false)) { _, _ in
            throw Boom()
        }
        registry.register(MethodSpec("amount.echo", summary: "", params: [
            .required("amount", .decimal, ""), ParamSpec("note", .string, nullable: true, ""), .optional("when", .date, ""),
        ], result: result, writes: true)) { params, _ in
            ["amount": .string(try params.requiredDecimalText("amount")), "note_null": .bool(params.isNull("note"))]
        }
        registry.registerIntrospection(title: "test", version: "1")
        return RPCDispatcher(registry: registry)
    }

    let dispatcher = makeDispatcher()

    func send(_ line: String) async -> JSONValue? {
        guard let bytes = await dispatcher.handle(line: Array(line.utf8), context: CallContext(connectionID: 1)) else { return nil }
        return try! JSONParser.parse(bytes)
    }

    @Test func callWithNamedParams() async {
        let response = await send(#"{"jsonrpc": "2.0", "method": "subtract", "params": {"subtrahend": 23, "minuend": 42}, "id": 3}"#)
        #expect(response == ["jsonrpc": "2.0", "result": 19, "id": 3])
        let stringID = await send(#"{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 23, "subtrahend": 42}, "id": "abc"}"#)
        #expect(stringID == ["jsonrpc": "2.0", "result": -19, "id": "abc"])
    }

    @Test func positionalParamsAreRefusedAsInvalidParams() async {
        let response = await send(#"{"jsonrpc": "2.0", "method": "subtract", "params": [42, 23], "id": 1}"#)
        #expect(response?["error"]?["code"] == -32602)
        #expect(response?["id"] == 1)
    }

    @Test func overLongStringsAreRefusedNamingTheParameter() async {
        let long = String(repeating: "n", count: MethodRegistry.maxStringBytes + 1)
        let response = await send(#"{"jsonrpc": "2.0", "method": "amount.echo", "params": {"amount": "1", "note": "\#(long)"}, "id": 1}"#)
        #expect(response?["error"]?["code"] == -32602)
        #expect(response?["error"]?["data"]?["param"] == "note")
        let fine = await send(#"{"jsonrpc": "2.0", "method": "amount.echo", "params": {"amount": "1", "note": "short"}, "id": 2}"#)
        #expect(fine?["result"] != nil)
    }

    @Test func readOnlyCallersMayNotWrite() async {
        var context = CallContext(connectionID: 1)
        context.mayWrite = false
        let write = await dispatcher.call("amount.echo", params: ["amount": "1"], context: context)
        guard case .failure(let error) = write else { Issue.record("a write went through"); return }
        #expect(error.data?["kind"] == "read_only")
        let read = await dispatcher.call("get_data", params: [:], context: context)
        guard case .success = read else { Issue.record("a read was refused"); return }
    }

    @Test func notificationsGetNoResponse() async {
        #expect(await send(#"{"jsonrpc": "2.0", "method": "notify_hello", "params": {"value": 5}}"#) == nil)
        #expect(await send(#"{"jsonrpc": "2.0", "method": "foobar"}"#) == nil)
        #expect(await send("   ") == nil)
    }

    @Test func unknownMethod() async {
        let response = await send(#"{"jsonrpc": "2.0", "method": "foobar", "id": "1"}"#)
        #expect(response?["error"]?["code"] == -32601)
        #expect(response?["id"] == "1")
    }

    @Test func invalidJSON() async {
        let response = await send(#"{"jsonrpc": "2.0", "method": "foobar, "params": "bar", "baz]"#)
        #expect(response?["error"]?["code"] == -32700)
        #expect(response?["id"] == .null)
    }

    @Test func invalidRequestObject() async {
        let response = await send(#"{"jsonrpc": "2.0", "method": 1, "params": "bar"}"#)
        #expect(response?["error"]?["code"] == -32600)
        #expect(response?["id"] == .null)
        #expect(await send(#"{"method": "get_data", "id": 9}"#)?["error"]?["code"] == -32600)
        #expect(await send(#"{"jsonrpc": "1.0", "method": "get_data", "id": 9}"#)?["id"] == 9)
        #expect(await send(#"{"jsonrpc": "2.0", "method": "get_data", "id": {"a": 1}}"#)?["error"]?["code"] == -32600)
    }

    @Test func batchWithInvalidJSON() async {
        let response = await send(#"[{"jsonrpc": "2.0", "method": "sum", "params": [1,2,4], "id": "1"},{"jsonrpc": "2.0", "method""#)
        #expect(response?["error"]?["code"] == -32700)
    }

    @Test func emptyBatch() async {
        let response = await send("[]")
        #expect(response?["error"]?["code"] == -32600)
        #expect(response?["id"] == .null)
    }

    @Test func invalidBatches() async {
        let one = await send("[1]")
        #expect(one?.arrayValue?.count == 1)
        #expect(one?.arrayValue?.first?["error"]?["code"] == -32600)
        let three = await send("[1,2,3]")
        #expect(three?.arrayValue?.count == 3)
        #expect(three?.arrayValue?.allSatisfy { $0["error"]?["code"] == -32600 && $0["id"] == .null } == true)
    }

    @Test func mixedBatch() async {
        let response = await send("""
            [{"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 1, "subtrahend": -3}, "id": "1"},
             {"jsonrpc": "2.0", "method": "notify_hello", "params": {"value": 7}},
             {"jsonrpc": "2.0", "method": "subtract", "params": {"minuend": 42, "subtrahend": 23}, "id": "2"},
             {"foo": "boo"},
             {"jsonrpc": "2.0", "method": "foo.get", "params": {"name": "myself"}, "id": "5"},
             {"jsonrpc": "2.0", "method": "get_data", "id": "9"}]
            """.replacingOccurrences(of: "\n", with: ""))
        let items = response?.arrayValue ?? []
        #expect(items.count == 5)
        #expect(items[0] == ["jsonrpc": "2.0", "result": 4, "id": "1"])
        #expect(items[1] == ["jsonrpc": "2.0", "result": 19, "id": "2"])
        #expect(items[2]["error"]?["code"] == -32600)
        #expect(items[3]["error"]?["code"] == -32601)
        #expect(items[3]["id"] == "5")
        #expect(items[4] == ["jsonrpc": "2.0", "result": ["hello", 5], "id": "9"])
    }

    @Test func batchOfNotificationsReturnsNothing() async {
        #expect(await send(#"[{"jsonrpc": "2.0", "method": "notify_hello", "params": {"value": 4}}, {"jsonrpc": "2.0", "method": "get_data"}]"#) == nil)
    }

    @Test func batchSizeIsBounded() async {
        let one = #"{"jsonrpc":"2.0","method":"get_data","id":1}"#
        let response = await send("[" + Array(repeating: one, count: 101).joined(separator: ",") + "]")
        #expect(response?["error"]?["code"] == -32600)
    }

    @Test func parameterValidationNamesTheParameter() async {
        let unknown = await send(#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1,"subtrahend":2,"extra":3},"id":1}"#)
        #expect(unknown?["error"]?["code"] == -32602)
        #expect(unknown?["error"]?["data"]?["param"] == "extra")
        let missing = await send(#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1},"id":1}"#)
        #expect(missing?["error"]?["data"]?["param"] == "subtrahend")
        let wrongType = await send(#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":"1","subtrahend":2},"id":1}"#)
        #expect(wrongType?["error"]?["data"]?["param"] == "minuend")
        let fraction = await send(#"{"jsonrpc":"2.0","method":"subtract","params":{"minuend":1.5,"subtrahend":2},"id":1}"#)
        #expect(fraction?["error"]?["code"] == -32602)
        let nullRequired = await send(#"{"jsonrpc":"2.0","method":"amount.echo","params":{"amount":null},"id":1}"#)
        #expect(nullRequired?["error"]?["data"]?["param"] == "amount")
    }

    @Test func decimalsArriveExactlyAndNullableNullIsKept() async {
        let response = await send(#"{"jsonrpc":"2.0","method":"amount.echo","params":{"amount":0.1,"note":null,"when":null},"id":1}"#)
        #expect(response?["result"] == ["amount": "0.1", "note_null": true])
    }

    @Test func domainErrorsCarryTheirKind() async {
        let response = await send(#"{"jsonrpc":"2.0","method":"fail.domain","id":1}"#)
        #expect(response?["error"]?["code"] == -32000)
        #expect(response?["error"]?["data"]?["kind"] == "not_found")
    }

    @Test func internalErrorsLeakNothing() async {
        let response = await send(#"{"jsonrpc":"2.0","method":"fail.internal","id":1}"#)
        #expect(response?["error"] == ["code": -32603, "message": "Internal error"])
    }

    @Test func helpAndDiscoverComeFromTheRegistry() async {
        let help = await send(#"{"jsonrpc":"2.0","method":"help","id":1}"#)
        let names = help?["result"]?["methods"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(names.contains("subtract") && names.contains("help") && names.contains("rpc.discover"))
        let one = await send(#"{"jsonrpc":"2.0","method":"help","params":{"method":"amount.echo"},"id":1}"#)
        #expect(one?["result"]?["params"]?.arrayValue?.count == 3)
        #expect(one?["result"]?["writes"] == true)
        let missing = await send(#"{"jsonrpc":"2.0","method":"help","params":{"method":"nope"},"id":1}"#)
        #expect(missing?["error"]?["code"] == -32601)
        let discover = await send(#"{"jsonrpc":"2.0","method":"rpc.discover","id":1}"#)
        #expect(discover?["result"]?["openrpc"]?.stringValue?.hasPrefix("1.") == true)
        let methods = discover?["result"]?["methods"]?.arrayValue ?? []
        #expect(methods.count == names.count)
        let subtract = methods.first { $0["name"] == "subtract" }
        #expect(subtract?["params"]?.arrayValue?.first?["schema"]?["type"] == "integer")
        #expect(subtract?["result"]?["schema"] != nil)
    }
}
