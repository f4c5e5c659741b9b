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

    /// Most instructions a pattern compiles to (a counted repetition copies its body).
    public static let maxInstructions = 10_000
    /// Most steps one match may take: about 10 ms; far beyond what a real field and pattern need
    /// (a 200-character note against a 100-instruction pattern takes 20,000).
    public static let maxSteps = 2_000_000

    /// A match that would take more than `maxSteps` steps.
    public struct StepLimit: Error, Sendable {}

    public init(_ source: String, key: String) throws {
        func refuse(_ reason: String) -> DomainError {
            DomainError.invalidField("rules", "\(key): '\(source)' is not a regular expression savingsd can use (\(reason))")
        }
        do {
            var parser = PatternParser(Array(source.unicodeScalars))
            let tree = try parser.parseWhole()
            program = try Program(tree)
        } catch let failure as PatternParser.Failure {
            throw refuse(failure.reason)
        }
        self.source = source
    }

    /// Whether the pattern matches anywhere in `text`; throws `StepLimit` past the budget.
    public func matches(_ text: String) throws -> Bool {
        try matchesCounting(text).matched
    }

    /// `matches`, with the steps it took.
    public func matchesCounting(_ text: String) throws -> (matched: Bool, steps: Int) {
        var run = Simulation(program: program, text: Array(text.unicodeScalars))
        let matched = try run.search()
        return (matched, run.steps)
    }
}

// MARK: - Syntax

private indirect enum Node {
    case empty
    case scalar(Unicode.Scalar)
    case any
    case set(CharacterSet)
    case concat([Node])
    case alternation([Node])
    case repeated(Node, min: Int, max: Int?)
    case lineStart
    case lineEnd
    case wordBoundary(Bool)
    case lookAhead(Node, negative: Bool)
}

/// A class: ranges and named sets, possibly negated.
private struct CharacterSet {
    var ranges: [ClosedRange<UInt32>] = []
    var named: [(Named, Bool)] = []
    var negated = false

    enum Named { case digit, word, space }

    static func named(_ kind: Named, negated: Bool) -> CharacterSet {
        var set = CharacterSet()
        set.named = [(kind, negated)]
        return set
    }

    func contains(_ scalar: Unicode.Scalar) -> Bool {
        func inside(_ value: UInt32) -> Bool {
            ranges.contains { $0.contains(value) } || named.contains { kind, negated in Self.isNamed(kind, value) != negated }
        }
        let found = inside(scalar.value) || Folding.variants(scalar).contains { inside($0.value) }
        return found != negated
    }

    static func isNamed(_ kind: Named, _ value: UInt32) -> Bool {
        guard let scalar = Unicode.Scalar(value) else { return false }
        switch kind {
        case .digit: return scalar.properties.numericType == .decimal
        case .word: return scalar == "_" || scalar.properties.isAlphabetic || scalar.properties.numericType == .decimal
        case .space: return scalar.properties.isWhitespace
        }
    }
}

/// Case folding of one scalar (simple, one scalar to one scalar).
private enum Folding {
    static func fold(_ scalar: Unicode.Scalar) -> Unicode.Scalar {
        guard scalar.value >= 0x41 else { return scalar }
        if scalar.value < 0x80 {
            return (0x41...0x5A).contains(scalar.value) ? Unicode.Scalar(scalar.value + 0x20)! : scalar
        }
        let lower = scalar.properties.lowercaseMapping.unicodeScalars
        return lower.count == 1 ? lower.first! : scalar
    }

    static func variants(_ scalar: Unicode.Scalar) -> [Unicode.Scalar] {
        var found: [Unicode.Scalar] = []
        for mapped in [scalar.properties.lowercaseMapping, scalar.properties.uppercaseMapping] {
            let scalars = mapped.unicodeScalars
            if scalars.count == 1, let only = scalars.first, only != scalar { found.append(only) }
        }
        return found
    }
}

private struct PatternParser {
    struct Failure: Error { var reason: String }

    let scalars: [Unicode.Scalar]
    var index = 0
    var depth = 0
    static let maxDepth = 64

    init(_ scalars: [Unicode.Scalar]) { self.scalars = scalars }

    var current: Unicode.Scalar? { index < scalars.count ? scalars[index] : nil }

    mutating func parseWhole() throws -> Node {
        let node = try alternation()
        if index < scalars.count { throw Failure(reason: "unbalanced ')'") }
        return node
    }

    mutating func alternation() throws -> Node {
        var branches = [try sequence()]
        while current == "|" {
            index += 1
            branches.append(try sequence())
        }
        return branches.count == 1 ? branches[0] : .alternation(branches)
    }

    mutating func sequence() throws -> Node {
        var items: [Node] = []
        while let scalar = current, scalar != "|", scalar != ")" {
            var atom = try self.atom()
            while let quantifier = try quantifier() {
                if case .lookAhead = atom { throw Failure(reason: "a look-ahead cannot be repeated") }
                atom = .repeated(atom, min: quantifier.min, max: quantifier.max)
            }
            items.append(atom)
        }
        return items.count == 1 ? items[0] : .concat(items)
    }

    mutating func quantifier() throws -> (min: Int, max: Int?)? {
        guard let scalar = current else { return nil }
        var result: (Int, Int?)
        switch scalar {
        case "*": result = (0, nil); index += 1
        case "+": result = (1, nil); index += 1
        case "?": result = (0, 1); index += 1
        case "{":
            // `{` not followed by a count is a literal brace, as in ICU.
            guard let counted = counted() else { return nil }
            result = counted
        default: return nil
        }
        // Lazy (`*?`) and possessive (`*+`) forms accept the same texts for a yes/no match.
        if current == "?" || current == "+" { index += 1 }
        if let max = result.1, max < result.0 { throw Failure(reason: "{\(result.0),\(max)} counts down") }
        if result.0 > 1000 || (result.1 ?? 0) > 1000 { throw Failure(reason: "a count above 1000") }
        return result
    }

    /// `{n}`, `{n,}`, `{n,m}` at `index`, or nil (and `index` unmoved) when it is not one.
    mutating func counted() -> (Int, Int?)? {
        var probe = index + 1
        func number() -> Int? {
            var value = 0, digits = 0
            while probe < scalars.count, let digit = Int(String(scalars[probe])), scalars[probe].isASCII, digits < 6 {
                value = value * 10 + digit
                digits += 1
                probe += 1
            }
            return digits > 0 ? value : nil
        }
        guard let low = number() else { return nil }
        var high: Int? = low
        if probe < scalars.count, scalars[probe] == "," {
            probe += 1
            high = number()
        }
        guard probe < scalars.count, scalars[probe] == "}" else { return nil }
        index = probe + 1
        return (low, high)
    }

    mutating func atom() throws -> Node {
        let scalar = scalars[index]
        index += 1
        switch scalar {
        case ".": return .any
        case "^": return .lineStart
        case "$": return .lineEnd
        case "[": return .set(try characterClass())
        case "\\": return try escape(inClass: false)
        case "*", "+", "?": throw Failure(reason: "'\(scalar)' repeats nothing")
        case "(":
            depth += 1
            defer { depth -= 1 }
            guard depth <= Self.maxDepth else { throw Failure(reason: "groups nested deeper than \(Self.maxDepth)") }
            var look: Bool?
            if current == "?" {
                index += 1
                switch current {
                case ":": index += 1
                case "=": look = false; index += 1
                case "!": look = true; index += 1
                case "<" where index + 1 < scalars.count && (scalars[index + 1] == "=" || scalars[index + 1] == "!"):
                    throw Failure(reason: "look-behind is not supported")
                case "<", "P":
                    // A named group: the name is skipped.
                    while let next = current, next != ">" { index += 1 }
                    guard current == ">" else { throw Failure(reason: "a group name without '>'") }
                    index += 1
                case "i":
                    // Matching is case-insensitive already: `(?i)` and `(?i:` change nothing.
                    index += 1
                    if current == ")" {
                        index += 1
                        return .empty
                    }
                    guard current == ":" else { throw Failure(reason: "flags other than (?i) are not supported") }
                    index += 1
                default:
                    throw Failure(reason: "'(?' of a kind that is not supported")
                }
            }
            let inner = try alternation()
            guard current == ")" else { throw Failure(reason: "'(' without ')'") }
            index += 1
            if let negative = look { return .lookAhead(inner, negative: negative) }
            return inner
        case ")": throw Failure(reason: "unbalanced ')'")
        default: return .scalar(Folding.fold(scalar))
        }
    }

    mutating func escape(inClass: Bool) throws -> Node {
        guard let scalar = current else { throw Failure(reason: "'\\' at the end") }
        index += 1
        switch scalar {
        case "d": return .set(.named(.digit, negated: false))
        case "D": return .set(.named(.digit, negated: true))
        case "w": return .set(.named(.word, negated: false))
        case "W": return .set(.named(.word, negated: true))
        case "s": return .set(.named(.space, negated: false))
        case "S": return .set(.named(.space, negated: true))
        case "b" where !inClass: return .wordBoundary(true)
        case "B" where !inClass: return .wordBoundary(false)
        case "t": return .scalar("\t")
        case "n": return .scalar("\n")
        case "r": return .scalar("\r")
        case "f": return .scalar("\u{0C}")
        case "x", "u":
            let count = scalar == "x" ? 2 : 4
            guard index + count <= scalars.count, let value = UInt32(String(String.UnicodeScalarView(scalars[index..<index + count])), radix: 16),
                  let found = Unicode.Scalar(value) else { throw Failure(reason: "'\\\(scalar)' needs \(count) hex digits") }
            index += count
            return .scalar(Folding.fold(found))
        case "1"..."9": throw Failure(reason: "back-references are not supported")
        default:
            guard !scalar.properties.isAlphabetic, !("0"..."9").contains(scalar) else {
                throw Failure(reason: "'\\\(scalar)' is not an escape savingsd knows")
            }
            return .scalar(Folding.fold(scalar))
        }
    }

    mutating func characterClass() throws -> CharacterSet {
        var set = CharacterSet()
        if current == "^" {
            set.negated = true
            index += 1
        }
        var first = true
        while true {
            guard let scalar = current else { throw Failure(reason: "'[' without ']'") }
            if scalar == "]", !first {
                index += 1
                return set
            }
            first = false
            index += 1
            var low: Unicode.Scalar
            if scalar == "\\" {
                switch try escape(inClass: true) {
                case .scalar(let literal): low = literal
                case .set(let named): set.named += named.named; continue
                default: throw Failure(reason: "an escape that is not a character inside [ ]")
                }
            } else if scalar == "[" {
                throw Failure(reason: "nested classes and [: :] are not supported")
            } else {
                low = scalar
            }
            if current == "-", index + 1 < scalars.count, scalars[index + 1] != "]" {
                index += 1
                var high = scalars[index]
                index += 1
                if high == "\\" {
                    guard case .scalar(let literal) = try escape(inClass: true) else { throw Failure(reason: "a range ends in a class") }
                    high = literal
                }
                guard low.value <= high.value else { throw Failure(reason: "the range \(low)-\(high) is backwards") }
                set.ranges.append(low.value...high.value)
            } else {
                set.ranges.append(low.value...low.value)
            }
        }
    }
}

// MARK: - Automaton

private enum Instruction {
    case scalar(Unicode.Scalar)
    case any
    case set(Int)
    case split(Int, Int)
    case jump(Int)
    case lineStart
    case lineEnd
    case wordBoundary(Bool)
    /// Continue only where the look-ahead program `Int` matches (or, negative, does not).
    case lookAhead(Int, negative: Bool)
    case match
}

private final class Program: Sendable {
    /// The main program is `programs[0]`; look-aheads follow.
    let programs: [[Instruction]]
    let sets: [CharacterSet]

    init(_ tree: Node) throws {
        var compiler = Compiler()
        _ = try compiler.program(tree)
        programs = compiler.programs
        sets = compiler.sets
    }
}

extension CharacterSet: @unchecked Sendable {}
extension Instruction: @unchecked Sendable {}

private struct Compiler {
    var programs: [[Instruction]] = []
    var sets: [CharacterSet] = []
    var total = 0

    /// Compiles `tree` into a new program of its own; returns its number.
    mutating func program(_ tree: Node) throws -> Int {
        let number = programs.count
        programs.append([])
        var code: [Instruction] = []
        try emit(tree, into: &code)
        code.append(.match)
        programs[number] = code
        return number
    }

    mutating func emit(_ node: Node, into code: inout [Instruction]) throws {
        total += 1
        guard code.count + total < RowPattern.maxInstructions * 2, code.count < RowPattern.maxInstructions else {
            throw PatternParser.Failure(reason: "it would need more than \(RowPattern.maxInstructions) steps of automaton; repeat less")
        }
        switch node {
        case .empty: break
        case .scalar(let scalar): code.append(.scalar(scalar))
        case .any: code.append(.any)
        case .set(let set):
            sets.append(set)
            code.append(.set(sets.count - 1))
        case .lineStart: code.append(.lineStart)
        case .lineEnd: code.append(.lineEnd)
        case .wordBoundary(let yes): code.append(.wordBoundary(yes))
        case .concat(let items):
            for item in items { try emit(item, into: &code) }
        case .alternation(let branches):
            // split L1, next; L1: branch; jump end; next: split L2, … ; last branch.
            var jumps: [Int] = []
            for (number, branch) in branches.enumerated() {
                if number < branches.count - 1 {
                    let split = code.count
                    code.append(.split(split + 1, 0))
                    try emit(branch, into: &code)
                    jumps.append(code.count)
                    code.append(.jump(0))
                    code[split] = .split(split + 1, code.count)
                } else {
                    try emit(branch, into: &code)
                }
            }
            for jump in jumps { code[jump] = .jump(code.count) }
        case .repeated(let body, let min, let max):
            for _ in 0..<min { try emit(body, into: &code) }
            if let max {
                // Each optional copy: split into it or past every remaining one.
                var splits: [Int] = []
                for _ in min..<max {
                    splits.append(code.count)
                    code.append(.split(code.count + 1, 0))
                    try emit(body, into: &code)
                }
                for split in splits { code[split] = .split(split + 1, code.count) }
            } else {
                // loop: split body, out; body; jump loop.
                let loop = code.count
                code.append(.split(loop + 1, 0))
                try emit(body, into: &code)
                code.append(.jump(loop))
                code[loop] = .split(loop + 1, code.count)
            }
        case .lookAhead(let inner, let negative):
            let number = try program(inner)
            code.append(.lookAhead(number, negative: negative))
        }
    }
}

/// One run of the automaton over a text: the set of instructions alive at each position,
/// advanced together.
private struct Simulation {
    let program: Program
    let text: [Unicode.Scalar]
    var steps = 0
    /// Look-ahead results by program and position, each worked out once.
    var looks: [Int: [Int: Bool]] = [:]

    init(program: Program, text: [Unicode.Scalar]) {
        self.program = program
        self.text = text
    }

    mutating func search() throws -> Bool {
        try run(0, from: 0, anchored: false)
    }

    /// Whether program `number` matches starting at `from` (anchored), or anywhere after it.
    mutating func run(_ number: Int, from start: Int, anchored: Bool) throws -> Bool {
        let code = program.programs[number]
        var current = SparseSet(capacity: code.count)
        var next = SparseSet(capacity: code.count)
        // One stack for every walk of this run's instructions (a look-ahead's run has its own).
        var stack: [Int] = []
        stack.reserveCapacity(code.count)
        var position = start
        if try add(0, code: code, at: position, to: &current, stack: &stack) { return true }
        while position < text.count {
            let scalar = Folding.fold(text[position])
            let original = text[position]
            next.clear()
            for slot in 0..<current.count {
                let pc = current[slot]
                steps += 1
                switch code[pc] {
                case .scalar(let wanted):
                    if wanted == scalar, try add(pc + 1, code: code, at: position + 1, to: &next, stack: &stack) { return true }
                case .any:
                    if original != "\n", original != "\r", try add(pc + 1, code: code, at: position + 1, to: &next, stack: &stack) { return true }
                case .set(let index):
                    if program.sets[index].contains(original), try add(pc + 1, code: code, at: position + 1, to: &next, stack: &stack) { return true }
                default:
                    break
                }
            }
            guard steps <= RowPattern.maxSteps else { throw RowPattern.StepLimit() }
            position += 1
            swap(&current, &next)
            if !anchored, try add(0, code: code, at: position, to: &current, stack: &stack) { return true }
            if anchored, current.members.isEmpty { return false }
            if !anchored, current.members.isEmpty, position >= text.count { break }
        }
        return false
    }

    /// Adds `pc` and what it leads to without reading a character; true when that reaches `match`.
    mutating func add(_ pc: Int, code: [Instruction], at position: Int, to set: inout SparseSet, stack: inout [Int]) throws -> Bool {
        stack.removeAll(keepingCapacity: true)
        stack.append(pc)
        while let pc = stack.popLast() {
            guard set.insert(pc) else { continue }
            steps += 1
            switch code[pc] {
            case .match: return true
            case .jump(let target): stack.append(target)
            case .split(let first, let second):
                stack.append(second)
                stack.append(first)
            case .lineStart:
                if position == 0 { stack.append(pc + 1) }
            case .lineEnd:
                if position == text.count || (position == text.count - 1 && text[position] == "\n") { stack.append(pc + 1) }
            case .wordBoundary(let wanted):
                func word(_ index: Int) -> Bool { index >= 0 && index < text.count && CharacterSet.isNamed(.word, text[index].value) }
                if (word(position - 1) != word(position)) == wanted { stack.append(pc + 1) }
            case .lookAhead(let number, let negative):
                let found: Bool
                if let known = looks[number]?[position] {
                    found = known
                } else {
                    found = try run(number, from: position, anchored: true)
                    looks[number, default: [:]][position] = found
                }
                if found != negative { stack.append(pc + 1) }
            case .scalar, .any, .set:
                break
            }
        }
        guard steps <= RowPattern.maxSteps else { throw RowPattern.StepLimit() }
        return false
    }
}

/// Instructions alive at a position, each once, in the order added, cleared in constant time.
private struct SparseSet {
    private var dense: [Int]
    private var sparse: [Int]
    private(set) var count = 0

    init(capacity: Int) {
        dense = Array(repeating: 0, count: capacity)
        sparse = Array(repeating: 0, count: capacity)
    }

    var members: ArraySlice<Int> { dense[..<count] }

    subscript(_ index: Int) -> Int { dense[index] }

    mutating func insert(_ value: Int) -> Bool {
        let slot = sparse[value]
        if slot < count, dense[slot] == value { return false }
        sparse[value] = count
        dense[count] = value
        count += 1
        return true
    }

    mutating func clear() { count = 0 }
}
