import Foundation
import SavingsCore
import Testing

/// The presets the daemon carries are config/import/*.toml, word for word.
@Suite struct ImportPresetTests {
    static let root = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent().deletingLastPathComponent()
    static let generated = root.appendingPathComponent("Sources/SavingsCore/Import/ImportPresets.swift")

    static func source() throws -> String {
        let directory = root.appendingPathComponent("config/import")
        let files = try FileManager.default.contentsOfDirectory(atPath: directory.path).filter { $0.hasSuffix(".toml") }.sorted()
        var text = """
            // Generated from config/import/*.toml by ImportPresetTests (SAVINGSD_UPDATE_DOCS=1 regenerates it).
            // The shipped presets are those files; this copy is what the daemon reads.

            public enum ImportPresets {
                /// Each preset's rules file, by name.
                public static let texts: [String: String] = [

            """
        for file in files {
            let body = try String(contentsOf: directory.appendingPathComponent(file), encoding: .utf8)
            text += "        \"\(file.dropLast(5))\": #\"\"\"\n\(body)\"\"\"#,\n"
        }
        return text + "    ]\n}\n"
    }

    @Test func embeddedPresetsMatchConfigImport() throws {
        let wanted = try Self.source()
        if ProcessInfo.processInfo.environment["SAVINGSD_UPDATE_DOCS"] == "1" {
            try wanted.write(to: Self.generated, atomically: true, encoding: .utf8)
        }
        let current = try String(contentsOf: Self.generated, encoding: .utf8)
        #expect(current == wanted, "config/import changed: regenerate with make docs")
    }

    @Test func everyPresetReads() throws {
        #expect(ImportPresets.names == ["binance-deposits", "binance-withdrawals", "coinbase", "dkb", "generic-bank-de", "ing", "kraken-ledgers"])
        for name in ImportPresets.names {
            let rules = try #require(try ImportPresets.rules(name))
            #expect(rules.name == name)
        }
    }
}
