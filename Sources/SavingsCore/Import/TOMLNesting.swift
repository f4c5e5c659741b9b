/// How deep a TOML text nests, measured before any parser sees it. toml++ (under TOMLKit) reads
/// nested tables, dotted keys and arrays recursively, and a 62 KB header of 31,000 dotted parts
/// overflows the daemon's stack; a rules file needs three levels (`[[when]]`, a key, a value).
///
/// The measure is a bound, not a parse: at each point, the open brackets and braces (arrays,
/// inline tables, table headers) plus the dots since the last key started (`a.b.c = …`,
/// `[a.b.c]`). Text in strings and comments is skipped, so it never counts. A float (`1.5`) or a
/// time with fractions adds one dot on the value side, which the limit leaves room for.
public enum TOMLNesting {
    /// Deepest nesting a rules file may have.
    public static let maxDepth = 16

    /// The line of the first point deeper than `limit`, or nil when the text stays within it.
    public static func firstLine(deeperThan limit: Int, in text: String) -> Int? {
        var bytes = Array(text.utf8)
        bytes.append(0x0A)
        var line = 1
        var brackets = 0
        var dots = 0
        var index = 0
        while index < bytes.count {
            switch bytes[index] {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                skipString(bytes, &index, &line)
                continue
            case UInt8(ascii: "#"):
                while index < bytes.count, bytes[index] != 0x0A { index += 1 }
                continue
            case 0x0A:
                line += 1
                dots = 0
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                brackets += 1
                dots = 0
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                brackets = max(0, brackets - 1)
            case UInt8(ascii: "="), UInt8(ascii: ","):
                dots = 0
            case UInt8(ascii: "."):
                dots += 1
            default:
                break
            }
            if brackets + dots > limit { return line }
            index += 1
        }
        return nil
    }

    /// Moves `index` past a string that opens there (basic or literal, one line or multi-line),
    /// counting its lines; a one-line string ends at its line's end, where the parser refuses it.
    static func skipString(_ bytes: [UInt8], _ index: inout Int, _ line: inout Int) {
        let quote = bytes[index]
        let multi = index + 2 < bytes.count && bytes[index + 1] == quote && bytes[index + 2] == quote
        index += multi ? 3 : 1
        while index < bytes.count {
            let byte = bytes[index]
            if byte == 0x0A {
                if !multi { return }
                line += 1
            } else if byte == UInt8(ascii: "\\"), quote == UInt8(ascii: "\"") {
                index += 2
                continue
            } else if byte == quote {
                if !multi {
                    index += 1
                    return
                }
                if index + 2 < bytes.count, bytes[index + 1] == quote, bytes[index + 2] == quote {
                    index += 3
                    // Up to two more quotes belong to the string ("""a"""").
                    while index < bytes.count, bytes[index] == quote { index += 1 }
                    return
                }
            }
            index += 1
        }
    }
}
