import Testing
@testable import SavingsWeb

/// multipart/form-data as browsers send it (RFC 7578), and what is refused.
@Suite struct MultipartTests {
    static func body(_ text: String) -> [UInt8] { Array(text.utf8) }

    @Test func aBrowsersFormWithAFileIsRead() throws {
        let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
        #expect(Multipart.boundary(contentType: "multipart/form-data; boundary=\(boundary)") == boundary)
        #expect(Multipart.boundary(contentType: "Multipart/Form-Data; charset=utf-8; boundary=\"a;b c\"") == "a;b c")
        #expect(Multipart.boundary(contentType: "application/x-www-form-urlencoded") == nil)
        #expect(Multipart.boundary(contentType: "multipart/form-data; boundary=\(String(repeating: "x", count: 71))") == nil)
        #expect(Multipart.boundary(contentType: "multipart/form-data") == nil)

        let file = "date,amount\r\n2026-01-05,1\r\n--not-the-boundary\r\n"
        let form = try Multipart(Self.body("""
            --\(boundary)\r
            Content-Disposition: form-data; name="csrf"\r
            \r
            abc.def\r
            --\(boundary)\r
            Content-Disposition: form-data; name="file"; filename="bank \\"2026\\";.csv"\r
            Content-Type: text/csv\r
            \r
            \(file)\r
            --\(boundary)--\r

            """), boundary: boundary)
        #expect(form.parts.map(\.name) == ["csrf", "file"])
        #expect(form.text("csrf") == "abc.def")
        #expect(form["file"]?.filename == "bank \"2026\";.csv")
        #expect(form["file"].map { Array($0.content) } == Array(file.utf8), "a line like a boundary, but another, is content")
    }

    @Test func anEmptyFieldAndAPreambleAreRead() throws {
        let form = try Multipart(Self.body("ignored\r\n--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\n\r\n--b--"), boundary: "b")
        #expect(form.parts.count == 1 && form["x"]?.content.isEmpty == true)
    }

    @Test func brokenBodiesAreRefused() {
        let cases: [(String, String)] = [
            ("hello", "no boundary"),
            ("--b\r\nContent-Disposition: form-data; name=\"x\"\r\n\r\nvalue without the end", "closing boundary"),
            ("--b\r\nContent-Type: text/plain\r\n\r\nv\r\n--b--", "Content-Disposition"),
            ("--b\r\nContent-Disposition: attachment; name=\"x\"\r\n\r\nv\r\n--b--", "without a name"),
            ("--b\r\nContent-Disposition: form-data; name=\"x\"", "header"),
            ("--bX\r\n", "line end"),
        ]
        for (body, fragment) in cases {
            #expect(throws: Multipart.Failure.self) { try Multipart(Self.body(body), boundary: "b") }
            do {
                _ = try Multipart(Self.body(body), boundary: "b")
            } catch {
                #expect(error.description.contains(fragment), "\(body): \(error)")
            }
        }
    }

    @Test func partsAndHeadersAreBounded() {
        let many = (0...Multipart.maxParts).map { "--b\r\nContent-Disposition: form-data; name=\"f\($0)\"\r\n\r\nv\r\n" }.joined() + "--b--"
        #expect(throws: Multipart.Failure.self) { try Multipart(Self.body(many), boundary: "b") }
        let longHeader = "--b\r\nContent-Disposition: form-data; name=\"x\"\r\nX-Pad: \(String(repeating: "a", count: Multipart.maxHeaderBytes))\r\n\r\nv\r\n--b--"
        #expect(throws: Multipart.Failure.self) { try Multipart(Self.body(longHeader), boundary: "b") }
    }

    /// Found in review: a note with a line end or spaces around it was written again by an edit
    /// that left it alone (a text field drops line ends; the note is sent trimmed).
    @Test func anEditLeavingTheNoteAloneDoesNotSendIt() {
        let form = Form("was_amount=5&was_date=2026-03-04&was_note=%20Rent%0Amarch%20&stamp=2026-03-04T10:00:00.000Z&amount=5&date=2026-03-04&note=Rentmarch")
        #expect(Screens.changes(form, transaction: "t1") == ["transaction": "t1"])
        let changed = Form("was_amount=5&was_date=2026-03-04&was_note=Rent&stamp=2026-03-04T10:00:00.000Z&amount=5&date=2026-03-04&note=Rent%202")
        #expect(Screens.changes(changed, transaction: "t1")["note"] == "Rent 2")
    }
}
