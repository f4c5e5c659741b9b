/// Compact, deterministic JSON output: object keys sorted, no whitespace, one line.
public enum JSONSerializer {
    public static func serialize(_ value: JSONValue) -> String {
        String(decoding: bytes(value), as: UTF8.self)
    }

    /// Indented output for people (savingsctl); keys still sorted.
    public static func pretty(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value.unwrapped {
        case .array(let items) where !items.isEmpty:
            return "[\n" + items.map { inner + pretty($0, indent: inner) }.joined(separator: ",\n") + "\n" + indent + "]"
        case .object(let object) where !object.isEmpty:
            return "{\n" + object.keys.sorted().map { key in
                inner + serialize(.string(key)) + ": " + pretty(object[key]!, indent: inner)
            }.joined(separator: ",\n") + "\n" + indent + "}"
        default:
            return serialize(value)
        }
    }

    /// UTF-8 bytes, written directly: answers can be megabytes, and appending scalar by
    /// scalar to a String was most of a large dashboard's cost.
    public static func bytes(_ value: JSONValue) -> [UInt8] {
        var out: [UInt8] = []
        out.reserveCapacity(estimatedCount(value) + 1)
        write(value, to: &out)
        return out
    }

    /// About how many bytes `value` takes written (escapes aside). The buffer is made that
    /// large at once: grown by doubling, a dashboard of a thousand goals (650 KB) was copied
    /// about twice over on its way out, into memory new each time.
    static func estimatedCount(_ value: JSONValue) -> Int {
        switch value {
        case .null: 4
        case .bool(let b): b ? 4 : 5
        case .number(let n): n.utf8.count
        case .string(let s): s.utf8.count + 2
        case .serialized(let serialized): serialized.bytes.count
        case .array(let items): items.reduce(1 + max(items.count, 1)) { $0 + estimatedCount($1) }
        case .object(let object): object.reduce(1 + max(object.count, 1)) { $0 + $1.key.utf8.count + 3 + estimatedCount($1.value) }
        }
    }

    private static func append(_ text: StaticString, to out: inout [UInt8]) {
        text.withUTF8Buffer { out.append(contentsOf: $0) }
    }

    static func write(_ value: JSONValue, to out: inout [UInt8]) {
        switch value {
        case .null: append("null", to: &out)
        case .bool(let b): b ? append("true", to: &out) : append("false", to: &out)
        case .number(let n): out.append(contentsOf: n.utf8)
        case .string(let s): writeString(s, to: &out)
        case .serialized(let serialized): out.append(contentsOf: serialized.bytes)
        case .array(let items):
            out.append(UInt8(ascii: "["))
            for (i, item) in items.enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                write(item, to: &out)
            }
            out.append(UInt8(ascii: "]"))
        case .object(let object):
            out.append(UInt8(ascii: "{"))
            // The pairs sorted together: no lookup of each key again.
            for (i, member) in object.sorted(by: { $0.key < $1.key }).enumerated() {
                if i > 0 { out.append(UInt8(ascii: ",")) }
                writeString(member.key, to: &out)
                out.append(UInt8(ascii: ":"))
                write(member.value, to: &out)
            }
            out.append(UInt8(ascii: "}"))
        }
    }

    /// Bytes a string cannot carry as they are: controls, quote, backslash, and the lead
    /// byte of U+2028/U+2029.
    private static func needsEscape(_ byte: UInt8) -> Bool {
        byte < 0x20 || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "\\") || byte == 0xE2
    }

    private static func writeString(_ s: String, to out: inout [UInt8]) {
        out.append(UInt8(ascii: "\""))
        // Most strings (names, amounts, ids, timestamps) need no escape: copied whole.
        let copied = s.utf8.withContiguousStorageIfAvailable { bytes -> Bool in
            guard !bytes.contains(where: needsEscape) else { return false }
            out.append(contentsOf: bytes)
            return true
        } ?? false
        if copied {
            out.append(UInt8(ascii: "\""))
            return
        }
        let utf8 = Array(s.utf8)
        var index = 0
        while index < utf8.count {
            let byte = utf8[index]
            switch byte {
            case UInt8(ascii: "\""): append("\\\"", to: &out)
            case UInt8(ascii: "\\"): append("\\\\", to: &out)
            case UInt8(ascii: "\n"): append("\\n", to: &out)
            case UInt8(ascii: "\r"): append("\\r", to: &out)
            case UInt8(ascii: "\t"): append("\\t", to: &out)
            case 0..<0x20:
                let hex = Array(String(byte, radix: 16).utf8)
                append("\\u", to: &out)
                out.append(contentsOf: repeatElement(UInt8(ascii: "0"), count: 4 - hex.count))
                out.append(contentsOf: hex)
            case 0xE2 where index + 2 < utf8.count && utf8[index + 1] == 0x80 && (utf8[index + 2] == 0xA8 || utf8[index + 2] == 0xA9):
                // U+2028 and U+2029 end lines in some readers.
                utf8[index + 2] == 0xA8 ? append("\\u2028", to: &out) : append("\\u2029", to: &out)
                index += 2
            default:
                out.append(byte)
            }
            index += 1
        }
        out.append(UInt8(ascii: "\""))
    }
}
