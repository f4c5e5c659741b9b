import Foundation
import GRDB
import SavingsCore

/// What a `tx.import` did.
public struct CSVImportResult: Sendable, Equatable {
    public struct Problem: Error, Sendable, Equatable {
        public var line: Int
        public var reason: String
    }

    public var inserted = 0
    /// Rows already present (same external_id, or the same content when none is given).
    public var alreadyPresent = 0
    public var autoAllocated = 0
    /// Rows refused; with `partial` the others were imported, otherwise nothing was.
    public var problems: [Problem] = []
    public var problemCount = 0
    public var rows = 0
}

/// A file an import reads: a path the daemon opens itself, or bytes the caller sent over the
/// connection (already held by the daemon). Problems name it and the parameter that brought it.
public struct ImportFile: Sendable {
    /// How messages name the file: its path, or "the upload".
    public let name: String
    /// The parameter that brought it (`path` or `upload`).
    public let field: String
    /// Its size in bytes, when known: how many rows to expect.
    public let size: Int?
    let open: @Sendable () throws -> FileHandle?

    public init(name: String, field: String, size: Int?, open: @escaping @Sendable () throws -> FileHandle?) {
        self.name = name
        self.field = field
        self.size = size
        self.open = open
    }

    public static func path(_ path: String) -> ImportFile {
        let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
        return ImportFile(name: path, field: "path", size: size) { FileHandle(forReadingAtPath: path) }
    }

    /// Rows likely in the file: a typical row (a date, an amount, a short note) is about 24 bytes.
    var expectedRows: Int { (size ?? 0) / 24 }
}

/// Streams an import file's rows in bounded memory: one chunk, one record at a time.
struct CSVFileRows: Sendable {
    let file: ImportFile
    let format: @Sendable (CSVTokenizer.Record) throws -> TransactionCSVFormat
    static let chunkSize = 256 * 1024

    /// Calls `body` with each data row (or its problem), in file order.
    func forEach(_ body: (Result<TransactionCSVRow, CSVImportResult.Problem>) throws -> Void) throws {
        let field = file.field, name = file.name
        guard let handle = try file.open() else {
            throw DomainError.invalidField(field, "cannot read \(name)")
        }
        defer { try? handle.close() }
        var tokenizer = CSVTokenizer()
        var rowFormat: TransactionCSVFormat?
        func take(_ record: CSVTokenizer.Record) throws {
            guard rowFormat != nil else {
                do {
                    rowFormat = try format(record)
                } catch let error as DomainError where error.details["field"] == "path" && field != "path" {
                    throw DomainError.invalidField(field, String(error.message.dropFirst("path: ".count)))
                }
                return
            }
            do {
                try body(.success(try rowFormat!.row(record)))
            } catch let error as DomainError {
                try body(.failure(.init(line: record.line, reason: error.message)))
            }
        }
        while true {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: Self.chunkSize) ?? Data()
            } catch {
                throw DomainError.invalidField(field, "cannot read \(name)")
            }
            if chunk.isEmpty { break }
            for record in tokenizer.feed(chunk) { try take(record) }
            if let line = tokenizer.oversized {
                throw DomainError.invalidField(field, "line \(line): a field is longer than \(CSVTokenizer.maxFieldBytes) bytes")
            }
        }
        if tokenizer.unterminatedQuote { throw DomainError.invalidField(field, "the file ends inside a quoted field") }
        if let last = tokenizer.finish() { try take(last) }
        if rowFormat == nil { throw DomainError.invalidField(field, "the file is empty (expected a header: date,amount[,note,external_id])") }
    }
}

extension SavingsDatabase {
    /// Imports a CSV file of transactions into one asset. Rows already present are skipped, so
    /// importing the same file again inserts nothing. Without `partial`, any bad row refuses
    /// the whole file (nothing written) and every problem is reported with its line; with it,
    /// the good rows are imported and the bad ones reported. Deposits auto-allocate as `tx.add`.
    ///
    /// The file is read once, inside the write: rows go in a chunk at a time, and a refused
    /// file's transaction is rolled back (after its first problem the rest is only checked).
    public func importTransactions(asset reference: String, path: String, partial: Bool, now: Date, timeZone: TimeZone,
                                   progress: (@Sendable (_ phase: String, _ rows: Int) -> Void)? = nil) async throws -> CSVImportResult {
        try await importTransactions(asset: reference, file: .path(path), partial: partial, now: now, timeZone: timeZone, progress: progress)
    }

    /// `importTransactions(asset:path:...)` over any `ImportFile` (a path, or an upload).
    public func importTransactions(asset reference: String, file: ImportFile, partial: Bool, now: Date, timeZone: TimeZone,
                                   progress: (@Sendable (_ phase: String, _ rows: Int) -> Void)? = nil) async throws -> CSVImportResult {
        let now = Timestamp.truncatedToMilliseconds(now)
        // Where a large count of identical rows goes (beside the database; a database in memory: /tmp).
        let directory = writer.path.hasPrefix("/") ? (writer.path as NSString).deletingLastPathComponent : NSTemporaryDirectory()
        let rows = CSVFileRows(file: file) { try TransactionCSVFormat(header: $0, timeZone: timeZone, now: now) }
        let result = try await bulkWrite { db -> BulkWriteOutcome<CSVImportResult> in
            let asset = try Self.resolveAsset(reference, db)
            try Self.refuseIfWatched(assetID: asset.id, db)
            var allocator = try DepositAllocator(asset: asset, now: now, db)
            // How many rows of this file had each content hash so far (about 11 bytes a row
            // without an external_id). Two different rows whose hashes share the first 64 bits
            // only number the second one's key; the same file gives the same keys every time.
            // Made at the first such row (a file whose rows all have one needs none), sized for
            // the file but at most for half a million rows at first: it grows with what comes,
            // in memory (about 11 bytes a row) up to 16 MiB, then in a file beside the database.
            var seen: OccurrenceCounter?
            var result = CSVImportResult()
            var chunk = ImportChunk()
            var ids = StoreKey.TimeOrderedSequence(at: now)
            let createdAt = Timestamp.format(now)
            func flush() throws {
                try chunk.flush(into: db, assetID: asset.id, createdAt: createdAt, ids: &ids) { entry, inserted in
                    guard inserted else {
                        result.alreadyPresent += 1
                        return
                    }
                    result.inserted += 1
                    try allocator.inserted(amount: entry.row.amount, date: entry.row.date, db)
                }
            }
            try rows.forEach { parsed in
                result.rows += 1
                if result.rows % 10_000 == 0 { progress?("importing", result.rows) }
                let row: TransactionCSVRow
                switch parsed {
                case .failure(let problem):
                    result.record(problem)
                    return
                case .success(let good): row = good
                }
                // A file that will be refused writes nothing more: the rest is only checked.
                if !partial, result.problemCount > 0 { return }
                // Identical rows without an external_id are told apart by their order.
                let key: String
                if let externalID = row.externalID {
                    key = externalID
                } else {
                    let hash = row.contentHash
                    if seen == nil {
                        let expected = file.expectedRows
                        seen = try OccurrenceCounter(expected: min(expected, 1 << 19)) { slots -> any OccurrenceSlots in
                            guard OccurrenceFile.wanted(for: slots) else { return MemorySlots(count: slots) }
                            // In a file, sized for the whole file at once (half full): growing a
                            // table there costs two system calls a key.
                            return try OccurrenceFile(count: max(slots, expected * 2), directory: directory)
                        }
                    }
                    key = TransactionCSVRow.contentKey(hash, repeat: try seen!.next(hash.0))
                }
                chunk.append(row, key: key)
                if chunk.isFull { try flush() }
            }
            if !partial, result.problemCount > 0 {
                var refused = CSVImportResult()
                refused.rows = result.rows
                refused.problems = result.problems
                refused.problemCount = result.problemCount
                return .rollback(refused)
            }
            try flush()
            try allocator.apply(timeZone: timeZone, db)
            result.autoAllocated = allocator.allocated
            progress?("importing", result.rows)
            return .commit(result)
        }
        MemoryRelease.returnFreedMemory()
        return result
    }
}

extension CSVImportResult {
    /// Keeps the first problems in full and counts the rest.
    mutating func record(_ problem: Problem) {
        problemCount += 1
        if problems.count < 100 { problems.append(problem) }
    }
}
