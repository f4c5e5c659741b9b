#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

extension JSONParser {
    /// The member names a reader looks for in objects, kept as bytes: a key is compared where
    /// it lies, no string made of it (unless it has escapes).
    public struct Names: Sendable {
        public let names: [String]
        fileprivate let utf8: [[UInt8]]

        public init(_ names: [String]) {
            self.names = names
            utf8 = names.map { Array($0.utf8) }
        }

        /// The position of `name` among the names (that of its values in a `forEachObject`).
        public func index(of name: String) -> Int? { names.firstIndex(of: name) }
    }

    /// Reads the array `bytes[range]` of objects in one pass, an element at a time: `body` gets
    /// where the element lies and where the members `names` names lie in it (by position; nil
    /// where absent; a key given twice: its first). Other members are stepped over unread, as
    /// `members(of:in:)` does. False when the text is not an array of objects.
    public static func forEachObject(of bytes: [UInt8], in range: Range<Int>, named names: Names,
                                     _ body: (_ element: Range<Int>, _ values: [Range<Int>?]) throws -> Void) rethrows -> Bool {
        try forEachObject(of: bytes, from: range.lowerBound, before: range.upperBound, named: names, body) != nil
    }

    /// `forEachObject(of:in:named:_:)` over the array that starts at `start`, where it ends not
    /// known yet (`end` bounds it): the index after the array, or nil when the text there is not
    /// an array of objects.
    public static func forEachObject(of bytes: [UInt8], from start: Int, before end: Int, named names: Names,
                                     _ body: (_ element: Range<Int>, _ values: [Range<Int>?]) throws -> Void) rethrows -> Int? {
        var parser = JSONParser(bytes: bytes, maxDepth: defaultMaxDepth)
        parser.index = start
        parser.skipWhitespace(before: end)
        guard parser.index < end, bytes[parser.index] == UInt8(ascii: "[") else { return nil }
        parser.index += 1
        parser.skipWhitespace(before: end)
        if parser.index < end, bytes[parser.index] == UInt8(ascii: "]") { return parser.index + 1 }
        // One array of values for the list, filled again for each element (unshared again once
        // `body` has returned, unless it kept it).
        var values = [Range<Int>?](repeating: nil, count: names.utf8.count)
        while true {
            parser.skipWhitespace(before: end)
            let start = parser.index
            guard parser.namedMembers(names, into: &values, before: end) else { return nil }
            try body(start..<parser.index, values)
            parser.skipWhitespace(before: end)
            guard parser.index < end else { return nil }
            if bytes[parser.index] == UInt8(ascii: ",") { parser.index += 1; continue }
            return bytes[parser.index] == UInt8(ascii: "]") ? parser.index + 1 : nil
        }
    }

    /// Reads the object at `index` to its end, keeping in `values` where the named members'
    /// values lie (nil for those absent). False when it is no object.
    private mutating func namedMembers(_ names: Names, into values: inout [Range<Int>?], before end: Int) -> Bool {
        guard index < end, bytes[index] == UInt8(ascii: "{") else { return false }
        index += 1
        for slot in values.indices { values[slot] = nil }
        skipWhitespace(before: end)
        if index < end, bytes[index] == UInt8(ascii: "}") {
            index += 1
            return true
        }
        while true {
            skipWhitespace(before: end)
            guard index < end, bytes[index] == UInt8(ascii: "\""), let slot = namedKey(names, before: end) else { return false }
            skipWhitespace(before: end)
            guard index < end, bytes[index] == UInt8(ascii: ":") else { return false }
            index += 1
            skipWhitespace(before: end)
            let start = index
            guard skipValue(before: end), index > start else { return false }
            if let slot, values[slot] == nil { values[slot] = start..<index }
            skipWhitespace(before: end)
            guard index < end else { return false }
            if bytes[index] == UInt8(ascii: ",") {
                index += 1
                continue
            }
            guard bytes[index] == UInt8(ascii: "}") else { return false }
            index += 1
            return true
        }
    }

    /// Reads the key at `index` (its opening quote): `.some(position)` of a name looked for,
    /// `.some(nil)` for another, nil when it is no string. A key with escapes is decoded first.
    private mutating func namedKey(_ names: Names, before end: Int) -> Int?? {
        let open = index
        // The closing quote, and whether the key has escapes; then the name it is, compared
        // where it lies.
        let found: (close: Int, slot: Int?, escaped: Bool)? = bytes.withUnsafeBufferPointer { buffer in
            let base = buffer.baseAddress!
            guard open + 1 < end, let quote = memchr(base + open + 1, Int32(UInt8(ascii: "\"")), end - open - 1) else { return nil }
            let close = base.distance(to: quote.assumingMemoryBound(to: UInt8.self)), length = close - open - 1
            if memchr(base + open + 1, Int32(UInt8(ascii: "\\")), length) != nil { return (close, nil, true) }
            let slot = names.utf8.firstIndex { name in
                name.count == length && length > 0 && name.withUnsafeBufferPointer { memcmp($0.baseAddress!, base + open + 1, length) == 0 }
            }
            return (close, slot, false)
        }
        guard let found else { return nil }
        if !found.escaped {
            index = found.close + 1
            return .some(found.slot)
        }
        guard let text = try? parseString(), index <= end else { return nil }
        return .some(names.index(of: text))
    }
}
