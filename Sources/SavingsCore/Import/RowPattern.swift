/// A rules file's regular expression (`[[when]] matches`, `skip`; case-insensitive, as in
/// hledger), matched without backtracking:
/// the pattern becomes a small automaton that is run over the text once, every possible path in
/// step, so the time is bounded by the text's length times the pattern's size (a Thompson
/// simulation, as RE2 and Go's regexp do). `(a+)+$` or `(.*a){25}`, which take ICU seconds to
/// minutes on a short field, cost microseconds here.
///
/// The syntax is the common one, case-insensitive: literals and escapes (`\d \w \s` and their
/// negations, `\b \B`, `\t \n \r`, `\xHH`, `\uHHHH`, an escaped punctuation mark), `.` (not a
/// line break), classes `[a-z\d]` and `[^…]`, groups `(…)`, `(?:…)`, `(?<name>…)`, alternation,
/// `* + ?` and `{n}`, `{n,}`, `{n,m}` (lazy and possessive forms match the same texts), `^` and
/// `$`, and look-ahead `(?=…)` / `(?!…)`. Back-references and look-behind are refused: no
/// automaton holds them.
///
/// A look-ahead runs a second automaton from the position it is asked at, at most once per
/// position, so even it stays bounded; every match also carries a budget of steps, and a text
/// that would exceed it is refused (`StepLimit`) rather than matched slowly.
public struct RowPattern: Sendable {
    public let source: String
    private let program: Program
    /// How many capturing groups the pattern has, and the numbers of the named ones.
    public let groupCount: Int
    public let groupNames: [String: Int]

    /// Most instructions a pattern compiles to (a counted repetition copies its body).
    public static let maxInstructions = 10_000
    /// Most steps one match may take: about 10 ms; far beyond what a real field and pattern need
    /// (a 200-character note against a 100-instruction pattern takes 20,000).
    public static let maxSteps = 2_000_000

    /// A match that would take more than `maxSteps` steps.
    public struct StepLimit: Error, Sendable {}

    public init(_ source: String, key: String) throws {
        func refuse(_ reason: String) -> DomainError {
            DomainError.invalidField("rules", "\(key): '\(Self.shown(source))' is not a regular expression savingsd can use (\(reason))")
        }
        do {
            var parser = PatternParser(Array(source.unicodeScalars))
            let tree = try parser.parseWhole()
            program = try Program(tree)
            groupCount = parser.groups
            groupNames = parser.names
        } catch let failure as PatternParser.Failure {
            throw refuse(failure.reason)
        }
        self.source = source
    }

    /// Whether the pattern matches anywhere in `text`; throws `StepLimit` past the budget.
    public func matches(_ text: String) throws -> Bool {
        try matchesCounting(text).matched
    }

    /// The pattern as messages quote it: a long one cut short.
    public var shown: String { Self.shown(source) }

    static func shown(_ source: String) -> String {
        source.count <= 120 ? source : source.prefix(120) + "…"
    }

    /// The text of each group of the leftmost match (by number from 1, and by name; a group
    /// that took no part is absent), and the steps it took; nil groups when it does not match.
    /// Throws `StepLimit` past the budget.
    public func captures(_ text: String) throws -> (groups: [String: String]?, steps: Int) {
        let scalars = Array(text.unicodeScalars)
        var run = Simulation(program: program, text: scalars)
        guard let slots = try run.captures(slots: 2 * (groupCount + 1)) else { return (nil, run.steps) }
        var groups: [String: String] = [:]
        for number in stride(from: 1, through: groupCount, by: 1) {
            let start = slots[2 * number], end = slots[2 * number + 1]
            guard start >= 0, end >= start else { continue }
            groups[String(number)] = String(String.UnicodeScalarView(scalars[start..<end]))
        }
        for (name, number) in groupNames { groups[name] = groups[String(number)] }
        return (groups, run.steps)
    }

    /// `matches`, with the steps it took.
    public func matchesCounting(_ text: String) throws -> (matched: Bool, steps: Int) {
        var run = Simulation(program: program, text: Array(text.unicodeScalars))
        let matched = try run.search()
        return (matched, run.steps)
    }
}
