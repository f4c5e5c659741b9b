import Foundation
import SavingsCore

/// Reads an import file on a thread of its own while the writer stores what has been read.
///
/// Reading a row (splitting the line, the date, the amount, its key) is pure work that does not
/// need the database; storing it is SQLite's. One after the other they took 4–5.5 µs a row;
/// reading alone took a quarter of that or more (200 files, 1,000,000 rows: 1.3 s of 4.2–5.6 s). On two cores the reading is done while
/// the writer stores the rows read before, a few thousand rows ahead at most.
///
/// Rows reach `body` in file order, on the caller's thread, as the sequential reading gave them:
/// problems in place, a failure of the file itself (it cannot be read, a field too long) after
/// every row before it. When `body` throws, the reading stops and is waited for before the
/// error goes on, so nothing of the import outlives it.
package enum ImportReader {
    /// A row read, and for a good one its key.
    typealias Read = (row: Result<ImportRow, CSVImportResult.Problem>, key: ImportChunk.Key?)

    /// Rows handed over at a time: few at first, so the writer starts soon, then more.
    static let firstBatchRows = 64
    static let batchRows = 1024
    /// Batches read ahead at most.
    static let batchesAhead = 4

    /// Reads `rows`, keying each good row with a `RowKeyer` (`directory`: where a large count
    /// of identical rows goes), and calls `body` with each.
    static func forEach(_ rows: CSVFileRows, directory: String, _ body: (Read) throws -> Void) throws {
        let handoff = Handoff<Read>(capacity: batchesAhead)
        let reader = Thread {
            var keyer = RowKeyer(expected: rows.file.expectedRows, directory: directory)
            var batch: [Read] = []
            var size = firstBatchRows
            do {
                try rows.forEach { parsed in
                    var key: ImportChunk.Key?
                    if case .success(.row(let row, _, _, _)) = parsed { key = try keyer.key(row) }
                    batch.append((parsed, key))
                    if batch.count >= size {
                        try handoff.send(batch)
                        size = min(size * 2, batchRows)
                        batch = []
                        batch.reserveCapacity(size)
                    }
                }
                if !batch.isEmpty { try handoff.send(batch) }
                handoff.finish(nil)
            } catch is Handoff<Read>.Stopped {
                handoff.finish(nil)
            } catch {
                // The rows read before the failure still go first, as they would in place.
                if !batch.isEmpty { try? handoff.send(batch) }
                handoff.finish(error)
            }
        }
        reader.name = "import-reader"
        reader.start()
        defer { handoff.stopAndWait() }
        while let batch = try handoff.receive() {
            // Each row lent to `body` where it lies, not copied out of the batch first.
            try batch.withUnsafeBufferPointer { rows in
                for index in rows.indices { try body(rows[index]) }
            }
        }
    }
}

extension ImportReader {
    /// The rows of `file` as `tx.import` reads them before it stores any, in file order, each
    /// good one with the external_id it is stored under (the file's own, or its content key
    /// numbered among identical rows). No database: the fuzz target `csv` reads through this.
    package static func rows(_ file: ImportFile, rules: ImportRules?, now: Date, timeZone: TimeZone, directory: String,
                             _ body: (_ row: Result<ImportRow, CSVImportResult.Problem>, _ key: String?) throws -> Void) throws {
        try forEach(CSVFileRows(file: file, rules: rules, now: now, timeZone: timeZone), directory: directory) { read in
            var key: String?
            if let given = read.key, case .success(.row(let row, _, _, _)) = read.row { key = ImportChunk.Entry(row: row, key: given).key }
            try body(read.row, key)
        }
    }
}

/// Keys an import's good rows in file order: a row's own external_id, or its content hash,
/// numbered among the file's identical rows by their order.
struct RowKeyer {
    /// Rows the file likely has (from its size).
    let expected: Int
    /// Where the count of identical rows goes when it is large (beside the database).
    let directory: String
    /// How many rows of this file had each content hash so far (about 11 bytes a row without
    /// an external_id). Two different rows whose hashes share the first 64 bits only number the
    /// second one's key; the same file gives the same keys every time. Made at the first such
    /// row (a file whose rows all have one needs none), sized for the file but at most for half
    /// a million rows at first: it grows with what comes, in memory up to 16 MiB, then in a file
    /// beside the database.
    private var seen: OccurrenceCounter?

    init(expected: Int, directory: String) {
        self.expected = expected
        self.directory = directory
    }

    mutating func key(_ row: TransactionCSVRow) throws -> ImportChunk.Key {
        if let externalID = row.externalID { return .given(externalID, row) }
        let hash = row.contentHash
        if seen == nil {
            let expected = expected, directory = directory
            seen = try OccurrenceCounter(expected: min(expected, 1 << 19)) { slots -> any OccurrenceSlots in
                guard OccurrenceFile.wanted(for: slots) else { return MemorySlots(count: slots) }
                // In a file, sized for the whole file at once (half full): growing a table
                // there costs two system calls a key.
                return try OccurrenceFile(count: max(slots, expected * 2), directory: directory)
            }
        }
        let repeated = try seen!.next(hash.0)
        return repeated == 0 ? .content(hash) : .given(TransactionCSVRow.contentKey(hash, repeat: repeated), row)
    }
}

/// Batches handed from one thread to another, at most `capacity` waiting. The receiver gets
/// every batch sent, then the sender's error if it failed.
final class Handoff<Element: Sendable>: @unchecked Sendable {
    /// Thrown by `send` once the receiver has stopped.
    struct Stopped: Error {}

    private let condition = NSCondition()
    private let capacity: Int
    // Guarded by `condition`.
    private var batches: [[Element]] = []
    private var finished = false
    private var failure: (any Error)?
    private var stopped = false

    init(capacity: Int) { self.capacity = capacity }

    /// Waits for room, then queues `batch`; throws `Stopped` when the receiver has stopped.
    func send(_ batch: [Element]) throws {
        condition.lock()
        defer { condition.unlock() }
        while batches.count >= capacity, !stopped { condition.wait() }
        if stopped { throw Stopped() }
        batches.append(batch)
        condition.broadcast()
    }

    /// The sender is done (`error`: it failed).
    func finish(_ error: (any Error)?) {
        condition.lock()
        finished = true
        failure = error
        condition.broadcast()
        condition.unlock()
    }

    /// The next batch; nil once the sender finished, or its error.
    func receive() throws -> [Element]? {
        condition.lock()
        defer { condition.unlock() }
        while batches.isEmpty, !finished { condition.wait() }
        if !batches.isEmpty {
            condition.broadcast()
            return batches.removeFirst()
        }
        if let failure { throw failure }
        return nil
    }

    /// Stops the sender (its next `send` throws) and waits until it has finished.
    func stopAndWait() {
        condition.lock()
        stopped = true
        batches = []
        condition.broadcast()
        while !finished { condition.wait() }
        condition.unlock()
    }
}
