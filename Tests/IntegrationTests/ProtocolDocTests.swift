import Foundation
import SavingsRPC
import Testing

/// docs/protocol.md is the daemon's own `rpc.discover`, rendered, and docs/openrpc.json the
/// document itself (what a client generator reads, and what Tests/schema/answers.py checks the
/// tests' answers against): neither may drift.
@Suite struct ProtocolDocTests {
    static let docs = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs")
    static let path = docs.appendingPathComponent("protocol.md").path
    static let openRPCPath = docs.appendingPathComponent("openrpc.json").path

    @Test func theOpenRPCDocumentIsCommittedAndEveryTypeItNamesExists() throws {
        let daemon = try DaemonProcess()
        let discover = try daemon.call("rpc.discover")
        let rendered = JSONSerializer.pretty(discover) + "\n"
        if ProcessInfo.processInfo.environment["SAVINGSD_UPDATE_DOCS"] == "1" {
            try rendered.write(toFile: Self.openRPCPath, atomically: true, encoding: .utf8)
        }
        let committed = (try? String(contentsOfFile: Self.openRPCPath, encoding: .utf8)) ?? ""
        #expect(committed == rendered, "docs/openrpc.json is out of date: run `make docs`")
        // Every $ref names a type of components.schemas, and every type is used.
        let types = Set(discover["components"]?["schemas"]?.objectValue?.keys.map { $0 } ?? [])
        var referenced = Set<String>()
        func walk(_ value: JSONValue) {
            switch value.unwrapped {
            case .object(let members):
                if let ref = members["$ref"]?.stringValue { referenced.insert(String(ref.dropFirst("#/components/schemas/".count))) }
                members.values.forEach(walk)
            case .array(let items): items.forEach(walk)
            default: break
            }
        }
        walk(discover)
        #expect(referenced.subtracting(types).isEmpty, "unknown types: \(referenced.subtracting(types).sorted())")
        #expect(types.subtracting(referenced).isEmpty, "types no result uses: \(types.subtracting(referenced).sorted())")
        // No method's result is left as a bare object.
        for method in discover["methods"]?.arrayValue ?? [] {
            let schema = method["result"]?["schema"]
            #expect(schema != ["type": "object"], "\(method["name"]?.stringValue ?? "?") has no typed result")
        }
    }

    @Test func theProtocolReferenceMatchesTheRegistry() throws {
        let daemon = try DaemonProcess()
        let discover = try daemon.call("rpc.discover")
        let rendered = ProtocolDocument.markdown(discover: discover)
        if ProcessInfo.processInfo.environment["SAVINGSD_UPDATE_DOCS"] == "1" {
            try rendered.write(toFile: Self.path, atomically: true, encoding: .utf8)
        }
        let committed = (try? String(contentsOfFile: Self.path, encoding: .utf8)) ?? ""
        #expect(committed == rendered, "docs/protocol.md is out of date: run `make docs`")
        // Every method the daemon serves has its section and an example.
        for method in discover["methods"]?.arrayValue ?? [] {
            let name = try #require(method["name"]?.stringValue)
            #expect(committed.contains("### `\(name)`"), "\(name) is missing")
            #expect(committed.contains(#""method":"\#(name)""#), "\(name) has no example")
        }
    }
}
