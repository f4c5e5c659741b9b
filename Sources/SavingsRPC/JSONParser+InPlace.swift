#if canImport(Glibc)
import Glibc
#elseif canImport(Darwin)
import Darwin
#endif

// Reading a document where it lies, without making a tree of it: an object's members, an
// array's elements, the objects of a list by the members a reader names, and stepping over a value.

extension JSONParser {
    /// The members of the object `bytes[range]` holds, each key with where its value lies,
    /// without reading the values (they can be parsed one by one, or not at all); nil when the
    /// text is not an object of that shape. The values are skipped, not checked: whoever needs
    /// one parses it.
    public static func members(of bytes: [UInt8], in range: Range<Int>? = nil) -> [(key: String, value: Range<Int>)]? {
        members(of: bytes, in: range, reading: nil) { _ in nil }
    }

    /// `members(of:in:)`, the value of the first member named `key` read where it lies by `read`
    /// instead of stepped over (a long list read in the same pass, not stepped over first and
    /// read after): `read` gets where the value starts and returns where it ends (nil: the text
    /// is refused).
    public static func members(of bytes: [UInt8], in range: Range<Int>? = nil, reading key: String?,
                               _ read: (_ start: Int) throws -> Int?) rethrows -> [(key: String, value: Range<Int>)]? {
        let range = range ?? 0..<bytes.count
        var reading = key
        var parser = JSONParser(bytes: bytes, maxDepth: defaultMaxDepth)
        parser.index = range.lowerBound
        parser.skipWhitespace()
        guard parser.index < range.upperBound, bytes[parser.index] == UInt8(ascii: "{") else { return nil }
        parser.index += 1
        var members: [(key: String, value: Range<Int>)] = []
        parser.skipWhitespace()
        if parser.index < range.upperBound, bytes[parser.index] == UInt8(ascii: "}") { return members }
        while true {
            parser.skipWhitespace()
            guard parser.index < range.upperBound, bytes[parser.index] == UInt8(ascii: "\""), let key = try? parser.parseString() else { return nil }
            parser.skipWhitespace()
            guard parser.index < range.upperBound, bytes[parser.index] == UInt8(ascii: ":") else { return nil }
            parser.index += 1
            parser.skipWhitespace()
            let start = parser.index
            if let wanted = reading, key == wanted {
                reading = nil
                guard let end = try read(start), end > start, end <= range.upperBound else { return nil }
                parser.index = end
            } else {
                guard parser.skipValue(before: range.upperBound) else { return nil }
            }
            members.append((key, start..<parser.index))
            parser.skipWhitespace()
            guard parser.index < range.upperBound else { return nil }
            if bytes[parser.index] == UInt8(ascii: ",") { parser.index += 1; continue }
            if bytes[parser.index] == UInt8(ascii: "}") { return members }
            return nil
        }
    }

    /// Where each element of the array `bytes[range]` holds lies, without reading them (each can
    /// be parsed on its own and dropped, so a long list never becomes one tree); nil when the
    /// text is not an array. As with `members`, the elements are skipped, not checked.
    public static func elements(of bytes: [UInt8], in range: Range<Int>? = nil) -> [Range<Int>]? {
        let range = range ?? 0..<bytes.count
        var parser = JSONParser(bytes: bytes, maxDepth: defaultMaxDepth)
        parser.index = range.lowerBound
        parser.skipWhitespace()
        guard parser.index < range.upperBound, bytes[parser.index] == UInt8(ascii: "[") else { return nil }
        parser.index += 1
        var elements: [Range<Int>] = []
        parser.skipWhitespace()
        if parser.index < range.upperBound, bytes[parser.index] == UInt8(ascii: "]") { return elements }
        while true {
            parser.skipWhitespace()
            let start = parser.index
            guard start < range.upperBound, parser.skipValue(before: range.upperBound), parser.index > start else { return nil }
            elements.append(start..<parser.index)
            parser.skipWhitespace()
            guard parser.index < range.upperBound else { return nil }
            if bytes[parser.index] == UInt8(ascii: ",") { parser.index += 1; continue }
            if bytes[parser.index] == UInt8(ascii: "]") { return elements }
            return nil
        }
    }

    /// Moves past one value: a string to its closing quote, an object or array to its matching
    /// bracket (strings inside skipped whole), anything else to the next delimiter.
    mutating func skipValue(before end: Int) -> Bool {
        let start = index
        let (reached, complete) = bytes.withUnsafeBufferPointer { buffer -> (Int, Bool) in
            var index = start, depth = 0
            while index < end {
                switch buffer[index] {
                case UInt8(ascii: "\""):
                    // To the next quote not escaped (after an even run of backslashes).
                    var from = index + 1
                    while true {
                        guard from < end, let found = memchr(buffer.baseAddress! + from, Int32(UInt8(ascii: "\"")), end - from) else {
                            return (end, false)
                        }
                        let quote = buffer.baseAddress!.distance(to: found.assumingMemoryBound(to: UInt8.self))
                        var backslashes = 0
                        while quote - backslashes - 1 > index, buffer[quote - backslashes - 1] == UInt8(ascii: "\\") { backslashes += 1 }
                        from = quote + 1
                        if backslashes % 2 == 0 { break }
                    }
                    index = from
                    if depth == 0 { return (index, true) }
                case UInt8(ascii: "{"), UInt8(ascii: "["):
                    depth += 1
                    index += 1
                case UInt8(ascii: "}"), UInt8(ascii: "]"):
                    // At depth 0 it closes the object around: a number or literal ended there.
                    guard depth > 0 else { return (index, index > start) }
                    depth -= 1
                    index += 1
                    if depth == 0 { return (index, true) }
                case UInt8(ascii: ","), 0x20, 0x09, 0x0A, 0x0D, UInt8(ascii: ":"):
                    if depth == 0 { return (index, true) }
                    index += 1
                default:
                    index += 1
                }
            }
            return (index, depth == 0)
        }
        index = reached
        return complete
    }
}

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
