import Foundation
@testable import SavingsCore
import Testing

/// Rules files deep enough to overflow toml++'s recursive parser are refused before it sees them.
@Suite struct TOMLNestingTests {
    static let deep = 31_000

    @Test func deepHeadersDottedKeysAndArraysAreRefusedWithTheirLine() throws {
        let header = "separator = \",\"\n[" + Array(repeating: "a", count: Self.deep).joined(separator: ".") + "]\n"
        let dotted = "# a comment\n" + Array(repeating: "a", count: Self.deep).joined(separator: ".") + " = 1\n"
        let arrays = "x = " + String(repeating: "[", count: Self.deep) + String(repeating: "]", count: Self.deep) + "\n"
        let inline = "x = " + String(repeating: "{a = ", count: 10_000) + "1" + String(repeating: "}", count: 10_000) + "\n"
        for (text, line) in [(header, 2), (dotted, 2), (arrays, 1), (inline, 1)] {
            #expect(text.utf8.count <= ImportRules.maxTextBytes)
            let error = try #require(throws: DomainError.self) { try ImportRules(toml: text, name: "r.toml") }
            #expect(error.kind == .invalidField)
            #expect(error.message.contains("r.toml, line \(line): nested deeper than 16 levels"), "\(error.message)")
        }
    }

    @Test func stringsCommentsAndFloatsDoNotCount() {
        let dots = String(repeating: ".", count: 500)
        let text = """
        # \(dots)
        skip = "\(dots)"
        note = '\(dots)'
        long = \"\"\"
        \(dots) "quoted" \(dots)
        \"\"\"
        literal = '''\(dots)'''
        floats = [1.5, 2.5, 3.5, 4.5, 5.5, 6.5, 7.5, 8.5, 9.5, 10.5, 11.5, 12.5, 13.5, 14.5, 15.5, 16.5, 17.5, 18.5]
        escaped = "a\\"[[[[[[[[[[[[[[[[[[[[[[[[[["
        [[when]]
        a.b.c = { d.e = [[1.5]] }
        """
        #expect(TOMLNesting.firstLine(deeperThan: TOMLNesting.maxDepth, in: text) == nil)
        #expect(TOMLNesting.firstLine(deeperThan: 3, in: "[[when]]\na.b.c.d.e = 1\n") == 2)
    }

    /// Every shipped preset stays well inside the bound.
    @Test func presetsAreShallow() {
        for name in ImportPresets.names {
            #expect(TOMLNesting.firstLine(deeperThan: 4, in: ImportPresets.texts[name]!) == nil, "\(name)")
        }
    }
}

/// A rules file is read by savingsd's own TOML reader before toml++ sees it: every text on which
/// toml++ aborted the process (found by `savings-fuzz rules`) is refused there, with its line,
/// whatever other check is in front of it; the presets pass.
@Suite struct RulesReaderTests {
    @Test(arguments: ["[!]\n", "x = 1\n[\u{1}]\n", "\u{FEFF}[{\n", "a = 1979-05-27t:\n", "d = [}\n", "d = [1,}\n", "p=1979-05-2= 1\n"])
    func textsThatAbortedTomlPlusPlusAreRefused(text: String) {
        #expect(throws: TOMLReader.Failure.self, "\(text.debugDescription)") { try TOMLReader.read(text, arraysOfTables: true) }
    }

    @Test func arraysOfTablesAreNumberedAndPresetsPass() throws {
        let entries = try TOMLReader.read("skip = 1\n[[when]]\ncolumn = \"a\"\n[[when]]\ncolumn = 2\n[assets]\n\"XXBT.F\" = \"BTC\"\n", arraysOfTables: true)
        #expect(entries.map(\.key) == ["skip", "when[1].column", "when[2].column", "assets.XXBT.F"])
        #expect(throws: TOMLReader.Failure.self) { try TOMLReader.read("[[when]]\n", arraysOfTables: false) }
        #expect(throws: TOMLReader.Failure.self) { try TOMLReader.read("[when]\n[[when]]\n", arraysOfTables: true) }
        for name in ImportPresets.names {
            #expect(throws: Never.self, "\(name)") { try TOMLReader.read(ImportPresets.texts[name]!, arraysOfTables: true) }
        }
    }
}
