import SavingsWeb

/// `multipart`: a form with a file as the browser's import sends it to savings-web. The
/// input's first line is the `Content-Type` header's value, the rest the body. Whatever it
/// is, the parser ends; parsed, each part's content lies inside the body, holds no delimiter
/// of its boundary, and there are no more parts than the bound.
enum MultipartTarget {
    static let target = FuzzTarget("multipart", run: run)

    static func run(_ input: UnsafeRawBufferPointer) {
        let bytes = Array(input)
        let newline = bytes.firstIndex(of: 0x0A) ?? bytes.count
        let header = String(decoding: bytes[..<newline], as: UTF8.self)
        let body = newline < bytes.count ? Array(bytes[(newline + 1)...]) : []
        guard let boundary = Multipart.boundary(contentType: header) else { return }
        guard let form = try? Multipart(body, boundary: boundary) else { return }
        if form.parts.count > Multipart.maxParts { fatalError("multipart: \(form.parts.count) parts") }
        let delimiter = Array("\r\n--\(boundary)".utf8)
        for part in form.parts {
            if part.content.startIndex < 0 || part.content.endIndex > body.count { fatalError("multipart: a part outside the body") }
            if contains(Array(part.content), delimiter) { fatalError("multipart: a part holds its delimiter") }
        }
    }

    private static func contains(_ haystack: [UInt8], _ needle: [UInt8]) -> Bool {
        guard haystack.count >= needle.count else { return false }
        for start in 0...(haystack.count - needle.count) where haystack[start..<(start + needle.count)].elementsEqual(needle) { return true }
        return false
    }
}
