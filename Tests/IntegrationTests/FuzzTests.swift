import Foundation
import SavingsCore
import SavingsRPC
import Testing

/// Random and mutated JSON-RPC lines over the socket, with wrong types for every parameter of
/// every method the registry declares: each line gets a valid response (or, for a line over
/// the size limit, only that connection closes), and the daemon keeps serving.
@Suite struct FuzzTests {
    static let wrongValues: [String] = [
        "1", "-1", "0", "1.5", "1e400", "-99999999999999999999999999999999999999999", "true", "null", "[]", "{}", "\"\"",
        "\"x\"", "\"-0\"", "\"2026-13-45\"", "\"../../etc/passwd\"", "[1,[2,[3]]]", "{\"a\":{\"b\":{}}}", "\"\\u0000\"",
        "\"" + String(repeating: "x", count: 5_000) + "\"", "\"NaN\"", "\"1e5\"", "99999999999999999999",
    ]

    /// Sends `line`, then a ping with `marker`; every line that comes back before the ping's
    /// answer must be a well-formed JSON-RPC response. Returns false if the connection closed.
    func exchange(_ client: LineClient, _ line: [UInt8], marker: Int) throws -> Bool {
        do {
            try client.send(line + [0x0A])
            try client.sendLine(#"{"jsonrpc":"2.0","id":\#(marker),"method":"daemon.ping"}"#)
        } catch {
            return false
        }
        while true {
            guard let answer = try client.readLine(timeoutMilliseconds: 20_000) else { return false }
            let value = try JSONParser.parse(answer)
            // A notification before the answer (an upload's upload.ready) is well-formed too.
            if value["method"] != nil, value["id"] == nil {
                #expect(value["jsonrpc"] == "2.0", "\(answer.prefix(300))")
                continue
            }
            for response in value.arrayValue ?? [value] {
                #expect(response["jsonrpc"] == "2.0", "\(answer.prefix(300))")
                #expect((response["result"] == nil) != (response["error"] == nil), "\(answer.prefix(300))")
                if let error = response["error"] { #expect(error["code"]?.intValue != nil && error["message"]?.stringValue != nil) }
            }
            if value["id"] == .number(String(marker)) { return true }
        }
    }

    @Test func everyLineGetsAnAnswerAndTheDaemonSurvives() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_MAX_LINE_BYTES": "65536"])
        let discover = try daemon.call("rpc.discover")
        let methods = (discover["methods"]?.arrayValue ?? []).compactMap { method -> (String, [String])? in
            guard let name = method["name"]?.stringValue, name != "events.subscribe" else { return nil }
            return (name, (method["params"]?.arrayValue ?? []).compactMap { $0["name"]?.stringValue })
        }
        #expect(methods.count > 40)
        var random = SeededGenerator(state: 20261122)  // fixed, so a failure replays
        var client = try daemon.raw()
        var marker = 1_000_000
        var lines = 0, reconnects = 0
        func send(_ line: [UInt8]) throws {
            marker += 1
            lines += 1
            if try !exchange(client, line, marker: marker) {
                reconnects += 1
                client = try daemon.raw()
            }
        }

        // Wrong types for every parameter of every method.
        for (method, params) in methods {
            for param in params {
                for value in Self.wrongValues.shuffled(using: &random).prefix(6) {
                    try send(Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":{"\#(param)":\#(value)}}"#.utf8))
                }
            }
            try send(Array(#"{"jsonrpc":"2.0","id":2,"method":"\#(method)","params":[1,2]}"#.utf8))
        }

        // Mutations of valid requests: flipped, inserted and deleted bytes, invalid UTF-8.
        let seeds = methods.map { #"{"jsonrpc":"2.0","id":3,"method":"\#($0.0)","params":{}}"# }
        for _ in 0..<400 {
            var bytes = Array(seeds.randomElement(using: &random)!.utf8)
            for _ in 0..<Int.random(in: 1...6, using: &random) {
                let index = Int.random(in: 0..<bytes.count, using: &random)
                switch Int.random(in: 0..<4, using: &random) {
                case 0: bytes[index] = UInt8.random(in: 0...255, using: &random)
                case 1: bytes.insert(UInt8.random(in: 0x80...0xFF, using: &random), at: index)
                case 2: if bytes.count > 1 { bytes.remove(at: index) }
                default: bytes.insert(contentsOf: Array("{\"a\":".utf8), at: index)
                }
            }
            bytes.removeAll { $0 == 0x0A || $0 == 0x0D }
            try send(bytes)
        }

        // Shapes that have broken parsers elsewhere.
        let nesting = String(repeating: "[", count: 5_000) + String(repeating: "]", count: 5_000)
        for line in [nesting, #"{"jsonrpc":"2.0","id":1,"id":2,"method":"daemon.ping"}"#,
                     #"{"jsonrpc":"2.0","id":1e999999,"method":"daemon.ping"}"#,
                     #"{"jsonrpc":"2.0","id":1,"method":"goal.get","params":{"goal":"\ud800"}}"#,
                     "[" + Array(repeating: #"{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}"#, count: 101).joined(separator: ",") + "]",
                     String(repeating: "x", count: 70_000)] {
            try send(Array(line.utf8))
        }
        try send([0xFF, 0xFE, 0x7B, 0x22, 0xC3, 0x28])

        #expect(try daemon.call("daemon.ping")["pong"] == true, "still serving after \(lines) lines")
        #expect(daemon.process.isRunning)
        #expect(reconnects == 1, "only the over-long line closes its connection (\(reconnects) reconnects)")
        #expect(try daemon.call("db.check")["ok"] == true)
        print("socket fuzz: \(lines) lines, \(reconnects) connections closed by the daemon")
    }
}
