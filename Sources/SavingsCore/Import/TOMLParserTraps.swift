/// Text toml++ cannot read, found before it sees it. toml++ 3 (under TOMLKit) picks a value's
/// type from a first look at its characters, and at a few points assumes what that look
/// promised rather than checking it; those assumptions are asserts, in every build (SwiftPM does
/// not define NDEBUG for C++), so such a text aborted the daemon: `[!]` (three bytes) or
/// `a = 1979-05-27t:`. Each trap found by `savings-fuzz rules` is refused here:
///
/// - a table header that does not begin with a key: after the `[` (or `[[`) first on a line
///   outside strings, comments, arrays and inline tables, and any spaces, something other than a
///   bare key's letter, digit, `_` or `-`, a quote, or `]` (which toml++ refuses properly). No
///   valid TOML has one.
/// - a date followed by `T` (or `t`) and not by the time's first digit (`1979-05-27T:00`). Valid
///   TOML has this only as a bare key shaped like a date and a word (`2024-01-01t-x = …`), which
///   no rules file names.
/// - a value shaped like a date (ten characters, not counting `_`, with `-` fifth and eighth)
///   followed by a space and a single digit (`1979-05-27 1`): toml++ then looks further for a
///   time and assumes more follows. A time after a space has two digits, so no valid TOML has one.
/// - a `}` where an array expects a value: after its `[` or a `,` (blanks, line breaks and
///   comments between), as in `x = [}` or `x = [1,}`. No valid TOML has one.
///
/// Strings and comments are skipped as `TOMLNesting` skips them.
public enum TOMLParserTraps {
    /// The line of the first trap and what it is, or nil.
    public static func first(in text: String) -> (line: Int, reason: String)? {
        var bytes = Array(text.utf8)
        bytes.append(0x0A)
        var line = 1
        /// The brackets open: `h` a table header's, `[` an array's, `{` an inline table's.
        var open: [UInt8] = []
        var lineStart = true
        /// Whether an array expects a value here (after its `[` or a `,`).
        var valueDue = false
        // toml++ skips a UTF-8 byte order mark: the first line starts after it.
        var index = bytes.starts(with: [0xEF, 0xBB, 0xBF]) ? 3 : 0
        while index < bytes.count {
            let byte = bytes[index]
            switch byte {
            case UInt8(ascii: "\""), UInt8(ascii: "'"):
                TOMLNesting.skipString(bytes, &index, &line)
                lineStart = false
                valueDue = false
                continue
            case UInt8(ascii: "#"):
                while bytes[index] != 0x0A { index += 1 }
                continue
            case 0x0A:
                line += 1
                lineStart = true
            case UInt8(ascii: " "), UInt8(ascii: "\t"), 0x0D:
                break
            case UInt8(ascii: "[") where open.isEmpty && lineStart:
                var next = index + 1
                open.append(UInt8(ascii: "h"))
                if bytes[next] == UInt8(ascii: "[") {
                    open.append(UInt8(ascii: "h"))
                    index = next
                    next += 1
                }
                while bytes[next] == UInt8(ascii: " ") || bytes[next] == UInt8(ascii: "\t") { next += 1 }
                guard beginsKey(bytes[next]) || bytes[next] == UInt8(ascii: "]") else {
                    return (line, "a table header must begin with a key ([name] or [[name]])")
                }
                lineStart = false
            case UInt8(ascii: "["), UInt8(ascii: "{"):
                open.append(byte)
                valueDue = byte == UInt8(ascii: "[")
                lineStart = false
            case UInt8(ascii: "]"), UInt8(ascii: "}"):
                if byte == UInt8(ascii: "}"), valueDue { return (line, "an array holds a '}' where a value belongs") }
                if !open.isEmpty { open.removeLast() }
                valueDue = false
                lineStart = false
            case UInt8(ascii: ","):
                valueDue = open.last == UInt8(ascii: "[")
                lineStart = false
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                if index == 0 || !isBare(bytes[index - 1]) {
                    if dateWithoutTime(bytes, at: index) { return (line, "a date's time must follow its T (1979-05-27T07:32:00)") }
                    if dateThenOneDigit(bytes, at: index) { return (line, "a date's time must have two-digit hours (1979-05-27 07:32:00)") }
                }
                valueDue = false
                lineStart = false
            default:
                valueDue = false
                lineStart = false
            }
            index += 1
        }
        return nil
    }

    /// `YYYY-MM-DD` then `T` or `t` then anything but a digit, at `index`.
    private static func dateWithoutTime(_ bytes: [UInt8], at index: Int) -> Bool {
        let shape = Array("0000-00-00T".utf8)
        guard index + shape.count < bytes.count else { return false }
        for (offset, expected) in shape.enumerated() {
            let byte = bytes[index + offset]
            switch expected {
            case UInt8(ascii: "0"): guard isDigit(byte) else { return false }
            case UInt8(ascii: "T"): guard byte == UInt8(ascii: "T") || byte == UInt8(ascii: "t") else { return false }
            default: guard byte == expected else { return false }
            }
        }
        return !isDigit(bytes[index + shape.count])
    }

    /// Ten characters up to a space or the end of the value (`_` not counted), `-` the fifth and
    /// eighth, then a space, one digit and no other.
    private static func dateThenOneDigit(_ bytes: [UInt8], at index: Int) -> Bool {
        var shape: [UInt8] = []
        var next = index
        while next < bytes.count, !ends(bytes[next]), shape.count <= 10 {
            if bytes[next] != UInt8(ascii: "_") { shape.append(bytes[next]) }
            next += 1
        }
        guard shape.count == 10, shape[4] == UInt8(ascii: "-"), shape[7] == UInt8(ascii: "-"), next + 2 < bytes.count else { return false }
        return bytes[next] == UInt8(ascii: " ") && isDigit(bytes[next + 1]) && !isDigit(bytes[next + 2])
    }

    /// Ends a value as toml++ sees it: blanks, line breaks, `]`, `}`, `,`, `#` (and, to be safe, any non-ASCII byte).
    private static func ends(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: " "), UInt8(ascii: "\t"), 0x0A, 0x0B, 0x0C, 0x0D, UInt8(ascii: "]"), UInt8(ascii: "}"), UInt8(ascii: ","), UInt8(ascii: "#"):
            true
        default:
            byte >= 0x80
        }
    }

    private static func isDigit(_ byte: UInt8) -> Bool { byte >= UInt8(ascii: "0") && byte <= UInt8(ascii: "9") }

    /// A bare key's character: a letter, a digit, `_` or `-`.
    private static func isBare(_ byte: UInt8) -> Bool {
        switch byte {
        case UInt8(ascii: "A")...UInt8(ascii: "Z"), UInt8(ascii: "a")...UInt8(ascii: "z"), UInt8(ascii: "0")...UInt8(ascii: "9"),
             UInt8(ascii: "_"), UInt8(ascii: "-"):
            true
        default:
            false
        }
    }

    private static func beginsKey(_ byte: UInt8) -> Bool {
        isBare(byte) || byte == UInt8(ascii: "\"") || byte == UInt8(ascii: "'")
    }

    /// Skips the string that opens at `index` (basic or literal, one line or multi-line); a
    /// one-line string ends at its line's end at the latest (the newline is left to the caller).
}
