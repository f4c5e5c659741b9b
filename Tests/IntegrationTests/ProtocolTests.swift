import Foundation
import SavingsRPC
import Testing

/// JSON-RPC 2.0 over the real socket, exactly as any client sees it.
@Suite struct ProtocolTests {
    func exchange(_ connection: LineClient, _ line: String) throws -> JSONValue {
        try connection.sendLine(line)
        guard let reply = try connection.readLine() else { throw HarnessError("connection closed after: \(line)") }
        return try JSONParser.parse(reply)
    }

    /// `daemon.ping` is answered on the I/O thread, but never ahead of an earlier request's
    /// answer on the same connection, however the lines arrive.
    @Test func pipelinedAnswersKeepTheirOrder() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("data.demo")
        let c = try daemon.raw()
        for round in 0..<40 {
            let slow = [#""method":"dashboard.get""#, #""method":"month.progress""#, #""method":"help""#][round % 3]
            var lines = #"{"jsonrpc":"2.0","id":"a\#(round)",\#(slow)}"# + "\n"
            lines += #"{"jsonrpc":"2.0","method":"daemon.ping"}"# + "\n"  // a notification: nothing comes back
            lines += #"{"jsonrpc":"2.0","id":"b\#(round)","method":"daemon.ping"}"# + "\n"
            lines += #"[{"jsonrpc":"2.0","id":"c\#(round)","method":"daemon.ping"}]"# + "\n"
            lines += #"{"jsonrpc":"2.0","id":"d\#(round)","method":"daemon.ping"}"# + "\n"
            try c.send(Array(lines.utf8))
            var ids: [String] = []
            for _ in 0..<4 {
                let reply = try JSONParser.parse(try #require(try c.readLine()))
                ids.append((reply["id"] ?? reply.arrayValue?.first?["id"])?.stringValue ?? "?")
            }
            #expect(ids == ["a\(round)", "b\(round)", "c\(round)", "d\(round)"])
        }
    }

    @Test func specificationExamplesOverTheSocket() throws {
        let daemon = try DaemonProcess()
        let c = try daemon.raw()
        // rpc call with named parameters
        #expect(try exchange(c, #"{"jsonrpc":"2.0","method":"daemon.ping","id":1}"#) == ["jsonrpc": "2.0", "result": ["pong": true], "id": 1])
        #expect(try exchange(c, #"{"jsonrpc":"2.0","method":"goal.list","params":{"include_archived":true},"id":"x"}"#)["id"] == "x")
        // notifications get no response: the next line answers the following call
        try c.sendLine(#"{"jsonrpc":"2.0","method":"daemon.ping"}"#)
        try c.sendLine(#"{"jsonrpc":"2.0","method":"no.such.method"}"#)
        #expect(try exchange(c, #"{"jsonrpc":"2.0","method":"daemon.ping","id":2}"#)["id"] == 2)
        // non-existent method
        let missing = try exchange(c, #"{"jsonrpc":"2.0","method":"foobar","id":"1"}"#)
        #expect(missing["error"]?["code"] == -32601)
        #expect(missing["id"] == "1")
        // invalid JSON: parse error, and the connection stays usable
        let parse = try exchange(c, #"{"jsonrpc":"2.0","method":"foobar,"params":"bar","baz]"#)
        #expect(parse["error"]?["code"] == -32700)
        #expect(parse["id"] == .null)
        #expect(try exchange(c, #"{"jsonrpc":"2.0","method":"daemon.ping","id":3}"#)["result"] == ["pong": true])
        // invalid request object
        let invalid = try exchange(c, #"{"jsonrpc":"2.0","method":1,"params":"bar"}"#)
        #expect(invalid["error"]?["code"] == -32600)
        // batch, invalid JSON
        #expect(try exchange(c, #"[{"jsonrpc":"2.0","method":"daemon.ping","id":"1"},{"jsonrpc":"2.0","method"]"#)["error"]?["code"] == -32700)
        // empty array
        let empty = try exchange(c, "[]")
        #expect(empty["error"]?["code"] == -32600)
        #expect(empty["id"] == .null)
        // invalid batch, not empty
        #expect(try exchange(c, "[1]").arrayValue?.count == 1)
        let three = try exchange(c, "[1,2,3]").arrayValue ?? []
        #expect(three.count == 3)
        #expect(three.allSatisfy { $0["error"]?["code"] == -32600 })
        // mixed batch
        let mixed = try exchange(c, """
            [{"jsonrpc":"2.0","method":"daemon.ping","id":"1"},{"jsonrpc":"2.0","method":"daemon.ping"},\
            {"jsonrpc":"2.0","method":"goal.list","params":{},"id":"2"},{"foo":"boo"},\
            {"jsonrpc":"2.0","method":"foo.get","params":{"name":"myself"},"id":"5"},\
            {"jsonrpc":"2.0","method":"daemon.status","id":"9"}]
            """).arrayValue ?? []
        #expect(mixed.count == 5)
        #expect(mixed.map { $0["id"] } == ["1", "2", .null, "5", "9"])
        #expect(mixed[2]["error"]?["code"] == -32600)
        #expect(mixed[3]["error"]?["code"] == -32601)
        #expect(mixed[4]["result"]?["pid"] == .int(Int(daemon.pid)))
        // batch of notifications only: nothing comes back
        try c.sendLine(#"[{"jsonrpc":"2.0","method":"daemon.ping"},{"jsonrpc":"2.0","method":"goal.list"}]"#)
        #expect(try exchange(c, #"{"jsonrpc":"2.0","method":"daemon.ping","id":4}"#)["id"] == 4)
    }

    @Test func unknownParametersAreNamed() throws {
        let daemon = try DaemonProcess()
        let error = try daemon.failure("goal.list", ["include_archive": true])
        #expect(error.code == -32602)
        #expect(error.data?["param"] == "include_archive")
        #expect(error.message.contains("include_archive"))
        let typed = try daemon.failure("goal.create", ["name": 5, "currency": "EUR", "target_amount": "1", "deadline": "2027-01-01"])
        #expect(typed.data?["param"] == "name")
    }

    /// Found by the socket fuzz test: a complete over-long line arriving in one read used to be
    /// decoded before the buffer limit applied, so it was answered instead of refused.
    @Test func overLongLineInOneWriteIsRefusedToo() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_MAX_LINE_BYTES": "1024"])
        let c = try daemon.raw()
        try c.sendLine(#"{"jsonrpc":"2.0","method":"daemon.ping","id":"\#(String(repeating: "x", count: 3000))"}"#)
        let reply = try JSONParser.parse(try #require(try c.readLine()))
        #expect(reply["error"]?["data"]?["kind"] == "too_large")
        #expect(try c.readLine() == nil, "the connection must be closed")
    }

    @Test func overLongLineIsRefusedAndOnlyThatConnectionCloses() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_MAX_LINE_BYTES": "4096"])
        let bystander = try daemon.raw()
        let c = try daemon.raw()
        try c.send(Array(repeating: UInt8(ascii: "a"), count: 20_000))
        let reply = try #require(try c.readLine())
        let error = try JSONParser.parse(reply)
        #expect(error["error"]?["data"]?["kind"] == "too_large")
        #expect(error["error"]?["data"]?["limit"] == 4096)
        #expect(try c.readLine() == nil, "the connection must be closed")
        try bystander.sendLine(#"{"jsonrpc":"2.0","method":"daemon.ping","id":1}"#)
        #expect(try bystander.readLine() != nil)
        #expect(try daemon.call("daemon.ping") == ["pong": true])
        // A line just under the limit is fine.
        let padded = #"{"jsonrpc":"2.0","method":"daemon.ping","id":"\#(String(repeating: "x", count: 3900))"}"#
        let ok = try daemon.raw()
        try ok.sendLine(padded)
        #expect(try JSONParser.parse(try #require(try ok.readLine()))["result"] == ["pong": true])
    }

    @Test func hostileInputNeverTakesTheDaemonDown() throws {
        let daemon = try DaemonProcess()
        let c = try daemon.raw()
        let lines: [[UInt8]] = [
            [0xFF, 0xFE, 0x00, 0x01],
            Array(String(repeating: "[", count: 50_000).utf8),
            Array(#"{"jsonrpc":"2.0","method":"goal.create","params":{"name":"x","currency":"EUR","target_amount":"1e999999","deadline":"2027-01-01"},"id":1}"#.utf8),
            Array(#"{"jsonrpc":"2.0","method":"goal.get","params":{"goal":"\u0000"},"id":2}"#.utf8),
            Array(#"{"jsonrpc":"2.0","id":3,"method":"goal.create","params":{"name":"a","currency":"EUR","target_amount":"NaN","deadline":"2027-01-01"}}"#.utf8),
            Array("\r\n".utf8),
        ]
        for line in lines {
            try c.send(line + [0x0A])
        }
        var replies: [JSONValue] = []
        for _ in 0..<5 { replies.append(try JSONParser.parse(try #require(try c.readLine()))) }
        #expect(replies[0]["error"]?["code"] == -32700)
        #expect(replies[1]["error"]?["code"] == -32700)
        #expect(replies[2]["error"]?["data"]?["kind"] == "invalid_amount")
        #expect(replies[3]["error"]?["data"]?["kind"] == "not_found")
        #expect(replies[4]["error"]?["data"]?["kind"] == "invalid_amount")
        #expect(try daemon.call("goal.list") == ["goals": []])
    }

    @Test func clientThatHalfClosesStillGetsEveryAnswer() throws {
        let daemon = try DaemonProcess()
        let c = try daemon.raw()
        for id in 1...20 { try c.sendLine(#"{"jsonrpc":"2.0","method":"daemon.status","id":\#(id)}"#) }
        c.shutdownWrite()
        var ids: [JSONValue?] = []
        while let line = try c.readLine() { ids.append(try JSONParser.parse(line)["id"]) }
        #expect(ids == (1...20).map { .int($0) })
    }

    @Test func introspectionDescribesEveryMethod() throws {
        let daemon = try DaemonProcess()
        let help = try daemon.call("help")
        let names = Set(help["methods"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? [])
        for method in ["daemon.ping", "daemon.status", "help", "rpc.discover", "goal.create", "goal.list", "goal.get",
                       "goal.update", "goal.archive", "goal.delete"] {
            #expect(names.contains(method), "help lacks \(method)")
        }
        let create = try daemon.call("help", ["method": "goal.create"])
        let params = create["params"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []
        #expect(params == ["name", "currency", "target_amount", "deadline", "start_date", "notes"])
        let document = try daemon.call("rpc.discover")
        #expect(document["openrpc"]?.stringValue?.hasPrefix("1.") == true)
        #expect(document["info"]?["title"] == "savingsd")
        #expect(Set(document["methods"]?.arrayValue?.compactMap { $0["name"]?.stringValue } ?? []) == names)
    }
}
