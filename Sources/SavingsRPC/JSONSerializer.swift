/// Compact, deterministic JSON output: object keys sorted, no whitespace, one line.
public enum JSONSerializer {
    public static func serialize(_ value: JSONValue) -> String {
        var out = ""
        write(value, to: &out)
        return out
    }

    /// Indented output for people (savingsctl); keys still sorted.
    public static func pretty(_ value: JSONValue, indent: String = "") -> String {
        let inner = indent + "  "
        switch value {
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

    public static func bytes(_ value: JSONValue) -> [UInt8] {
        Array(serialize(value).utf8)
    }

    private static func write(_ value: JSONValue, to out: inout String) {
        switch value {
        case .null: out += "null"
        case .bool(let b): out += b ? "true" : "false"
        case .number(let n): out += n
        case .string(let s): writeString(s, to: &out)
        case .array(let items):
            out += "["
            for (i, item) in items.enumerated() {
                if i > 0 { out += "," }
                write(item, to: &out)
            }
            out += "]"
        case .object(let object):
            out += "{"
            for (i, key) in object.keys.sorted().enumerated() {
                if i > 0 { out += "," }
                writeString(key, to: &out)
                out += ":"
                write(object[key]!, to: &out)
            }
            out += "}"
        }
    }

    private static func writeString(_ s: String, to out: inout String) {
        out += "\""
        for scalar in s.unicodeScalars {
            switch scalar {
            case "\"": out += "\\\""
            case "\\": out += "\\\\"
            case "\n": out += "\\n"
            case "\r": out += "\\r"
            case "\t": out += "\\t"
            case "\u{2028}": out += "\\u2028"
            case "\u{2029}": out += "\\u2029"
            default:
                if scalar.value < 0x20 {
                    let hex = String(scalar.value, radix: 16)
                    out += "\\u" + String(repeating: "0", count: 4 - hex.count) + hex
                } else {
                    out.unicodeScalars.append(scalar)
                }
            }
        }
        out += "\""
    }
}
