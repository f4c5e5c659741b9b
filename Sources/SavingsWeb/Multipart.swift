/// A `multipart/form-data` body (RFC 7578) as a browser sends a form with a file: its parts'
/// names, file names and contents. The body is hostile and already bounded in size; the
/// parser bounds the rest (the boundary's length, the number of parts, each part's header)
/// and reads it in one pass without recursion.
public struct Multipart: Sendable {
    public struct Part: Sendable, Equatable {
        public var name: String
        public var filename: String?
        public var content: ArraySlice<UInt8>
    }

    public enum Failure: Error, Equatable, CustomStringConvertible {
        case notMultipart
        case malformed(String)

        public var description: String {
            switch self {
            case .notMultipart: "the form was not sent as multipart/form-data"
            case .malformed(let why): "the form's body is not well formed: \(why)"
            }
        }
    }

    /// The paths that take a file.
    static let paths: Set<String> = ["/import"]
    /// The import's steps that write nothing (the file kept, a dry run shown), answered again
    /// when sent again.
    static let readingPaths: Set<String> = ["/import", "/import/check"]
    /// The largest body read there: a file and the form's few fields.
    static let maxBodyBytes = PendingFiles.maxFileBytes + 64 * 1024

    public static let maxParts = 32
    static let maxHeaderBytes = 8 * 1024

    public var parts: [Part]

    /// The first part named `name`.
    public subscript(name: String) -> Part? { parts.first { $0.name == name } }

    /// A text field's value (nil when absent or not UTF-8).
    public func text(_ name: String) -> String? {
        self[name].flatMap { String(validating: $0.content, as: UTF8.self) }
    }

    /// The boundary a `Content-Type` header names, if it is multipart/form-data (RFC 2046: 1–70
    /// characters, quoted or not).
    public static func boundary(contentType: String?) -> String? {
        guard let contentType else { return nil }
        let parameters = Self.parameters(contentType)
        guard parameters.first?.key.lowercased() == "multipart/form-data",
              let value = parameters.dropFirst().first(where: { $0.key.lowercased() == "boundary" })?.value,
              (1...70).contains(value.utf8.count), value.utf8.allSatisfy({ (0x20...0x7E).contains($0) }) else { return nil }
        return value
    }

    init(parts: [Part]) { self.parts = parts }

    public init(_ body: [UInt8], boundary: String) throws(Failure) {
        let delimiter = Array("--\(boundary)".utf8)
        // The first delimiter: at the start, or after a preamble ending in CRLF.
        guard var position = Self.find(delimiter, in: body, from: 0), position == 0 || Self.endsWithCRLF(body, at: position) else {
            throw .malformed("no boundary")
        }
        let separator = [0x0D, 0x0A] + delimiter
        var parts: [Part] = []
        position += delimiter.count
        while true {
            // After a delimiter: "--" ends the body; else optional blanks and CRLF.
            if body.count >= position + 2, body[position] == 0x2D, body[position + 1] == 0x2D { break }
            while position < body.count, body[position] == 0x20 || body[position] == 0x09 { position += 1 }
            guard body.count >= position + 2, body[position] == 0x0D, body[position + 1] == 0x0A else {
                throw .malformed("a boundary line without its line end")
            }
            position += 2
            guard parts.count < Self.maxParts else { throw .malformed("more than \(Self.maxParts) fields") }
            let headerLimit = min(body.count, position + Self.maxHeaderBytes)
            // The header ends at an empty line (the boundary line's own line end counts, for none).
            guard let headerEnd = Self.find([0x0D, 0x0A, 0x0D, 0x0A], in: body, from: position - 2, before: headerLimit) else {
                throw .malformed("a field's header longer than \(Self.maxHeaderBytes) bytes, or not ended")
            }
            let header = headerEnd > position ? Array(body[position..<headerEnd]) : []
            let contentStart = headerEnd + 4
            guard let end = Self.find(separator, in: body, from: contentStart) else { throw .malformed("a field without its closing boundary") }
            let (name, filename) = try Self.disposition(header)
            parts.append(Part(name: name, filename: filename, content: body[contentStart..<end]))
            position = end + separator.count
        }
        self.parts = parts
    }

    private static func endsWithCRLF(_ body: [UInt8], at index: Int) -> Bool {
        index >= 2 && body[index - 2] == 0x0D && body[index - 1] == 0x0A
    }

    /// The first occurrence of `needle` in `haystack[from..<before]` (whole), by its first byte.
    static func find(_ needle: [UInt8], in haystack: [UInt8], from start: Int, before limit: Int? = nil) -> Int? {
        let limit = limit ?? haystack.count
        guard let first = needle.first, start >= 0, limit - start >= needle.count else { return nil }
        return haystack.withUnsafeBufferPointer { bytes -> Int? in
            var index = start
            let last = limit - needle.count
            while index <= last {
                guard let hit = bytes[index...last].firstIndex(of: first) else { return nil }
                var matches = true
                for offset in 1..<needle.count where bytes[hit + offset] != needle[offset] {
                    matches = false
                    break
                }
                if matches { return hit }
                index = hit + 1
            }
            return nil
        }
    }

    /// The name and file name of a part's `Content-Disposition: form-data; name="…";
    /// filename="…"` (other header lines are ignored; the name is required).
    static func disposition(_ header: [UInt8]) throws(Failure) -> (name: String, filename: String?) {
        guard let text = String(validating: header, as: UTF8.self) else { throw .malformed("a field's header is not UTF-8") }
        for line in text.split(separator: "\r\n") {
            let pair = line.split(separator: ":", maxSplits: 1)
            guard pair.count == 2, pair[0].trimmingCharacters(in: .whitespaces).lowercased() == "content-disposition" else { continue }
            let parameters = Self.parameters(String(pair[1]))
            guard parameters.first?.key.lowercased() == "form-data", let name = parameters.first(where: { $0.key.lowercased() == "name" })?.value else {
                throw .malformed("a field without a name")
            }
            return (name, parameters.first { $0.key.lowercased() == "filename" }?.value)
        }
        throw .malformed("a field without Content-Disposition")
    }

    /// `form-data; name="a;b"; filename="x.csv"` as (key, value) pairs, the first a bare
    /// word; quotes may hold `;` and backslash-escaped characters.
    static func parameters(_ text: String) -> [(key: String, value: String)] {
        var result: [(key: String, value: String)] = []
        var current = "", quoted = false, escaped = false
        var fields: [String] = []
        for character in text {
            if escaped {
                current.append(character)
                escaped = false
            } else if quoted, character == "\\" {
                escaped = true
            } else if character == "\"" {
                quoted.toggle()
            } else if character == ";", !quoted {
                fields.append(current)
                current = ""
            } else {
                current.append(character)
            }
        }
        fields.append(current)
        for field in fields {
            let pair = field.split(separator: "=", maxSplits: 1).map { $0.trimmingCharacters(in: .whitespaces) }
            guard let key = pair.first, !key.isEmpty else { continue }
            result.append((key, pair.count > 1 ? pair[1] : ""))
        }
        return result
    }
}
