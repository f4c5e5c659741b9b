import Foundation
import SavingsRPC
import Testing

/// An import from the browser (a file sent as multipart/form-data, its preset found from the
/// header, a dry run as tables, then confirmed) and the backup and export downloads, driven
/// by HTTP as a browser without JavaScript would and checked over the socket.
extension WebTests {
    /// A form with a file, as a browser sends it.
    static func multipart(_ fields: [(String, String)], file: (name: String, filename: String, bytes: [UInt8]), boundary: String) -> [UInt8] {
        var body: [UInt8] = []
        for (name, value) in fields {
            body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(name)\"\r\n\r\n\(value)\r\n".utf8)
        }
        body += Array("--\(boundary)\r\nContent-Disposition: form-data; name=\"\(file.name)\"; filename=\"\(file.filename)\"\r\nContent-Type: text/csv\r\n\r\n".utf8)
        body += file.bytes + Array("\r\n--\(boundary)--\r\n".utf8)
        return body
    }

    static func sendFile(_ session: Session, fields: [(String, String)], filename: String, bytes: [UInt8], csrf: String? = nil) throws -> Answer {
        let token = try csrf ?? WebTests.csrf(in: try session.get("/import").body)
        let boundary = "----WebKitFormBoundary7MA4YWxkTrZu0gW"
        return try WebTests.send(port: session.web.port, "/import", method: "POST",
                                 headers: ["Cookie": session.cookie, "Origin": "http://127.0.0.1:\(session.web.port)"],
                                 bytes: multipart([("csrf", token)] + fields, file: ("file", filename, bytes), boundary: boundary),
                                 contentType: "multipart/form-data; boundary=\(boundary)", seconds: 10)
    }

    /// The hidden fields of the form posting to `action`, as a urlencoded body.
    static func hiddenFields(_ page: String, action: String) throws -> String {
        let start = try #require(page.range(of: "action=\"\(action)\""), "no form to \(action) in \(page)")
        let form = page[start.upperBound...].prefix { _ in true }
        let end = form.range(of: "</form>").map { form[..<$0.lowerBound] } ?? form
        return end.matches(of: /<input type="hidden" name="([^"]+)" value="([^"]*)">/)
            .filter { $0.1 != "csrf" }
            .map { "\($0.1)=\(WebTests.decodeEntities(String($0.2)).addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? "")" }
            .joined(separator: "&")
    }

    static func decodeEntities(_ text: String) -> String {
        text.replacingOccurrences(of: "&quot;", with: "\"").replacingOccurrences(of: "&#39;", with: "'")
            .replacingOccurrences(of: "&lt;", with: "<").replacingOccurrences(of: "&gt;", with: ">").replacingOccurrences(of: "&amp;", with: "&")
    }

    @Test func aFileIsCheckedThenImportedFromThePage() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let bank = try #require(try daemon.call("asset.get", ["asset": "Bank"])["id"]?.stringValue)
        let session = try Session(daemon)
        let form = try session.get("/import")
        #expect(form.status == 200 && form.body.contains("enctype=\"multipart/form-data\"") && form.body.contains("Download a backup"))

        let csv = Array("date,amount,note\n2026-01-05,100.50,Salary\n2026-01-07,-20,Groceries <b>\n".utf8)
        let checked = try Self.sendFile(session, fields: [("rules", "detect"), ("asset", bank)], filename: "bank.csv", bytes: csv)
        #expect(checked.status == 200, "\(checked.body)")
        #expect(checked.body.contains("2 rows: 2 to import, 0 already present, 0 skipped."), "\(checked.body)")
        #expect(checked.body.contains("Groceries &lt;b&gt;") && checked.body.contains(">100.5<"), "\(checked.body)")
        #expect(try daemon.call("tx.list", ["asset": "Bank"])["transactions"]?.arrayValue?.isEmpty == true, "a check writes nothing")

        let confirm = try Self.hiddenFields(checked.body, action: "/import/confirm")
        let imported = try session.post("/import/confirm", confirm)
        #expect(imported.status == 303 && imported.headers["location"]?.hasPrefix("/import?already=0&imported=2&skipped=0&name=bank.csv") == true,
                "\(imported.headers)")
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "80.50")
        #expect(try session.get(imported.headers["location"] ?? "").body.contains("Imported 2 rows of “bank.csv”; 0 already present, 0 skipped."))
        // Imported, the file is no longer kept: confirming again imports nothing twice.
        let again = try session.post("/import/confirm", confirm)
        #expect(again.status == 410 && again.body.contains("pick it again"), "\(again.body)")
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "80.50")

        // The same file a second time: nothing new, no Import button.
        let second = try Self.sendFile(session, fields: [("rules", "detect"), ("asset", bank)], filename: "bank.csv", bytes: csv)
        #expect(second.body.contains("0 to import, 2 already present") && second.body.contains("Nothing new to import")
                && !second.body.contains("action=\"/import/confirm\""), "\(second.body)")

        // A refused file: the daemon's words, and a next step for a browser.
        let wrong = try Self.sendFile(session, fields: [("rules", "detect"), ("asset", bank)], filename: "odd.csv", bytes: Array("when,how much\n1,2\n".utf8))
        #expect(wrong.status == 422 && wrong.body.contains("role=\"alert\"") && !wrong.body.contains("savingsctl"), "\(wrong.body)")
        // A file with problems: the good rows may go in alone.
        let bad = Array("date,amount\n2026-02-01,10\n2026-02-02,abc\n".utf8)
        let partial = try Self.sendFile(session, fields: [("rules", ""), ("asset", bank)], filename: "bad.csv", bytes: bad)
        #expect(partial.body.contains("line 3") && partial.body.contains("Import the 1 good rows"), "\(partial.body)")
        let good = try session.post("/import/confirm", try Self.hiddenFields(partial.body, action: "/import/confirm"))
        #expect(good.status == 303 && good.headers["location"]?.contains("imported=1") == true, "\(good.headers)")
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "90.50")
    }

    /// Kraken's ledger export: the preset found from the header, its coins given assets on the
    /// page, the check repeated, then imported.
    @Test func anExchangeExportIsRecognisedAndItsCoinsMapped() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Kraken EUR", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("asset.create", ["name": "Kraken BTC", "currency": "BTC", "kind": "crypto"])
        let eur = try #require(try daemon.call("asset.get", ["asset": "Kraken EUR"])["id"]?.stringValue)
        let btc = try #require(try daemon.call("asset.get", ["asset": "Kraken BTC"])["id"]?.stringValue)
        let sample = try [UInt8](Data(contentsOf: RealExportTests.samples.appendingPathComponent("kraken-ledgers/11-columns.csv")))
        let session = try Session(daemon)
        let checked = try Self.sendFile(session, fields: [("rules", "detect"), ("asset", "")], filename: "ledgers.csv", bytes: sample)
        #expect(checked.status == 200 && checked.body.contains("Read as: Kraken"), "\(checked.body)")
        #expect(checked.body.contains("Coins without an asset") && checked.body.contains("name=\"map.XXBT\"") && checked.body.contains("name=\"map.ZEUR\""),
                "\(checked.body)")
        let recheck = try Self.hiddenFields(checked.body, action: "/import/check") + "&map.XXBT=\(btc)&map.ZEUR=\(eur)"
        let mapped = try session.post("/import/check", recheck)
        #expect(mapped.status == 200 && mapped.body.contains("5 to import") && !mapped.body.contains("Coins without an asset"), "\(mapped.body)")
        let done = try session.post("/import/confirm", try Self.hiddenFields(mapped.body, action: "/import/confirm"))
        #expect(done.status == 303, "\(done.body)")
        #expect(try daemon.call("asset.get", ["asset": "Kraken EUR"])["balance"] == "498.87")
        #expect(try daemon.call("asset.get", ["asset": "Kraken BTC"])["balance"]?.stringValue.flatMap { Decimal(string: $0) } == Decimal(string: "0.00195"))
    }

    /// Binance's deposit and withdrawal histories share a header: the page asks which it is.
    @Test func aSharedHeaderIsAskedAbout() throws {
        let daemon = try DaemonProcess()
        let sample = try [UInt8](Data(contentsOf: RealExportTests.samples.appendingPathComponent("binance-deposits/old.csv")))
        let session = try Session(daemon)
        let asked = try Self.sendFile(session, fields: [("rules", "detect"), ("asset", "")], filename: "deposits.csv", bytes: sample)
        #expect(asked.status == 200 && asked.body.contains("Which file is “deposits.csv”?") && asked.body.contains("value=\"binance-deposits\""),
                "\(asked.body)")
        let chosen = try session.post("/import/check", try Self.hiddenFields(asked.body, action: "/import/check") + "&rules=binance-deposits")
        #expect(chosen.status == 200 && chosen.body.contains("Read as: Binance"), "\(chosen.body)")
    }

    /// The form with a file holds to the security model: no token, no file taken; a body
    /// that is not multipart as it says, refused; past the size, 413; elsewhere, a form's 64 KiB.
    @Test func aFileFormIsGuardedAndBounded() throws {
        let daemon = try DaemonProcess()
        let session = try Session(daemon)
        let forged = try Self.sendFile(session, fields: [("rules", "detect")], filename: "x.csv", bytes: Array("date,amount\n".utf8), csrf: "0")
        #expect(forged.status == 403, "\(forged.body)")
        // Found in review: a file was read (32 MiB) before the cookie was looked at; now a
        // stranger's file is refused before its body.
        let stranger = try WebTests.send(port: session.web.port, "/import", method: "POST", headers: ["Origin": "http://127.0.0.1:\(session.web.port)"],
                                         bytes: Self.multipart([], file: ("file", "a.csv", [UInt8](repeating: 0x31, count: 33 * 1024 * 1024)), boundary: "b"),
                                         contentType: "multipart/form-data; boundary=b", seconds: 10)
        #expect(stranger.status == 403, "\(stranger.status)")
        let broken = try WebTests.send(port: session.web.port, "/import", method: "POST",
                                       headers: ["Cookie": session.cookie, "Origin": "http://127.0.0.1:\(session.web.port)"],
                                       bytes: Array("--x\r\nno header end".utf8), contentType: "multipart/form-data; boundary=x")
        #expect(broken.status == 400 && broken.headers["content-security-policy"] != nil, "\(broken.body)")
        let huge = [UInt8](repeating: 0x31, count: 33 * 1024 * 1024)
        let tooLarge = try Self.sendFile(session, fields: [("rules", "detect")], filename: "big.csv", bytes: huge)
        #expect(tooLarge.status == 413, "\(tooLarge.status)")
        let elsewhere = try WebTests.send(port: session.web.port, "/saved", method: "POST",
                                          headers: ["Cookie": session.cookie, "Origin": "http://127.0.0.1:\(session.web.port)"],
                                          bytes: Self.multipart([], file: ("file", "a.csv", [UInt8](repeating: 0x31, count: 100 * 1024)), boundary: "b"),
                                          contentType: "multipart/form-data; boundary=b")
        #expect(elsewhere.status == 413)
    }

    /// A backup and an export, downloaded whole, as the daemon makes them.
    @Test func aBackupAndAnExportAreDownloaded() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        let session = try Session(daemon)
        let backup = try session.get("/download/backup")
        #expect(backup.status == 200 && backup.headers["content-type"] == "application/vnd.sqlite3")
        #expect(backup.headers["content-disposition"]?.hasPrefix("attachment; filename=\"savings-backup-") == true)
        #expect(backup.bytes.starts(with: Array("SQLite format 3\0".utf8)), "\(backup.bytes.prefix(16))")
        #expect(backup.headers["content-length"].flatMap(Int.init) == backup.bytes.count && backup.bytes.count > 4096)
        let export = try session.get("/download/export")
        #expect(export.status == 200 && export.headers["content-disposition"]?.contains(".json\"") == true)
        let document = try JSONParser.parse(export.bytes)
        #expect(document["goals"]?.arrayValue?.first?["name"] == "Bike", "\(export.body.prefix(300))")
        // Without the session cookie there is nothing to download.
        #expect(try WebTests.send(port: session.web.port, "/download/backup").status == 403)
    }
}
