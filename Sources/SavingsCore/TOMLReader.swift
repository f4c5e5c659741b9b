import Foundation

/// Reads the TOML that savingsd's configuration and rules files use: tables, dotted and quoted
/// keys, strings (basic and literal), integers, floats (kept as literal text so decimals stay
/// exact), booleans and arrays, and for rules files arrays of tables (`[[when]]`). Anything else
/// is refused with its line number rather than guessed at. It reads without recursion but for
/// arrays (whose nesting `TOMLNesting` bounds first), and every byte is hostile: a rules file is
/// read here before toml++ (under TOMLKit) sees it, so only TOML this plain reaches that parser,
/// whose asserts abort the process on some malformed texts.
public struct TOMLReader {
    public enum Value: Equatable, Sendable {
        case string(String)
        case integer(Int)
        /// A float literal, kept verbatim.
        case float(String)
        case bool(Bool)
        case array([Value])

        public var typeName: String {
            switch self {
            case .string: "string"
            case .integer: "integer"
            case .float: "float"
            case .bool: "boolean"
            case .array: "array"
            }
        }
    }

    public struct Entry: Equatable, Sendable {
        /// The key's path joined by dots; in an array of tables, its table's number in brackets
        /// (`when[2].column`).
        public var key: String
        public var value: Value
        public var line: Int
    }

    public struct Failure: Error, Equatable {
        public var line: Int
        public var reason: String
    }

    private let chars: [Character]
    private var index = 0
    private var line = 1
    private let arraysOfTables: Bool

    /// The entries of `text`; `arraysOfTables` admits `[[name]]` (rules files; the
    /// configuration has none).
    public static func read(_ text: String, arraysOfTables: Bool = false) throws(Failure) -> [Entry] {
        // Arrays are read recursively: their nesting is bounded first, as for rules files.
        if let line = TOMLNesting.firstLine(deeperThan: TOMLNesting.maxDepth, in: text) {
            throw Failure(line: line, reason: "nested deeper than \(TOMLNesting.maxDepth) levels")
        }
        // A byte order mark before the first line is not part of it (as toml++ reads it).
        var reader = TOMLReader(chars: Array(text.hasPrefix("\u{FEFF}") ? String(text.dropFirst()) : text), arraysOfTables: arraysOfTables)
        return try reader.document()
    }

    private init(chars: [Character], arraysOfTables: Bool) {
        self.chars = chars
        self.arraysOfTables = arraysOfTables
    }

    private var current: Character? { index < chars.count ? chars[index] : nil }

    private func fail(_ reason: String) -> Failure { Failure(line: line, reason: reason) }

    private mutating func advance() {
        if current == "\n" { line += 1 }
        index += 1
    }

    private mutating func skipSpaces() {
        while let c = current, c == " " || c == "\t" { advance() }
    }

    /// Skips spaces, comments and newlines (inside arrays).
    private mutating func skipBlank() {
        while let c = current {
            if c == " " || c == "\t" || c == "\n" || c == "\r\n" || c == "\r" {
                advance()
            } else if c == "#" {
                while let c = current, c != "\n", c != "\r\n" { advance() }
            } else {
                return
            }
        }
    }

    /// After a value or header: optional comment, then end of line or input.
    private mutating func endOfLine() throws(Failure) {
        skipSpaces()
        if current == "#" { while let c = current, c != "\n", c != "\r\n" { advance() } }
        guard current == nil || current == "\n" || current == "\r\n" else {
            throw fail("unexpected text after the value")
        }
        if current != nil { advance() }
    }

    private mutating func document() throws(Failure) -> [Entry] {
        var entries: [Entry] = []
        var seen = Set<String>()
        var tables = Set<String>()
        var table: [String] = []
        /// The tables of each array of tables so far.
        var arrays: [String: Int] = [:]
        while true {
            skipBlank()
            guard let c = current else { return entries }
            if c == "[" {
                advance()
                let array = current == "["
                if array {
                    guard arraysOfTables else { throw fail("arrays of tables ([[...]]) are not used by savingsd") }
                    advance()
                }
                skipSpaces()
                let path = try keyPath()
                skipSpaces()
                guard current == "]" else { throw fail("expected ']' to close the table header") }
                advance()
                if array {
                    guard current == "]" else { throw fail("expected ']]' to close the header of an array of tables") }
                    advance()
                }
                // A table under an array of tables belongs to its latest element: [when.leg] after
                // the second [[when]] is when[2].leg.
                var resolved: [String] = []
                for (index, part) in path.dropLast().enumerated() {
                    let prefix = path[...index].joined(separator: ".")
                    resolved.append(arrays[prefix].map { "\(part)[\($0)]" } ?? part)
                }
                let name = path.joined(separator: ".")
                if array {
                    guard !tables.contains(name) else { throw fail("[[\(name)]] is already a table") }
                    arrays[name, default: 0] += 1
                    table = resolved + ["\(path.last!)[\(arrays[name]!)]"]
                } else {
                    let full = (resolved + [path.last!]).joined(separator: ".")
                    guard arrays[name] == nil, tables.insert(full).inserted else { throw fail("table [\(name)] defined twice") }
                    table = resolved + [path.last!]
                }
                try endOfLine()
                continue
            }
            let startLine = line
            let key = table + (try keyPath())
            skipSpaces()
            guard current == "=" else { throw fail("expected '=' after the key") }
            advance()
            skipSpaces()
            let value = try self.value()
            try endOfLine()
            let name = key.joined(separator: ".")
            guard seen.insert(name).inserted else { throw Failure(line: startLine, reason: "key \(name) set twice") }
            entries.append(Entry(key: name, value: value, line: startLine))
        }
    }

    private mutating func keyPath() throws(Failure) -> [String] {
        var parts: [String] = []
        while true {
            skipSpaces()
            if current == "\"" {
                parts.append(try basicString())
            } else if current == "'" {
                parts.append(try literalString())
            } else {
                var bare = ""
                while let c = current, c.isASCII, c.isLetter || c.isNumber || c == "_" || c == "-" {
                    bare.append(c)
                    advance()
                }
                guard !bare.isEmpty else { throw fail("expected a key") }
                parts.append(bare)
            }
            skipSpaces()
            guard current == "." else { return parts }
            advance()
        }
    }

    private mutating func value() throws(Failure) -> Value {
        guard let c = current else { throw fail("expected a value") }
        switch c {
        case "\"":
            if index + 2 < chars.count, chars[index + 1] == "\"", chars[index + 2] == "\"" {
                throw fail("multi-line strings are not used by savingsd")
            }
            return .string(try basicString())
        case "'":
            return .string(try literalString())
        case "[":
            return try array()
        case "{":
            throw fail("inline tables are not used by savingsd; use a [table]")
        default:
            var word = ""
            while let c = current, !(c == " " || c == "\t" || c == "\n" || c == "\r\n" || c == "#" || c == "," || c == "]") {
                word.append(c)
                advance()
            }
            return try scalar(word)
        }
    }

    private func scalar(_ word: String) throws(Failure) -> Value {
        if word == "true" { return .bool(true) }
        if word == "false" { return .bool(false) }
        let digits = word.replacingOccurrences(of: "_", with: "")
        if !word.hasPrefix("_"), !word.hasSuffix("_"), !word.contains("__") {
            if let int = Int(digits), digits.allSatisfy({ $0.isNumber || $0 == "-" || $0 == "+" }) {
                return .integer(int)
            }
            let isFloat = digits.range(of: #"^[+-]?[0-9]+(\.[0-9]+)?([eE][+-]?[0-9]+)?$"#, options: .regularExpression) != nil
            if isFloat { return .float(digits) }
        }
        throw fail(word.isEmpty ? "expected a value" : "'\(word)' is not a TOML value (strings need quotes)")
    }

    private mutating func array() throws(Failure) -> Value {
        advance()
        var items: [Value] = []
        while true {
            skipBlank()
            if current == "]" {
                advance()
                return .array(items)
            }
            items.append(try value())
            skipBlank()
            if current == "," {
                advance()
            } else if current != "]" {
                throw fail("expected ',' or ']' in the array")
            }
        }
    }

    private mutating func literalString() throws(Failure) -> String {
        advance()
        var text = ""
        while let c = current, c != "'" {
            guard c != "\n", c != "\r\n" else { throw fail("unterminated string") }
            text.append(c)
            advance()
        }
        guard current == "'" else { throw fail("unterminated string") }
        advance()
        return text
    }

    private mutating func basicString() throws(Failure) -> String {
        advance()
        var text = ""
        while let c = current, c != "\"" {
            guard c != "\n", c != "\r\n" else { throw fail("unterminated string") }
            advance()
            guard c == "\\" else {
                text.append(c)
                continue
            }
            guard let e = current else { throw fail("unterminated escape") }
            advance()
            switch e {
            case "\"": text.append("\"")
            case "\\": text.append("\\")
            case "n": text.append("\n")
            case "t": text.append("\t")
            case "r": text.append("\r")
            case "b": text.append("\u{08}")
            case "f": text.append("\u{0C}")
            case "u", "U":
                let count = e == "u" ? 4 : 8
                var hex = ""
                for _ in 0..<count {
                    guard let h = current, h.isHexDigit else { throw fail("invalid \\\(e) escape") }
                    hex.append(h)
                    advance()
                }
                guard let code = UInt32(hex, radix: 16), let scalar = Unicode.Scalar(code) else {
                    throw fail("invalid unicode escape")
                }
                text.unicodeScalars.append(scalar)
            default:
                throw fail("invalid escape \\\(e)")
            }
        }
        guard current == "\"" else { throw fail("unterminated string") }
        advance()
        return text
    }
}
