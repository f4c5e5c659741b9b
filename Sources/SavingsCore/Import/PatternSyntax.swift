/// The syntax of a rules pattern (`RowPattern`): its tree, character classes, case folding and
/// the parser that refuses what no automaton can hold.
indirect enum Node {
    case empty
    case scalar(Unicode.Scalar)
    case any
    case set(PatternClass)
    case concat([Node])
    case alternation([Node])
    /// `lazy` prefers fewer repeats: the same texts match, but groups capture differently.
    case repeated(Node, min: Int, max: Int?, lazy: Bool)
    case lineStart
    case lineEnd
    case wordBoundary(Bool)
    case lookAhead(Node, negative: Bool)
    /// A capturing group, numbered from 1 in the order its '(' opens.
    case capture(Node, Int)
}

/// A class: ranges and named sets, possibly negated.
struct PatternClass {
    var ranges: [ClosedRange<UInt32>] = []
    var named: [(Named, Bool)] = []
    var negated = false

    enum Named { case digit, word, space }

    static func named(_ kind: Named, negated: Bool) -> PatternClass {
        var set = PatternClass()
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
enum Folding {
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

struct PatternParser {
    struct Failure: Error { var reason: String }

    let scalars: [Unicode.Scalar]
    var index = 0
    var depth = 0
    static let maxDepth = 64
    /// Capturing groups so far, and the names of the named ones.
    var groups = 0
    var names: [String: Int] = [:]
    static let maxGroups = 32

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
                atom = .repeated(atom, min: quantifier.min, max: quantifier.max, lazy: quantifier.lazy)
            }
            items.append(atom)
        }
        return items.count == 1 ? items[0] : .concat(items)
    }

    mutating func quantifier() throws -> (min: Int, max: Int?, lazy: Bool)? {
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
        // Lazy (`*?`) prefers fewer repeats (which only groups can tell); possessive (`*+`)
        // accepts the same texts for a yes/no match and is read as greedy.
        let lazy = current == "?"
        if current == "?" || current == "+" { index += 1 }
        if let max = result.1, max < result.0 { throw Failure(reason: "{\(result.0),\(max)} counts down") }
        if result.0 > 1000 || (result.1 ?? 0) > 1000 { throw Failure(reason: "a count above 1000") }
        return (result.0, result.1, lazy)
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
            var capturing = true
            var name: String?
            if current == "?" {
                capturing = false
                index += 1
                switch current {
                case ":": index += 1
                case "=": look = false; index += 1
                case "!": look = true; index += 1
                case "<" where index + 1 < scalars.count && (scalars[index + 1] == "=" || scalars[index + 1] == "!"):
                    throw Failure(reason: "look-behind is not supported")
                case "<", "P":
                    // A named group: `(?<name>…)` or `(?P<name>…)`.
                    if current == "P" { index += 1 }
                    guard current == "<" else { throw Failure(reason: "'(?P' without '<name>'") }
                    index += 1
                    var text = String.UnicodeScalarView()
                    while let next = current, next != ">" {
                        guard next == "_" || next.properties.isAlphabetic || ("0"..."9").contains(next), text.count < 32 else {
                            throw Failure(reason: "a group name of letters, digits and '_' (at most 32)")
                        }
                        text.append(next)
                        index += 1
                    }
                    guard current == ">", !text.isEmpty else { throw Failure(reason: "a group name without '>'") }
                    index += 1
                    name = String(text)
                    capturing = true
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
            var number = 0
            if capturing, look == nil {
                groups += 1
                number = groups
                guard number <= Self.maxGroups else { throw Failure(reason: "more than \(Self.maxGroups) groups") }
                if let name {
                    guard names[name] == nil else { throw Failure(reason: "two groups named '\(name)'") }
                    names[name] = number
                }
            }
            let inner = try alternation()
            guard current == ")" else { throw Failure(reason: "'(' without ')'") }
            index += 1
            if let negative = look { return .lookAhead(inner, negative: negative) }
            return number > 0 ? .capture(inner, number) : inner
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

    mutating func characterClass() throws -> PatternClass {
        var set = PatternClass()
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

