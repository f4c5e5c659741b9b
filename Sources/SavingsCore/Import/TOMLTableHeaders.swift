/// Table headers toml++ cannot read, found before it sees the text. After the `[` (or `[[`) of a
/// header and any spaces, toml++ 3 (under TOMLKit) assumes a key begins, and asserts it rather
/// than reporting an error; SwiftPM does not define NDEBUG for C++, so the assertion is in every
/// build and a rules file of three bytes, `[!]`, aborted the daemon. A header there must begin
/// with a bare key's letter, digit, `_` or `-`, a quote, or `]` (which toml++ refuses properly);
/// TOML has no other kind, so no valid file is refused here.
///
/// A header is a `[` first on its line outside strings, comments, arrays and inline tables; the
/// text is scanned as `TOMLNesting` scans it.
public enum TOMLTableHeaders {
    /// The line of the first header that does not begin with a key, or nil.
    public static func firstUnreadableLine(in text: String) -> Int? {
        var bytes = Array(text.utf8)
        bytes.append(0x0A)
        var line = 1
        var depth = 0
        var lineStart = true
        var index = 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                skipString(bytes, &index, &line)
                lineStart = false
                continue
            case UInt8(ascii: "#"):
                while bytes[index] != 0x0A { index += 1 }
                continue
            case 0x0A:
                line += 1
                lineStart = true
            case UInt8(ascii: " "), UInt8(ascii: "\t"), 0x0D:
                break
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                if byte == UInt8(ascii: "["), depth == 0, lineStart {
                    var next = index + 1
                    if bytes[next] == UInt8(ascii: "[") { next += 1 }
                    while bytes[next] == UInt8(ascii: " ") || bytes[next] == UInt8(ascii: "\t") { next += 1 }
                    guard beginsKey(bytes[next]) else { return line }
                }
                depth += 1
                lineStart = false
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                depth = max(0, depth - 1)
                lineStart = false
            default:
                lineStart = false
            }
            index += 1
        }
        return nil
    }

    private static func beginsKey(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"), UInt8(ascii: "\""), UInt8(ascii: "'"), UInt8(ascii: "]"):
            true
        default:
            false
        }
    }

    /// Skips the string that opens at `index` (basic or literal, one line or multi-line); a
    /// one-line string ends at its line's end at the latest (the newline is left to the caller).
    private static func skipString(_ bytes: [UInt8], _ index: inout Int, _ line: inout Int) {
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
