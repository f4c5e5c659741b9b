import Foundation
import SavingsCore
import Testing
@testable import SavingsStore

/// `ImportReader` reads a file on its own thread: the writer must see what reading the file in
/// place gave, in the same order, and must never wait on a reader that goes on without it.
@Suite(.timeLimit(.minutes(1))) struct ImportReaderTests {
    let utc = TimeZone(identifier: "UTC")!
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    func write(_ text: String) throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("reader-\(UUID().uuidString).csv").path
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func rows(_ path: String) -> CSVFileRows {
        CSVFileRows(file: .path(path), rules: nil, now: now, timeZone: utc)
    }

    /// What the writer is given of a row: its line, and its key or its problem.
    func describe(_ row: Result<ImportRow, CSVImportResult.Problem>, _ key: ImportChunk.Key?) -> String {
        switch row {
        case .failure(let problem): return "\(problem.line) problem \(problem.reason)"
        case .success(.row(let row, _, _, _)):
            let entry = ImportChunk.Entry(row: row, key: key!)
            return "\(row.line) \(row.dateText) \(row.amountText) \(entry.key) \(entry.contentKeyed)"
        case .success(let other): return "other \(other)"
        }
    }

    /// The rows read in place, one after the other, keyed in the same order.
    func inPlace(_ path: String) -> (rows: [String], error: String?) {
        var keyer = RowKeyer(expected: 0, directory: NSTemporaryDirectory())
        var seen: [String] = []
        do {
            try rows(path).forEach { parsed in
                var key: ImportChunk.Key?
                if case .success(.row(let row, _, _, _)) = parsed { key = try keyer.key(row) }
                seen.append(describe(parsed, key))
            }
            return (seen, nil)
        } catch {
            return (seen, "\(error)")
        }
    }

    func throughReader(_ path: String) -> (rows: [String], error: String?) {
        var seen: [String] = []
        do {
            try ImportReader.forEach(rows(path), directory: NSTemporaryDirectory()) { seen.append(describe($0.row, $0.key)) }
            return (seen, nil)
        } catch {
            return (seen, "\(error)")
        }
    }

    /// Many batches' worth of rows, with bad rows, identical rows (numbered by their order) and
    /// rows with their own external_id (one of them its row's content key).
    @Test func theWriterSeesWhatReadingInPlaceGives() throws {
        var lines = ["date,amount,note,external_id"]
        for index in 0..<12_000 {
            switch index % 7 {
            case 0: lines.append("2026-01-0\(index % 9 + 1),1,same,")
            case 1: lines.append("2026-02-01,\(index).5,own id,id-\(index % 500)")
            case 2 where index % 3 == 0: lines.append("2026-02-30,1,no such day,")
            case 3: lines.append("2026-03-01,2.25,csv,\(TransactionCSVRow.contentKey(TransactionCSVRow.contentHash(dateText: "2026-03-01T00:00:00.000Z", amountText: "2.25", note: "csv")))")
            default: lines.append("2026-04-\(index % 28 + 1 < 10 ? "0" : "")\(index % 28 + 1),-\(index),row \(index),")
            }
        }
        let path = try write(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let expected = inPlace(path), read = throughReader(path)
        #expect(expected.error == nil && read.error == nil)
        #expect(expected.rows.count == 12_000)
        #expect(read.rows == expected.rows)
        #expect(read.rows.contains { $0.hasSuffix("-3 false") }, "identical rows are numbered")
        #expect(read.rows.contains { $0.contains("problem") })
    }

    /// A failure of the file itself (a field too long) comes after every row before it, as in place.
    @Test func aFailureOfTheFileComesAfterTheRowsBeforeIt() throws {
        var lines = ["date,amount,note"]
        lines += (0..<3000).map { "2026-01-02,\($0),row \($0)" }
        lines.append("2026-01-02,1," + String(repeating: "x", count: CSVTokenizer.maxFieldBytes + 1))
        lines += (0..<3000).map { "2026-01-03,\($0),after \($0)" }
        let path = try write(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let expected = inPlace(path), read = throughReader(path)
        #expect(expected.error != nil && expected.error == read.error)
        #expect(read.rows == expected.rows)
        #expect(read.rows.count >= 3000)
    }

    /// A writer that stops (its body throws) gets its own error back at once, the rows after
    /// the one that threw unseen; the reader is stopped and waited for.
    @Test func aWriterThatStopsStopsTheReader() throws {
        struct Enough: Error {}
        let lines = ["date,amount,note"] + (0..<200_000).map { "2026-01-02,\($0),row \($0)" }
        let path = try write(lines.joined(separator: "\n") + "\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        var seen = 0
        #expect(throws: Enough.self) {
            try ImportReader.forEach(rows(path), directory: NSTemporaryDirectory()) { _ in
                seen += 1
                if seen == 10 { throw Enough() }
            }
        }
        #expect(seen == 10)
    }

    /// A sender ahead of its receiver waits once `capacity` batches are queued, and its next
    /// send fails once the receiver stops: it never reads on alone.
    @Test func theSenderWaitsAndStopsWithTheReceiver() throws {
        let handoff = Handoff<Int>(capacity: 2)
        let sent = SentCount()
        let sender = Thread {
            do {
                for batch in 0..<100 {
                    try handoff.send([batch])
                    sent.add()
                }
                handoff.finish(nil)
            } catch {
                handoff.finish(error)
            }
        }
        sender.start()
        #expect(try handoff.receive() == [0])
        // The sender fills the queue again, then waits for room.
        var waited = 0
        while sent.value < 3, waited < 5000 {  // at most 5 s: a sender that never sends fails below
            usleep(1000)
            waited += 1
        }
        usleep(20_000)
        #expect(sent.value == 3)
        handoff.stopAndWait()
        #expect(sent.value == 3)
    }

    /// The receiver gets every batch sent, then the sender's error.
    @Test func batchesComeBeforeTheSendersError() throws {
        struct Broken: Error {}
        let handoff = Handoff<Int>(capacity: 4)
        try handoff.send([1, 2])
        try handoff.send([3])
        handoff.finish(Broken())
        #expect(try handoff.receive() == [1, 2])
        #expect(try handoff.receive() == [3])
        #expect(throws: Broken.self) { try handoff.receive() }
        let done = Handoff<Int>(capacity: 1)
        done.finish(nil)
        #expect(try done.receive() == nil)
    }
}

/// A count shared between threads.
private final class SentCount: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    var value: Int { lock.withLock { count } }
    func add() { lock.withLock { count += 1 } }
}
