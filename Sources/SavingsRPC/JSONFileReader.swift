import Foundation

/// Reads one large JSON document from a file in bounded memory: the top-level object's members
/// one at a time, and an array member's elements one at a time, each handed over as its own
/// bytes (at most `maxValueBytes`) to be parsed alone with `JSONParser`. What it holds at once is
/// one chunk of the file and one element, whatever the document's size.
///
/// The structure between the elements (braces, brackets, colons, commas) is checked here; each
/// element's text is checked by whoever parses it. Offsets in failures count from the start of
/// the file.
public final class JSONFileReader {
    public static let chunkBytes = 256 << 10

    private let handle: FileHandle
    private var buffer: [UInt8] = []
    /// The next unread byte of `buffer`.
    private var position = 0
    /// The file offset of `buffer[0]`.
    private var base: Int
    private var atEnd = false

    /// Reads `handle` from `offset` (the reader takes the handle's position over).
    public init(_ handle: FileHandle, offset: Int = 0) throws {
        self.handle = handle
        base = offset
        try handle.seek(toOffset: UInt64(offset))
    }

    /// The file offset of the next unread byte.
    public var offset: Int { base + position }

    private func failure(_ message: String) -> JSONParser.Failure { JSONParser.Failure(message: message, offset: offset) }

    /// Whether a byte is there to read, reading the next chunk when this one is used up.
    private func available() throws -> Bool {
        if position < buffer.count { return true }
        guard !atEnd else { return false }
        let data = try handle.read(upToCount: Self.chunkBytes) ?? Data()
        base += buffer.count
        buffer.removeAll(keepingCapacity: true)
        buffer.append(contentsOf: data)
        position = 0
        if data.isEmpty { atEnd = true }
        return !data.isEmpty
    }

    /// The next byte after whitespace, not consumed; nil at the end of the file.
    public func peek() throws -> UInt8? {
        while try available() {
            switch buffer[position] {
            case 0x20, 0x09, 0x0A, 0x0D: position += 1
            default: return buffer[position]
            }
        }
        return nil
    }

    /// Consumes `byte` (after whitespace), or fails naming what was expected.
    public func expect(_ byte: UInt8, _ what: String) throws {
        let next = try peek()
        guard next == byte else { throw failure(next == nil ? "unexpected end of input, expected \(what)" : "expected \(what)") }
        position += 1
    }

    /// Nothing but whitespace is left.
    public func expectEnd() throws {
        guard try peek() == nil else { throw failure("unexpected data after the JSON value") }
    }

    /// A value longer than the bound its reader set.
    public struct ValueTooLong: Error, Sendable {
        /// Where it starts in the file.
        public let offset: Int
        public let limit: Int
    }

    /// The text of the next value (after whitespace): a string to its closing quote, an object
    /// or array to its matching bracket, a number or literal to the next delimiter. Not checked
    /// beyond its extent: parse it. Throws `ValueTooLong` past `maxBytes`.
    public func value(maxBytes: Int) throws -> (bytes: [UInt8], offset: Int) {
        var out: [UInt8] = []
        let start = try scan(maxBytes: maxBytes, into: &out)
        return (out, start)
    }

    /// Moves past the next value, holding none of it.
    public func skip() throws {
        var none: [UInt8]?
        _ = try scan(maxBytes: nil, into: &none)
    }

    private func scan<Sink: ValueSink>(maxBytes: Int?, into out: inout Sink) throws -> Int {
        guard try peek() != nil else { throw failure("unexpected end of input") }
        let start = offset
        var length = 0
        var depth = 0, inString = false, escaped = false
        let first = buffer[position]
        let scalar = first != UInt8(ascii: "\"") && first != UInt8(ascii: "{") && first != UInt8(ascii: "[")
        while true {
            guard try available() else {
                // A number or literal may end the file; anything open may not.
                if scalar, length > 0 { return start }
                throw failure(inString ? "unterminated string" : "unexpected end of input")
            }
            // Scans this chunk; `done` is where the value ends in it, if it does.
            let from = position
            var done: Int?
            buffer.withUnsafeBufferPointer { bytes in
                var index = from
                while index < bytes.count {
                    let byte = bytes[index]
                    if inString {
                        if escaped {
                            escaped = false
                        } else if byte == UInt8(ascii: "\\") {
                            escaped = true
                        } else if byte == UInt8(ascii: "\"") {
                            inString = false
                            if depth == 0 { done = index + 1; return }
                        }
                    } else if scalar {
                        switch byte {
                        case UInt8(ascii: ","), UInt8(ascii: "}"), UInt8(ascii: "]"), 0x20, 0x09, 0x0A, 0x0D:
                            done = index
                            return
                        default: break
                        }
                    } else {
                        switch byte {
                        case UInt8(ascii: "\""): inString = true
                        case UInt8(ascii: "{"), UInt8(ascii: "["): depth += 1
                        case UInt8(ascii: "}"), UInt8(ascii: "]"):
                            depth -= 1
                            if depth == 0 { done = index + 1; return }
                        default: break
                        }
                    }
                    index += 1
                }
            }
            let end = done ?? buffer.count
            length += end - from
            if let maxBytes, length > maxBytes { throw ValueTooLong(offset: start, limit: maxBytes) }
            out.take(buffer[from..<end])
            position = end
            if done != nil { return start }
        }
    }

    /// Walks the object that starts here: calls `member` with each key, which must consume its
    /// value (with `value`, `elements` or `skip`). Keys longer than `maxKeyBytes` are refused.
    public func members(maxKeyBytes: Int = 1024, _ member: (String) throws -> Void) throws {
        try expect(UInt8(ascii: "{"), "'{'")
        if try peek() == UInt8(ascii: "}") {
            position += 1
            return
        }
        while true {
            guard try peek() == UInt8(ascii: "\"") else { throw failure("expected a string key") }
            let key = try value(maxBytes: maxKeyBytes)
            guard case .string(let name) = try parse(key) else { throw failure("expected a string key") }
            try expect(UInt8(ascii: ":"), "':'")
            try member(name)
            switch try peek() {
            case UInt8(ascii: ",")?: position += 1
            case UInt8(ascii: "}")?: position += 1; return
            case nil: throw failure("unexpected end of input, expected ',' or '}'")
            default: throw failure("expected ',' or '}'")
            }
        }
    }

    /// Walks the array that starts here: calls `element` with each element's index and text (at
    /// most `maxBytes` each) and where it starts in the file.
    public func elements(maxBytes: Int, _ element: (_ index: Int, _ bytes: [UInt8], _ offset: Int) throws -> Void) throws {
        try expect(UInt8(ascii: "["), "'['")
        if try peek() == UInt8(ascii: "]") {
            position += 1
            return
        }
        var index = 0
        while true {
            let (bytes, start) = try value(maxBytes: maxBytes)
            try element(index, bytes, start)
            index += 1
            switch try peek() {
            case UInt8(ascii: ",")?: position += 1
            case UInt8(ascii: "]")?: position += 1; return
            case nil: throw failure("unexpected end of input, expected ',' or ']'")
            default: throw failure("expected ',' or ']'")
            }
        }
    }

    /// `bytes` (a value read at `offset`) parsed, failures placed in the file.
    public static func parse(_ bytes: [UInt8], at offset: Int) throws(JSONParser.Failure) -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw JSONParser.Failure(message: error.message, offset: offset + error.offset)
        }
    }

    private func parse(_ value: (bytes: [UInt8], offset: Int)) throws(JSONParser.Failure) -> JSONValue {
        try Self.parse(value.bytes, at: value.offset)
    }
}

/// Where a scanned value's bytes go: kept, or dropped.
private protocol ValueSink {
    mutating func take(_ bytes: ArraySlice<UInt8>)
}

extension Array: ValueSink where Element == UInt8 {
    mutating func take(_ bytes: ArraySlice<UInt8>) { append(contentsOf: bytes) }
}

extension Optional: ValueSink where Wrapped == [UInt8] {
    mutating func take(_ bytes: ArraySlice<UInt8>) {}
}
