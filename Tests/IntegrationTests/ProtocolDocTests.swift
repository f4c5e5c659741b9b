import Foundation
import SavingsRPC
import Testing

/// docs/protocol.md is the daemon's own `rpc.discover`, rendered: it must not drift.
@Suite struct ProtocolDocTests {
    static let path = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .deletingLastPathComponent().appendingPathComponent("docs/protocol.md").path

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
