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

/// Streams an import file's rows in bounded memory: one chunk, one record at a time.
struct CSVFileRows: Sendable {
    let path: String
    let format: @Sendable (CSVTokenizer.Record) throws -> TransactionCSVFormat
    static let chunkSize = 256 * 1024

    /// Calls `body` with each data row (or its problem), in file order.
    func forEach(_ body: (Result<TransactionCSVRow, CSVImportResult.Problem>) throws -> Void) throws {
        guard let file = FileHandle(forReadingAtPath: path) else {
            throw DomainError.invalidField("path", "cannot read \(path)")
        }
        defer { try? file.close() }
        var tokenizer = CSVTokenizer()
        var rowFormat: TransactionCSVFormat?
        func take(_ record: CSVTokenizer.Record) throws {
            guard let rowFormat else {
                rowFormat = try format(record)
                return
            }
            do {
                try body(.success(try rowFormat.row(record)))
            } catch let error as DomainError {
                try body(.failure(.init(line: record.line, reason: error.message)))
            }
        }
        while true {
            let chunk: Data
            do {
                chunk = try file.read(upToCount: Self.chunkSize) ?? Data()
            } catch {
                throw DomainError.invalidField("path", "cannot read \(path)")
            }
            if chunk.isEmpty { break }
            for record in tokenizer.feed(chunk) { try take(record) }
            if let line = tokenizer.oversized {
                throw DomainError.invalidField("path", "line \(line): a field is longer than \(CSVTokenizer.maxFieldBytes) bytes")
            }
        }
        if tokenizer.unterminatedQuote { throw DomainError.invalidField("path", "the file ends inside a quoted field") }
        if let last = tokenizer.finish() { try take(last) }
        if rowFormat == nil { throw DomainError.invalidField("path", "the file is empty (expected a header: date,amount[,note,external_id])") }
    }
}

extension SavingsDatabase {
    /// Imports a CSV file of transactions into one asset. Rows already present are skipped, so
    /// importing the same file again inserts nothing. Without `partial`, any bad row refuses
    /// the whole file (nothing written) and every problem is reported with its line; with it,
    /// the good rows are imported and the bad ones reported. Deposits auto-allocate as `tx.add`.
    public func importTransactions(asset reference: String, path: String, partial: Bool, now: Date, timeZone: TimeZone,
                                   progress: (@Sendable (_ phase: String, _ rows: Int) -> Void)? = nil) async throws -> CSVImportResult {
        let now = Timestamp.truncatedToMilliseconds(now)
        let rows = CSVFileRows(path: path) { try TransactionCSVFormat(header: $0, timeZone: timeZone, now: now) }
        if !partial {
            // First pass: validate everything without writing.
            let checked = try await Task.detached { () throws -> CSVImportResult in
                var result = CSVImportResult()
                try rows.forEach { row in
                    result.rows += 1
                    if result.rows % 10_000 == 0 { progress?("checking", result.rows) }
                    if case .failure(let problem) = row { result.record(problem) }
                }
                return result
            }.value
            if checked.problemCount > 0 { return checked }
        }
        let result = try await bulkWrite { db in
            let asset = try Self.resolveAsset(reference, db)
            let assetID = try StoreKey.uuid(asset.id)
            var allocations = try Self.allocations(assetID: asset.id, db)
            var balance = try Self.balance(assetID: asset.id, at: now, db)
            // How many rows of this file had each content hash so far (12 bytes a row without an
            // external_id). Two different rows whose hashes share the first 64 bits only number
            // the second one's key; the same file gives the same keys every time.
            var seen: [UInt64: UInt32] = [:]
            var grown: [UUID: [(at: Date, delta: Decimal)]] = [:]
            let insert = try db.makeStatement(sql: """
                INSERT INTO asset_transaction (id, asset_id, amount, date, source, note, external_id, created_at)
                VALUES (?, ?, ?, ?, 'import', ?, ?, ?) ON CONFLICT(asset_id, external_id) DO NOTHING
                """)
            var result = CSVImportResult()
            let createdAt = Timestamp.format(now)
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
                // Identical rows without an external_id are told apart by their order.
                let key: String
                if let externalID = row.externalID {
                    key = externalID
                } else {
                    let hash = row.contentHash
                    let n = seen[hash.0, default: 0]
                    seen[hash.0] = n + 1
                    key = "csv-" + StableHash.hex(hash) + (n > 0 ? "-\(n)" : "")
                }
                try insert.execute(arguments: [StoreKey.id(StoreKey.timeOrdered(at: now)), asset.id, row.amountText,
                                               row.dateText, row.note, key, createdAt])
                guard db.changesCount > 0 else {
                    result.alreadyPresent += 1
                    return
                }
                result.inserted += 1
                if row.amount > 0, !allocations.isEmpty,
                   let goal = AutoAllocation.goalToGrow(allocations: allocations, balanceBefore: balance, deposit: row.amount) {
                    // Applied together after the last row: one at a time, each backdated deposit
                    // rewrote every later history row of the pair. The target grows by the
                    // deposit either way, from the pair's newest row.
                    if grown[goal] == nil { allocations[goal] = try Self.newestTarget(assetID: assetID, goalID: goal, db) }
                    grown[goal, default: []].append((row.date, row.amount))
                    allocations[goal, default: 0] += row.amount
                    result.autoAllocated += 1
                }
                if row.date <= now { balance += row.amount }
            }
            for (goal, deltas) in grown.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
                _ = try Self.applyAllocationDeltas(assetID: assetID, goalID: goal, deltas, now: now, timeZone: timeZone, db)
            }
            progress?("importing", result.rows)
            return result
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
