import Foundation
import SavingsCore
import SavingsRPC

/// The fields a linked service's answer carries, read as hostile input whatever the service
/// (issue 50): amounts as plain decimals only, ids of a bounded alphabet, times in range, and
/// text meant for a person stripped of control characters and bounded.
enum ServiceText {
    /// A decimal as the services write amounts (`"0.00150000"`, `"-33293.43"`): an optional
    /// minus, digits, an optional fraction; at most 40 characters, exact. No exponent, no
    /// plus, no spaces: anything else is not an amount the service documents.
    static func decimal(_ value: JSONValue?) -> Decimal? {
        guard let text = value?.stringValue, (1...40).contains(text.utf8.count) else { return nil }
        var bytes = Array(text.utf8)[...]
        if bytes.first == UInt8(ascii: "-") { bytes = bytes.dropFirst() }
        let digits = bytes.split(separator: UInt8(ascii: "."), maxSplits: 1, omittingEmptySubsequences: false)
        guard let whole = digits.first, !whole.isEmpty, digits.count <= 2, digits.last?.isEmpty == false,
              digits.allSatisfy({ $0.allSatisfy { (0x30...0x39).contains($0) } }) else { return nil }
        return try? Amount.parse(text)
    }

    /// An id of letters, digits and `-`, `_`, `.`, `:` (UUIDs, hex, Binance's numeric ids), 1-128 long.
    static func id(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue, isID(text) else { return nil }
        return text
    }

    static func isID(_ text: String) -> Bool {
        (1...128).contains(text.utf8.count) && text.utf8.allSatisfy {
            (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || [0x2D, 0x5F, 0x2E, 0x3A].contains($0)
        }
    }

    /// Printable ASCII without spaces, 1-`limit` long (a code, a type, a cursor's path).
    static func token(_ value: JSONValue?, limit: Int = 64) -> String? {
        guard let text = value?.stringValue, (1...limit).contains(text.utf8.count), text.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            return nil
        }
        return text
    }

    /// Text for a person (a note, the service's own error message): control and format
    /// characters removed, runs of spaces made one, at most `limit` characters; nil when
    /// nothing is left.
    static func sanitized(_ text: String?, limit: Int = 200) -> String? {
        guard let text else { return nil }
        var out = String.UnicodeScalarView()
        var count = 0
        var space = false
        for scalar in text.unicodeScalars.prefix(4 * limit) {
            let category = scalar.properties.generalCategory
            if scalar.properties.isWhitespace || [.lineSeparator, .paragraphSeparator].contains(category) {
                space = !out.isEmpty
                continue
            }
            if [.control, .format, .surrogate, .privateUse, .unassigned].contains(category) { continue }
            if space {
                guard count < limit else { break }
                out.append(" ")
                count += 1
                space = false
            }
            guard count < limit else { break }
            out.append(scalar)
            count += 1
        }
        return out.isEmpty ? nil : String(out)
    }

    /// Milliseconds since 1970 as a JSON integer, from 2009 to 2100.
    static func milliseconds(_ value: JSONValue?) -> Date? {
        guard let millis = value?.intValue, (1_230_768_000_000...4_102_444_800_000).contains(millis) else { return nil }
        return Timestamp.date(milliseconds: Int64(millis))
    }

    /// Seconds since 1970 as a JSON integer, from 1970 (exclusive) to 2100.
    static func seconds(_ value: JSONValue?) -> Date? {
        guard let seconds = value?.intValue, (1...4_102_444_800).contains(seconds) else { return nil }
        return Date(timeIntervalSince1970: TimeInterval(seconds))
    }

    /// An ISO 8601 instant (`2015-03-11T13:13:35-07:00`, `2024-05-01T10:00:00.123Z`), at most
    /// 40 characters, from 2009 to 2100.
    static func iso8601(_ value: JSONValue?) -> Date? {
        guard let text = value?.stringValue, (20...40).contains(text.utf8.count),
              text.utf8.allSatisfy({ (0x2B...0x3A).contains($0) || $0 == 0x54 || $0 == 0x5A }),
              let date = try? Timestamp.parse(text, field: "time") else { return nil }
        return (1_230_768_000...4_102_444_800).contains(date.timeIntervalSince1970) ? date : nil
    }

    /// A query parameter percent-encoded: ASCII letters, digits and `-._~` stay, everything
    /// else is escaped (RFC 3986's unreserved characters).
    static func escape(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }

    private static let unreserved = CharacterSet(charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    /// `yyyy-MM-dd HH:mm:ss` in UTC (Binance's `applyTime`).
    static func utcDateTime(_ value: JSONValue?) -> Date? {
        guard let text = value?.stringValue, text.utf8.count == 19, Array(text.utf8)[10] == 0x20 else { return nil }
        return iso8601(.string(text.replacingOccurrences(of: " ", with: "T") + "Z"))
    }
}
