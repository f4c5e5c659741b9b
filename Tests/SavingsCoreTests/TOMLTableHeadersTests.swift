import Foundation
@testable import SavingsCore
import Testing

/// A table header that does not begin with a key aborted the process inside toml++ (an assert in
/// its parse_key, compiled into every build); such rules files are refused before it sees them.
@Suite struct TOMLTableHeadersTests {
    /// Found by `savings-fuzz rules` (the first as `[\u{01}\u{01}hen]]` in a rules file).
    @Test func headersNotBeginningWithAKeyAreRefusedWithTheirLine() throws {
        let texts: [(String, Int)] = [
            ("[\u{01}]", 1), ("[!]", 1), ("[[#]]", 1), ("[ .]", 1), ("[\n]", 1), ("[[\t\u{7F}]]", 1), ("[é]", 1),
            ("separator = \";\"\n[columns]\ndate = 1\n\t[ =]\n", 4), ("# [!]\nx = \"a\"\n  [[{]]\n", 3),
        ]
        for (text, line) in texts {
            let error = try #require(throws: DomainError.self, "\(text.debugDescription)") { try ImportRules(toml: text, name: "r.toml") }
            #expect(error.kind == .invalidField)
            #expect(error.message.contains("r.toml, line \(line): a table header must begin with a key"), "\(error.message)")
        }
    }

    /// Brackets in strings, comments, arrays and inline tables are not headers; quoted and bare
    /// keys, blanks inside the brackets and an empty header (toml++'s own error) go through.
    @Test func otherBracketsAndValidHeadersAreLeftToTheParser() {
        let valid = """
        # [!] a comment
        skip = "[!]"
        note = '[#]'
        long = \"\"\"
        [!] not a header
        \"\"\"
        rows = [
          [ { a = 1 } ],
          ["x"],
        ]
        [ "quoted key" ]
        [[ when ]]
        [-a.b_c]
        [0]
        ['literal']
        """
        #expect(TOMLTableHeaders.firstUnreadableLine(in: valid) == nil)
        for text in ["[]", "[ ]", "[[]]", "x = [!]", "[a] [!]"] {
            #expect(TOMLTableHeaders.firstUnreadableLine(in: text) == nil, "\(text)")
        }
        for name in ImportPresets.names {
            #expect(TOMLTableHeaders.firstUnreadableLine(in: ImportPresets.texts[name]!) == nil, "\(name)")
        }
    }
}
