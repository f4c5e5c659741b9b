#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

/// A strict RFC 8259 parser over UTF-8 bytes that keeps number literals verbatim.
///
/// Nesting depth and duplicate keys are bounded/refused so hostile input cannot exhaust the
/// stack or smuggle a second value past validation.
public struct JSONParser {
    public struct Failure: Error, Sendable, Equatable, CustomStringConvertible {
        public var message: String
        public var offset: Int
        public var description: String { "\(message) at byte \(offset)" }

        public init(message: String, offset: Int) {
            self.message = message
            self.offset = offset
        }
    }

    public static let defaultMaxDepth = 64

    let bytes: [UInt8]
    var index = 0
    private let maxDepth: Int
    /// The only members objects keep (at any depth); the others are stepped over unread.
    private var keeping: Set<String>?
    /// Where the value being parsed must end: a member stepped over never reads past it.
    private var end = Int.max

    init(bytes: [UInt8], maxDepth: Int) {
        self.bytes = bytes
        self.maxDepth = maxDepth
    }

    public static func parse(_ bytes: [UInt8], maxDepth: Int = defaultMaxDepth) throws(Failure) -> JSONValue {
        try parse(bytes, in: 0..<bytes.count, maxDepth: maxDepth)
    }

    /// The value in `bytes[range]` (whitespace around it allowed), nothing else there.
    public static func parse(_ bytes: [UInt8], in range: Range<Int>, maxDepth: Int = defaultMaxDepth) throws(Failure) -> JSONValue {
        try value(in: bytes, range, keeping: nil, maxDepth: maxDepth)
    }

    /// The value in `bytes[range]`, its objects holding only the members named in `keeping`, at
    /// any depth: the others are stepped over to their end (strings whole, brackets matched)
    /// and neither checked nor kept. For an outside answer of which a few fields are used.
    public static func parse(_ bytes: [UInt8], in range: Range<Int>, keeping: Set<String>,
                             maxDepth: Int = defaultMaxDepth) throws(Failure) -> JSONValue {
        try value(in: bytes, range, keeping: keeping, maxDepth: maxDepth)
    }

    /// The value in `bytes[range]`, all of it or (with `keeping`) only the members named.
    private static func value(in bytes: [UInt8], _ range: Range<Int>, keeping: Set<String>?, maxDepth: Int) throws(Failure) -> JSONValue {
        var parser = JSONParser(bytes: bytes, maxDepth: maxDepth)
        parser.keeping = keeping
        parser.end = range.upperBound
        parser.index = range.lowerBound
        parser.skipWhitespace()
        let value = try parser.parseValue(depth: 0)
        parser.skipWhitespace(before: range.upperBound)
        guard parser.index == range.upperBound else { throw parser.failure("unexpected data after the JSON value") }
        return value
    }

    public static func parse(_ text: String, maxDepth: Int = defaultMaxDepth) throws(Failure) -> JSONValue {
        try parse(Array(text.utf8), maxDepth: maxDepth)
    }

    private func failure(_ message: String) -> Failure { Failure(message: message, offset: index) }

    mutating func skipWhitespace() { skipWhitespace(before: bytes.count) }

    mutating func skipWhitespace(before end: Int) {
        while index < end {
            switch bytes[index] {
            case 0x20, 0x09, 0x0A, 0x0D: index += 1
            default: return
            }
        }
    }

    private mutating func parseValue(depth: Int) throws(Failure) -> JSONValue {
        guard index < bytes.count else { throw failure("unexpected end of input") }
        switch bytes[index] {
        case UInt8(ascii: "{"): return try parseObject(depth: depth + 1)
        case UInt8(ascii: "["): return try parseArray(depth: depth + 1)
        case UInt8(ascii: "\""): return .string(try parseString())
        case UInt8(ascii: "t"): try expectLiteral("true"); return .bool(true)
        case UInt8(ascii: "f"): try expectLiteral("false"); return .bool(false)
        case UInt8(ascii: "n"): try expectLiteral("null"); return .null
        case UInt8(ascii: "-"), UInt8(ascii: "0")...UInt8(ascii: "9"): return .number(try parseNumber())
        default: throw failure("unexpected character")
        }
    }

    private mutating func expectLiteral(_ word: StaticString) throws(Failure) {
        let count = word.utf8CodeUnitCount
        guard index + count <= bytes.count else { throw failure("unexpected end of input") }
        let expected = UnsafeBufferPointer(start: word.utf8Start, count: count)
        guard bytes[index..<index + count].elementsEqual(expected) else { throw failure("invalid literal") }
        index += count
    }

    private mutating func parseObject(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maxDepth else { throw failure("nesting deeper than \(maxDepth) levels") }
        index += 1
        var object: [String: JSONValue] = [:]
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return .object(object)
        }
        // Room for a typical object's members at once: growing from nothing rehashes every key
        // at each doubling (a provider's page is thousands of small objects).
        object.reserveCapacity(8)
        while true {
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try parseString()
            let afterKey = index
            skipWhitespace()
            guard index < bytes.count, bytes[index] == UInt8(ascii: ":") else { throw failure("expected ':'") }
            index += 1
            skipWhitespace()
            if let keeping, !keeping.contains(key) {
                guard index < bytes.count, skipValue(before: min(end, bytes.count)) else { throw failure("unexpected end of input") }
            } else {
                // One lookup: the member goes in, and an earlier one of the same key refuses the
                // text (reported where the repeated key ends).
                guard object.updateValue(try parseValue(depth: depth), forKey: key) == nil else {
                    throw Failure(message: "duplicate key \"\(key)\"", offset: afterKey)
                }
            }
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "}") { index += 1; return .object(object) }
            throw failure("expected ',' or '}'")
        }
    }

    private mutating func parseArray(depth: Int) throws(Failure) -> JSONValue {
        guard depth <= maxDepth else { throw failure("nesting deeper than \(maxDepth) levels") }
        index += 1
        var array: [JSONValue] = []
        skipWhitespace()
        if index < bytes.count, bytes[index] == UInt8(ascii: "]") {
            index += 1
            return .array(array)
        }
        while true {
            skipWhitespace()
            array.append(try parseValue(depth: depth))
            skipWhitespace()
            guard index < bytes.count else { throw failure("unexpected end of input") }
            if bytes[index] == UInt8(ascii: ",") { index += 1; continue }
            if bytes[index] == UInt8(ascii: "]") { index += 1; return .array(array) }
            throw failure("expected ',' or ']'")
        }
    }

    private mutating func parseNumber() throws(Failure) -> String {
        let start = index
        func digits(_ parser: inout JSONParser) -> Int {
            let from = parser.index
            while parser.index < parser.bytes.count, (48...57).contains(parser.bytes[parser.index]) { parser.index += 1 }
            return parser.index - from
        }
        if bytes[index] == UInt8(ascii: "-") { index += 1 }
        guard index < bytes.count else { throw failure("invalid number") }
        if bytes[index] == UInt8(ascii: "0") {
            index += 1
        } else if digits(&self) == 0 {
            throw failure("invalid number")
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: ".") {
            index += 1
            guard digits(&self) > 0 else { throw failure("invalid number: digits must follow '.'") }
        }
        if index < bytes.count, bytes[index] == UInt8(ascii: "e") || bytes[index] == UInt8(ascii: "E") {
            index += 1
            if index < bytes.count, bytes[index] == UInt8(ascii: "+") || bytes[index] == UInt8(ascii: "-") { index += 1 }
            guard digits(&self) > 0 else { throw failure("invalid number: exponent without digits") }
        }
        return String(decoding: bytes[start..<index], as: UTF8.self)
    }

    mutating func parseString() throws(Failure) -> String {
        index += 1
        // Most strings have no escapes: one validated copy of the bytes up to the quote.
        // Scanned and read through the array's buffer: String's initializers over a contiguous
        // buffer take their fast path (over an ArraySlice, generic code several times slower).
        let start = index
        let (end, ascii) = bytes.withUnsafeBufferPointer { buffer in
            var end = start, ascii = true
            while end < buffer.count {
                let byte = buffer[end]
                if byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte < 0x20 { break }
                if byte >= 0x80 { ascii = false }
                end += 1
            }
            return (end, ascii)
        }
        if end < bytes.count, bytes[end] == UInt8(ascii: "\"") {
            // ASCII needs no validation; anything else must be valid UTF-8.
            let text = bytes.withUnsafeBufferPointer { buffer in
                let run = UnsafeBufferPointer(rebasing: buffer[start..<end])
                return ascii ? String(decoding: run, as: UTF8.self) : String(validating: run, as: UTF8.self)
            }
            guard let text else { throw failure("invalid UTF-8 in string") }
            index = end + 1
            return text
        }
        var scalars = String.UnicodeScalarView()
        var runStart = index
        func flushRun(_ parser: JSONParser, into scalars: inout String.UnicodeScalarView) throws(Failure) {
            guard runStart < parser.index else { return }
            let run = parser.bytes[runStart..<parser.index]
            guard let text = String(validating: run, as: UTF8.self) else { throw parser.failure("invalid UTF-8 in string") }
            scalars.append(contentsOf: text.unicodeScalars)
        }
        while true {
            guard index < bytes.count else { throw failure("unterminated string") }
            let byte = bytes[index]
            if byte == UInt8(ascii: "\"") {
                try flushRun(self, into: &scalars)
                index += 1
                return String(scalars)
            }
            if byte < 0x20 { throw failure("unescaped control character in string") }
            if byte == UInt8(ascii: "\\") {
                try flushRun(self, into: &scalars)
                index += 1
                guard index < bytes.count else { throw failure("unterminated escape") }
                let escape = bytes[index]
                index += 1
                switch escape {
                case UInt8(ascii: "\""): scalars.append("\"")
                case UInt8(ascii: "\\"): scalars.append("\\")
                case UInt8(ascii: "/"): scalars.append("/")
                case UInt8(ascii: "b"): scalars.append("\u{08}")
                case UInt8(ascii: "f"): scalars.append("\u{0C}")
                case UInt8(ascii: "n"): scalars.append("\n")
                case UInt8(ascii: "r"): scalars.append("\r")
                case UInt8(ascii: "t"): scalars.append("\t")
                case UInt8(ascii: "u"): scalars.append(try parseUnicodeEscape())
                default: throw failure("invalid escape")
                }
                runStart = index
                continue
            }
            index += 1
        }
    }

    private mutating func parseHex4() throws(Failure) -> UInt32 {
        guard index + 4 <= bytes.count else { throw failure("invalid \\u escape") }
        var value: UInt32 = 0
        for byte in bytes[index..<index + 4] {
            let digit: UInt32
            switch byte {
            case 48...57: digit = UInt32(byte - 48)
            case 65...70: digit = UInt32(byte - 55)
            case 97...102: digit = UInt32(byte - 87)
            default: throw failure("invalid \\u escape")
            }
            value = value * 16 + digit
        }
        index += 4
        return value
    }

    private mutating func parseUnicodeEscape() throws(Failure) -> Unicode.Scalar {
        let first = try parseHex4()
        if (0xD800...0xDBFF).contains(first) {
            guard index + 2 <= bytes.count, bytes[index] == UInt8(ascii: "\\"), bytes[index + 1] == UInt8(ascii: "u") else {
                throw failure("unpaired surrogate in \\u escape")
            }
            index += 2
            let second = try parseHex4()
            guard (0xDC00...0xDFFF).contains(second) else { throw failure("unpaired surrogate in \\u escape") }
            let combined = 0x10000 + ((first - 0xD800) << 10) + (second - 0xDC00)
            guard let scalar = Unicode.Scalar(combined) else { throw failure("invalid \\u escape") }
            return scalar
        }
        guard let scalar = Unicode.Scalar(first) else { throw failure("unpaired surrogate in \\u escape") }
        return scalar
    }
}
