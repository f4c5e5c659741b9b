/// A single JSON-RPC call in its plainest form, read straight from the line's bytes without
/// building its JSON value: an object of `jsonrpc` ("2.0"), `method` (a string without
/// escapes), `id` (an integer or an ASCII string without escapes; present) and at most an
/// empty `params` object, each once. This is what a health check or a status bar sends.
///
/// Anything else — escapes, other ids, parameters, unknown or repeated members, malformed
/// input — is not a plain request (nil), and the line takes the full parser's path, which
/// answers it or reports its error exactly as it always did.
struct PlainRequest {
    /// The id's JSON text as it came (its quotes included), which is what the full path
    /// writes back for such an id.
    var id: Range<Int>
    var method: String

    static func scan(_ bytes: UnsafeRawBufferPointer) -> PlainRequest? {
        var reader = Reader(bytes: bytes)
        reader.skipWhitespace()
        guard reader.take(UInt8(ascii: "{")) else { return nil }
        var id: Range<Int>?, method: String?, jsonrpc = false, params = false
        reader.skipWhitespace()
        if reader.take(UInt8(ascii: "}")) { return nil }
        repeat {
            reader.skipWhitespace()
            guard let name = reader.plainString() else { return nil }
            reader.skipWhitespace()
            guard reader.take(UInt8(ascii: ":")) else { return nil }
            reader.skipWhitespace()
            switch Member(bytes[name]) {
            case .jsonrpc?:
                guard !jsonrpc, let value = reader.plainString(), Member.isVersion(bytes[value]) else { return nil }
                jsonrpc = true
            case .id?:
                guard id == nil, let value = reader.plainID() else { return nil }
                id = value
            case .method?:
                guard method == nil, let value = reader.plainString() else { return nil }
                method = String(decoding: bytes[value], as: UTF8.self)
            case .params?:
                guard !params, reader.take(UInt8(ascii: "{")) else { return nil }
                reader.skipWhitespace()
                guard reader.take(UInt8(ascii: "}")) else { return nil }
                params = true
            case nil:
                return nil
            }
            reader.skipWhitespace()
        } while reader.take(UInt8(ascii: ","))
        guard reader.take(UInt8(ascii: "}")) else { return nil }
        reader.skipWhitespace()
        guard reader.atEnd, jsonrpc, let id, let method else { return nil }
        return PlainRequest(id: id, method: method)
    }

    private enum Member {
        case jsonrpc, id, method, params

        init?(_ name: Slice<UnsafeRawBufferPointer>) {
            switch name.count {
            case 2 where name.elementsEqual("id".utf8): self = .id
            case 6 where name.elementsEqual("method".utf8): self = .method
            case 6 where name.elementsEqual("params".utf8): self = .params
            case 7 where name.elementsEqual("jsonrpc".utf8): self = .jsonrpc
            default: return nil
            }
        }

        static func isVersion(_ value: Slice<UnsafeRawBufferPointer>) -> Bool { value.elementsEqual("2.0".utf8) }
    }

    private struct Reader {
        let bytes: UnsafeRawBufferPointer
        var index = 0

        var atEnd: Bool { index == bytes.count }

        mutating func skipWhitespace() {
            while index < bytes.count, bytes[index] == 0x20 || bytes[index] == 0x09 || bytes[index] == 0x0A || bytes[index] == 0x0D {
                index += 1
            }
        }

        mutating func take(_ byte: UInt8) -> Bool {
            guard index < bytes.count, bytes[index] == byte else { return false }
            index += 1
            return true
        }

        /// A string of printable ASCII without escapes; the range of its contents.
        mutating func plainString() -> Range<Int>? {
            guard take(UInt8(ascii: "\"")) else { return nil }
            let start = index
            while index < bytes.count, bytes[index] != UInt8(ascii: "\"") {
                guard (0x20...0x7E).contains(bytes[index]), bytes[index] != UInt8(ascii: "\\") else { return nil }
                index += 1
            }
            guard index < bytes.count else { return nil }
            index += 1
            return start..<index - 1
        }

        /// A plain string or an integer without leading zeros (at most 18 digits); the range of
        /// its JSON text.
        mutating func plainID() -> Range<Int>? {
            let start = index
            if index < bytes.count, bytes[index] == UInt8(ascii: "\"") {
                guard plainString() != nil else { return nil }
                return start..<index
            }
            _ = take(UInt8(ascii: "-"))
            let digits = index
            while index < bytes.count, (0x30...0x39).contains(bytes[index]) { index += 1 }
            let count = index - digits
            guard count > 0, count <= 18, count == 1 || bytes[digits] != UInt8(ascii: "0") else { return nil }
            // A fraction or an exponent: the full path keeps such a number as written, but it is
            // not plain.
            if index < bytes.count, bytes[index] == UInt8(ascii: ".") || bytes[index] | 0x20 == UInt8(ascii: "e") { return nil }
            return start..<index
        }
    }
}
