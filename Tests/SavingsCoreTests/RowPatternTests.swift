import Foundation
@testable import SavingsCore
import Testing

/// The rules' patterns: the usual syntax, case-insensitive, matched without backtracking.
@Suite struct RowPatternTests {
    func pattern(_ source: String) throws -> RowPattern { try RowPattern(source, key: "when[1].matches") }

    @Test(arguments: [
        ("^TRADE$", "trade", true), ("^TRADE$", "trades", false), ("vorgemerkt", "Umsatz vorgemerkt", true),
        ("^\"?Timestamp\"?,", "\"Timestamp\",Type", true), ("^\"?Timestamp\"?,", "ID,Timestamp,", false),
        ("^(Sell|Send|Convert|Withdrawal|Advanced Trade Sell)$", "advanced trade sell", true),
        ("^(Sell|Send|Convert|Withdrawal|Advanced Trade Sell)$", "Buy", false),
        ("^(?!Completed$)", "Completed", false), ("^(?!Completed$)", "Completed ", true), ("^(?!Completed$)", "Pending", true),
        ("^Bäckerei", "BÄCKEREI Müller", true), ("\\d{4}-\\d{2}", "am 2026-01 gebucht", true), ("\\d{4}-\\d{2}", "am 26-01", false),
        ("[a-c]+x", "zzBCAx", true), ("[^0-9]", "12345", false), ("[^0-9]", "123a45", true), ("a.c", "a\nc", false),
        ("\\bfee\\b", "network fee paid", true), ("\\bfee\\b", "feeless", false), ("colou?r", "COLOR", true),
        ("x{2,3}y", "axxy", true), ("x{2,3}y", "axy", false), ("^a{2,}$", "aaaa", true), ("(?:ab)+c", "ababc", true),
        ("(?i)paypal", "PayPal Europe", true), ("(?<kind>in|out)bound", "Outbound", true), ("a|", "zzz", true),
        ("\\.", "1.5", true), ("\\.", "15", false), ("\\s\\S", " x", true), ("fee$", "fee\n", true), ("(?=.*BTC)(?=.*EUR)", "EUR/BTC", true),
        ("{", "a{b", true), ("a{,2}", "a{,2}", true),
    ])
    func matchesAsTheCommonSyntaxDoes(source: String, text: String, expected: Bool) throws {
        #expect(try pattern(source).matches(text) == expected, "\(source) on \(text)")
    }

    @Test(arguments: ["(", "a)", "[a", "*a", "\\1", "(?<=a)b", "(?<!a)b", "a{3,1}", "a{1001}", "\\q", "(?x)a",
                      String(repeating: "(", count: 70) + String(repeating: ")", count: 70), "(a{1000}){1000}"])
    func refusesWhatItCannotMatchSafely(source: String) {
        #expect(throws: DomainError.self, "\(source)") { try pattern(source) }
    }

    /// Patterns that make a backtracking engine take seconds to minutes take a bounded number
    /// of steps: about the text's length times the pattern's size.
    @Test func catastrophicBacktrackingPatternsAreLinear() throws {
        let cases: [(String, String)] = [
            ("(a+)+$", String(repeating: "a", count: 27) + "!"), ("(.*a){25}", String(repeating: "a", count: 59) + "!"),
            ("(a|a)*b", String(repeating: "a", count: 5_000)), ("(x+x+)+y", String(repeating: "x", count: 5_000)),
            ("^(\\w+\\s?)*$", String(repeating: "word ", count: 1_000) + "!"),
        ]
        for (source, text) in cases {
            let found = try pattern(source).matchesCounting(text)
            #expect(found.steps < 2_000_000, "\(source): \(found.steps) steps")
        }
        #expect(try pattern("(.*a){25}").matches(String(repeating: "a", count: 59) + "!"))
        #expect(try !pattern("(a+)+$").matches(String(repeating: "a", count: 27) + "!"))
    }

    @Test func aMatchPastTheBudgetThrows() throws {
        let expensive = try pattern("(.*a){200}!")
        #expect(throws: RowPattern.StepLimit.self) { try expensive.matches(String(repeating: "a", count: 60_000)) }
    }

    /// A look-ahead is worked out once per position: at worst the square of the text's length,
    /// which the step budget bounds.
    @Test func lookAheadsAreMemoisedPerPosition() throws {
        let found = try pattern("(?=.*z)a").matchesCounting(String(repeating: "a", count: 500))
        #expect(!found.matched)
        #expect(found.steps < 2_000_000, "\(found.steps)")
    }

    /// Decimal holds a 128-bit significand: a sum that needs more is refused, never rounded.
    @Test func exactSumsRefuseWhatWouldRound() throws {
        let nines = String(repeating: "9", count: 38)
        let big = try SmallestUnit.amount(nines, decimals: 8)
        #expect(SmallestUnit.exactSum(big, big) == Decimal(string: "1" + String(repeating: "9", count: 30) + "." + String(repeating: "9", count: 7) + "8"))
        #expect(SmallestUnit.exactSum(try #require(SmallestUnit.exactSum(big, big)), try #require(SmallestUnit.exactSum(big, big))) == nil)
        #expect(SmallestUnit.exactSum(big, Decimal(string: "0.000000001")!) == nil)
        #expect(throws: DomainError.self) { try ChainTransaction.net(credits: [nines, nines, nines, nines], debits: [], decimals: 8) }
        #expect(try ChainTransaction.net(credits: ["150000000"], debits: ["50000000"], decimals: 8) == 1)
    }
}
