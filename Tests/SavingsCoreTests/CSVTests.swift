import Foundation
import Testing
@testable import SavingsCore

@Suite struct CSVTests {
    func records(_ text: String, chunk: Int = 3) -> [CSVTokenizer.Record] {
        var tokenizer = CSVTokenizer()
        var result: [CSVTokenizer.Record] = []
        let bytes = Array(text.utf8)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            result += tokenizer.feed(bytes[start..<min(start + chunk, bytes.count)])
        }
        if let last = tokenizer.finish() { result.append(last) }
        return result
    }

    /// The same through the byte-buffer path a file read takes (runs of plain bytes at once).
    func bufferRecords(_ text: String, chunk: Int) -> (records: [CSVTokenizer.Record], oversized: Int?) {
        var tokenizer = CSVTokenizer()
        var result: [CSVTokenizer.Record] = []
        let bytes = Array(text.utf8)
        for start in stride(from: 0, to: bytes.count, by: chunk) {
            bytes[start..<min(start + chunk, bytes.count)].withUnsafeBytes { tokenizer.feed($0) { result.append($0) } }
        }
        if let last = tokenizer.finish() { result.append(last) }
        return (result, tokenizer.oversized)
    }

    @Test func theBufferPathReadsWhatTheByteByBytePathReads() {
        let long = String(repeating: "x", count: CSVTokenizer.maxFieldBytes + 10)
        let texts = [
            "date,amount,note\r\n2026-01-01,1.5,\"a, b\"\r\n\n2026-01-02,-2,\"say \"\"hi\"\"\nthere\"\n2026-01-03,3,",
            "a,b\rc,d\r\r\ne,\"\",f\n,,\n\"q\"x,y\n",
            "date,amount,note\n2026-01-01,1,\(long)\n2026-01-02,2,z\n",
            // Runs inside quotes are taken at once too: lines, doubled quotes, a field too long.
            "\"txid\",\"note\"\n\"L1\",\"a\nb,\"\"c\"\"\"\r\n\"L2\",\"\(long)\"\n\"L3\",\"\"\n",
        ]
        for text in texts {
            for chunk in [1, 2, 3, 7, 64, 1000, 1 << 17] {
                var generic = CSVTokenizer()
                var expected: [CSVTokenizer.Record] = []
                let bytes = Array(text.utf8)
                for start in stride(from: 0, to: bytes.count, by: chunk) { expected += generic.feed(bytes[start..<min(start + chunk, bytes.count)]) }
                if let last = generic.finish() { expected.append(last) }
                let (records, oversized) = bufferRecords(text, chunk: chunk)
                #expect(records == expected, "chunk \(chunk)")
                #expect(oversized == generic.oversized, "chunk \(chunk)")
            }
        }
        #expect(bufferRecords(texts[2], chunk: 4096).oversized == 2)
        #expect(bufferRecords(texts[2], chunk: 4096).records[1].fields[2].utf8.count == CSVTokenizer.maxFieldBytes)
    }

    /// The fast trim cuts what Foundation's `.whitespaces` trim cuts, on fields of spaces,
    /// tabs, no-break spaces, control codes and letters in every order.
    @Test func trimmingIsFoundations() {
        let pieces = [" ", "\t", "a", "\u{A0}", "\u{1}", "é", "x y", "\u{2003}", "\n"]
        var generator = SeededGenerator(state: 11)
        for _ in 0..<20_000 {
            let field = (0..<Int(generator.next() % 6)).map { _ in pieces[Int(generator.next() % UInt64(pieces.count))] }.joined()
            #expect(TransactionCSVFormat.trimmed(field) == field.trimmingCharacters(in: .whitespaces), "\(field.debugDescription)")
        }
    }

    @Test func quotesNewlinesAndLineEndingsSurviveAnyChunking() {
        let text = "date,amount,note\r\n2026-01-01,1.5,\"a, b\"\r\n\n2026-01-02,-2,\"say \"\"hi\"\"\nthere\"\n2026-01-03,3,"
        for chunk in [1, 2, 3, 7, 1000] {
            let parsed = records(text, chunk: chunk)
            #expect(parsed.map(\.fields) == [["date", "amount", "note"], ["2026-01-01", "1.5", "a, b"],
                                             ["2026-01-02", "-2", "say \"hi\"\nthere"], ["2026-01-03", "3", ""]], "chunk \(chunk)")
            #expect(parsed.map(\.line) == [1, 2, 4, 6], "chunk \(chunk)")
        }
    }

    @Test func rowsAreValidatedWithReasons() throws {
        let now = try Timestamp.parse("2026-06-01T00:00:00Z", field: "t")
        let utc = TimeZone(identifier: "UTC")!
        var format = try TransactionCSVFormat(header: .init(line: 1, fields: ["\u{FEFF}Date", "AMOUNT", "external_id"]), timeZone: utc, now: now)
        let row = try format.row(.init(line: 2, fields: ["2026-05-01", "12.30", "x"]))
        #expect(row.amount == Decimal(string: "12.3"))
        #expect(row.date == (try Timestamp.parse("2026-05-01T00:00:00Z", field: "t")))
        #expect(row.externalID == "x")
        for fields in [["2026-05-01", "1,5", ""], ["05/01/2026", "1", ""], ["2026-05-01", "0", ""], ["2027-01-01", "1", ""], ["2026-05-01", "1"]] {
            #expect(throws: DomainError.self, "\(fields)") { try format.row(.init(line: 3, fields: fields)) }
        }
        #expect(throws: DomainError.self) { try TransactionCSVFormat(header: .init(line: 1, fields: ["amount"]), timeZone: utc, now: now) }
        #expect(throws: DomainError.self) { try TransactionCSVFormat(header: .init(line: 1, fields: ["date", "amount", "iban"]), timeZone: utc, now: now) }
    }

    /// A format remembers the last row's day: rows read one after another give what each row
    /// read by a fresh format gives, refusals included, in a time zone with a daylight-saving
    /// change among the days.
    @Test func consecutiveRowsGiveWhatEachRowAloneGives() throws {
        let zone = TimeZone(identifier: "Europe/Berlin")!
        let now = try Timestamp.parse("2026-06-01T00:00:00Z", field: "t")
        let header = CSVTokenizer.Record(line: 1, fields: ["date", "amount", "note"])
        var reading = try TransactionCSVFormat(header: header, timeZone: zone, now: now)
        let days = ["2026-03-28", "2026-03-28", "2026-03-29", "2026-03-30", "2026-03-29", "2026-03-29T12:00:00Z", "2026-03-29",
                    "2027-01-01", "2027-01-01", "2026-13-01", "2026-03-30", " 2026-03-30", "2026-03-30 ", "2026-05-31"]
        for (index, day) in days.enumerated() {
            let record = CSVTokenizer.Record(line: index + 2, fields: [day, "1", "n"])
            var alone = try TransactionCSVFormat(header: header, timeZone: zone, now: now)
            switch (Result { try reading.row(record) }, Result { try alone.row(record) }) {
            case (.success(let row), .success(let expected)):
                #expect(row == expected, "\(day)")
                #expect(row.dateText == Timestamp.format(row.date), "\(day)")
            case (.failure(let error as DomainError), .failure(let expected as DomainError)):
                #expect(error.message == expected.message, "\(day)")
            default:
                Issue.record("\(day): read in turn and alone disagree")
            }
        }
    }

    @Test func contentKeysAreStable() throws {
        let date = try Timestamp.parse("2026-05-01T00:00:00Z", field: "t")
        let a = TransactionCSVRow(line: 2, date: date, amount: 5, note: "coffee", externalID: nil)
        var b = a
        b.line = 90
        #expect(a.contentKey == b.contentKey, "the line does not matter")
        b.note = "tea"
        #expect(a.contentKey != b.contentKey)
        #expect(StableHash.hex128("abc") == StableHash.hex128("abc"))
        #expect(StableHash.hex128("abc").count == 32)
        #expect(StableHash.hex((1, 0xabc)) == "0000000000000001" + "0000000000000abc")
        #expect(TransactionCSVRow.contentKey((0xffff_ffff_ffff_ffff, 0), repeat: 2) == "csv-ffffffffffffffff0000000000000000-2")
        // Hashed part by part, the same as the joined text, whatever the characters.
        var row = a
        row.note = "café ☕️ | 日本"
        #expect(row.contentHash == StableHash.lanes("\(row.dateText)|\(row.amountText)|café ☕️ | 日本"))
        row.note = nil
        #expect(row.contentHash == StableHash.lanes("\(row.dateText)|\(row.amountText)|"))
    }

    /// Keys already stored by earlier imports must be found again: the key of a row is pinned
    /// (worked out independently from the hash's definition), whatever way the amount is written.
    @Test func contentKeysArePinned() throws {
        let utc = TimeZone(identifier: "UTC")!
        let now = try Timestamp.parse("2026-06-01T00:00:00Z", field: "t")
        var format = try TransactionCSVFormat(header: .init(line: 1, fields: ["date", "amount", "note"]), timeZone: utc, now: now)
        for amount in ["5", "5.00", "05.0"] {
            #expect(try format.row(.init(line: 2, fields: ["2026-05-01", amount, "coffee"])).contentKey == "csv-ce45f37b8d0db5f4bfa74006f8ff83a5")
        }
        for amount in ["-1234.5", "-1234.50", "-1.2345e3"] {
            let row = try format.row(.init(line: 2, fields: ["2026-05-01", amount, ""]))
            #expect(row.amountText == "-1234.5")
            #expect(row.contentKey == "csv-841e4277b85742e3daa6eb89f302a83a")
        }
    }
}

@Suite struct TimestampFormatTests {
    /// The integer formatter agrees with Foundation's calendar (whole seconds, integer
    /// milliseconds) everywhere, including leap days, century years and before 1970.
    @Test func integerFormattingMatchesFoundation() {
        var random = SeededGenerator(state: 42)
        var instants: [Int64] = [0, -1, 1, 951_782_400_000, 4_107_542_399_999, -62_135_596_800_000, 253_402_300_799_999,
                                 -86_400_000, 1_709_164_800_000, 1_582_934_400_000]
        for _ in 0..<20_000 { instants.append(Int64.random(in: -62_135_596_800_000...253_402_300_799_999, using: &random)) }
        for millis in instants {
            let date = Date(timeIntervalSince1970: TimeInterval(millis) / 1000)
            #expect(Timestamp.format(date) == Timestamp.foundationFormat(millis), "\(millis)")
        }
    }

    /// The integer reading of the stored form agrees with Foundation's parser, and anything
    /// else (invalid days, other shapes) is left to Foundation.
    @Test func integerParsingMatchesFoundation() throws {
        let foundation = Date.ISO8601FormatStyle(includingFractionalSeconds: true)
        var random = SeededGenerator(state: 7)
        for _ in 0..<20_000 {
            let millis = Int64.random(in: -12_212_553_600_000...253_402_300_799_999, using: &random)
            let text = Timestamp.format(Date(timeIntervalSince1970: TimeInterval(millis) / 1000))
            let fast = try #require(Timestamp.canonicalMilliseconds(text), "\(text)")
            #expect(fast == millis, "\(text)")
            #expect(Timestamp.truncatedToMilliseconds(try foundation.parse(text)) == Date(timeIntervalSince1970: TimeInterval(fast) / 1000), "\(text)")
        }
        for text in ["2026-02-29T00:00:00.000Z", "2026-13-01T00:00:00.000Z", "2026-11-22T24:00:00.000Z", "2026-11-22T10:00:00Z",
                     "2026-11-22T10:00:00.000+01:00", "1500-01-01T00:00:00.000Z", "2026-11-2xT10:00:00.000Z",
                     "2026-11-22T10:0/:00.000Z", "2026-11-22T10:00:0:.000Z", "2026-00-10T00:00:00.000Z", "2026-04-31T00:00:00.000Z",
                     "2026-11-00T00:00:00.000Z", "2026-11-22T10:00:60.000Z", "2026-11-22T10:00:00.00 Z"] {
            #expect(Timestamp.canonicalMilliseconds(text) == nil, "\(text)")
        }
        #expect(Timestamp.canonicalMilliseconds("2024-02-29T23:59:59.999Z") == 1_709_251_199_999)
    }
}
