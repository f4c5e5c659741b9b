import Foundation
@testable import SavingsCore
import Testing

/// Texts on which toml++ asserted (aborting the process, in every build) instead of reporting an
/// error are refused before it sees them. Each was found by `savings-fuzz rules`.
@Suite struct TOMLParserTrapsTests {
    static func refusal(_ text: String) throws -> String {
        let error = try #require(throws: DomainError.self, "\(text.debugDescription)") { try ImportRules(toml: text, name: "r.toml") }
        #expect(error.kind == .invalidField)
        return error.message
    }

    /// toml++'s parse_key assumed a key after a header's brackets (first found as `[\u{01}\u{01}hen]]`).
    @Test func headersNotBeginningWithAKeyAreRefusedWithTheirLine() throws {
        let texts: [(String, Int)] = [
            ("[\u{01}]", 1), ("[!]", 1), ("[[#]]", 1), ("[ .]", 1), ("[\n]", 1), ("[[\t\u{7F}]]", 1), ("[é]", 1),
            ("separator = \";\"\n[columns]\ndate = 1\n\t[ =]\n", 4), ("# [!]\nx = \"a\"\n  [[{]]\n", 3),
            // After a byte order mark, which toml++ skips (minimized by libFuzzer from a later run).
            ("\u{FEFF}[{", 1),
        ]
        for (text, line) in texts {
            let message = try Self.refusal(text)
            #expect(message.contains("r.toml, line \(line): a table header must begin with a key"), "\(message)")
        }
    }

    /// toml++'s parse_time assumed a digit after a date-time's T (first found in
    /// `dates = [1979-05-27T\u{13}07:32:00Z, …, 19,79-05-2`T00:32:00.999999-07:00]`).
    @Test func datesWithoutTheirTimeAfterTAreRefused() throws {
        for text in ["a = 1979-05-27t:", "a = 1979-05-27T:00", "x = 1\n\na = [1, 2024-02-29T-1:00]"] {
            let message = try Self.refusal(text)
            #expect(message.contains("a date's time must follow its T"), "\(message)")
            #expect(message.contains("line \(text.split(separator: "\n", omittingEmptySubsequences: false).count)"), "\(message)")
        }
    }

    /// toml++'s value scan assumed more after a date, a space and a digit (minimized by libFuzzer
    /// from a mutated rules file to `p=1979-05-2= 1`).
    @Test func datesFollowedByASpaceAndOneDigitAreRefused() throws {
        for text in ["p=1979-05-2= 1\n", "a = 1979-05-27 1\n", "a = [1979-05-27 1]", "a = 1_979-05-27 7,"] {
            let message = try Self.refusal(text)
            #expect(message.contains("r.toml, line 1: a date's time must have two-digit hours"), "\(message)")
        }
        for text in ["a = 1979-05-27 07:32:00\n", "a = 1979-05-27 12\n", "a = [1979-05-27, 1]", "a = 1979-05-27 # 1"] {
            #expect(TOMLParserTraps.first(in: text) == nil, "\(text)")
        }
    }

    /// toml++'s parse_array handed a `}` to parse_value, which assumed a value (first found in
    /// `a = { b = { c = { d = [}` at the top of a mutated rules file).
    @Test func closingBracesWhereAnArrayExpectsAValueAreRefused() throws {
        for (text, line) in [("d = [}", 1), ("d = [1,}", 1), ("d = [\n}]", 2), ("d = [[}]]", 1), ("d = {a = [}]}", 1), ("x = 1\nd = [ # c\n }", 3)] {
            let message = try Self.refusal(text)
            #expect(message.contains("r.toml, line \(line): an array holds a '}' where a value belongs"), "\(message)")
        }
        for text in ["d = [1 }", "d = { a = [1, 2] }", "d = [ {}, { a = [] } ]", "d = [\n  1,\n  # }\n]"] {
            #expect(TOMLParserTraps.first(in: text) == nil, "\(text)")
        }
    }

    /// Brackets and dates in strings, comments, arrays and inline tables, quoted and bare keys,
    /// blanks inside the brackets, an empty header (toml++'s own error) and every form of date
    /// and time go through.
    @Test func validTextIsLeftToTheParser() throws {
        let valid = """
        # [!] and 1979-05-27T: in a comment
        skip = "[!] 1979-05-27t:"
        note = '[#]'
        long = \"\"\"
        [!] not a header
        \"\"\"
        rows = [
          [ { a = 1 } ],
          ["x"],
        ]
        times = [1979-05-27T07:32:00Z, 1979-05-27t07:32:00, 1979-05-27 07:32:00, 1979-05-27, 07:32:00, 1979-05-27T00:32:00.999-07:00]
        x1979-05-27t- = 1
        [ "quoted key" ]
        [[ when ]]
        [-a.b_c]
        [0]
        ['literal']
        """
        #expect(TOMLParserTraps.first(in: valid) == nil)
        for text in ["[]", "[ ]", "[[]]", "x = [!]", "[a] [!]"] {
            #expect(TOMLParserTraps.first(in: text) == nil, "\(text)")
        }
        for name in ImportPresets.names {
            #expect(TOMLParserTraps.first(in: ImportPresets.texts[name]!) == nil, "\(name)")
        }
    }
}
