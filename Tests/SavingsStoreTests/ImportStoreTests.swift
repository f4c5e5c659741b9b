import Foundation
import SavingsCore
import Testing
@testable import SavingsStore

/// `tx.import` writes its rows a chunk at a time (`ImportChunk`): these cover what crosses a chunk.
@Suite struct ImportStoreTests {
    let utc = TimeZone(identifier: "UTC")!
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    func setUp() async throws -> SavingsDatabase {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createAsset(try NewAsset(name: "Bank", currency: "EUR", kind: "fiat", address: nil, notes: nil), now: now)
        return db
    }

    func write(_ lines: [String], header: String = "date,amount,note,external_id") throws -> String {
        let path = FileManager.default.temporaryDirectory.appendingPathComponent("import-\(UUID().uuidString).csv").path
        try ([header] + lines).joined(separator: "\n").appending("\n").write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    func balance(_ db: SavingsDatabase) async throws -> Decimal {
        try await db.portfolio(now: now, pivot: try CurrencyCode("EUR")).balances.values.reduce(0, +)
    }

    /// A bad row after several chunks have gone in refuses the whole file: nothing stays.
    @Test func aRefusedFileLeavesNothingEvenAfterWholeChunks() async throws {
        let db = try await setUp()
        let good = (0..<(3 * ImportChunk.capacity)).map { "2026-01-02,1,row \($0)," }
        let path = try write(good + ["2026-01-03,abc,bad,"] + ["2026-01-04,2,after,", "2026-01-05,oops,bad again,"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let refused = try await db.importTransactions(asset: "Bank", path: path, partial: false, now: now, timeZone: utc)
        #expect(refused.problemCount == 2)
        #expect(refused.problems.map(\.line) == [good.count + 2, good.count + 4])
        #expect(refused.inserted == 0 && refused.alreadyPresent == 0 && refused.rows == good.count + 3)
        #expect(try await db.transactions(TransactionFilter(limit: 10)).isEmpty)
        #expect(try await balance(db) == 0)

        let partial = try await db.importTransactions(asset: "Bank", path: path, partial: true, now: now, timeZone: utc)
        #expect(partial.inserted == good.count + 1 && partial.problemCount == 2)
        #expect(try await balance(db) == Decimal(good.count + 2))
    }

    /// Rows sharing an external_id: the first goes in, the others count as already present,
    /// whether they share its chunk or come chunks later; the same file again inserts nothing.
    @Test func repeatedExternalIDsWithinAndAcrossChunks() async throws {
        let db = try await setUp()
        var lines = ["2026-01-02,5,first,same", "2026-01-02,7,same chunk,same"]
        lines += (0..<(ImportChunk.capacity + 10)).map { "2026-01-03,1,filler \($0),f\($0)" }
        lines += ["2026-01-04,9,chunks later,same", "2026-01-04,1,identical,", "2026-01-04,1,identical,"]
        let path = try write(lines)
        defer { try? FileManager.default.removeItem(atPath: path) }
        let first = try await db.importTransactions(asset: "Bank", path: path, partial: false, now: now, timeZone: utc)
        #expect(first.inserted == lines.count - 2 && first.alreadyPresent == 2, "\(first)")
        #expect(try await balance(db) == Decimal(5 + ImportChunk.capacity + 10 + 2))
        let notes = try await db.transactions(TransactionFilter(limit: 1000)).compactMap(\.note)
        #expect(notes.contains("first") && !notes.contains("same chunk") && !notes.contains("chunks later"))
        #expect(notes.filter { $0 == "identical" }.count == 2, "identical rows without an external_id are told apart by order")
        let again = try await db.importTransactions(asset: "Bank", path: path, partial: false, now: now, timeZone: utc)
        #expect(again.inserted == 0 && again.alreadyPresent == lines.count)
    }

    /// A NUL byte in a field (an external id here) refuses the file: it was stored as it
    /// was, where any reader that stops at NUL sees another text. Nothing is imported.
    @Test func aNulInsideAFieldRefusesTheFile() async throws {
        let db = try await setUp()
        let path = try write(["2026-01-02,5,first,a\u{0}b", "2026-01-02,6,second,a\u{0}c"])
        defer { try? FileManager.default.removeItem(atPath: path) }
        let error = await #expect(throws: DomainError.self) {
            try await db.importTransactions(asset: "Bank", path: path, partial: true, now: now, timeZone: utc)
        }
        #expect(error?.message == "path: line 2: a field holds a NUL byte; is it a text file (a UTF-16 file needs encoding in the rules)?")
        #expect(try await balance(db) == 0)
    }
}

@Suite struct OccurrenceFileTests {
    /// A counter whose table lives in a file answers as a dictionary would, through growth,
    /// and leaves nothing named behind.
    @Test func aTableInAFileCountsAsOneInMemory() throws {
        let directory = NSTemporaryDirectory() + "occurrences-\(UUID().uuidString)"
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        var counter = try OccurrenceCounter(expected: 8) { try OccurrenceFile(count: $0, directory: directory) }
        var reference: [UInt64: UInt32] = [:]
        var random = SeededGenerator(state: 7)
        let pool: [UInt64] = (0..<2_000).map { _ in random.next() as UInt64 } + [0, .max]
        for _ in 0..<10_000 {
            let key = pool[Int(random.next() as UInt64 % UInt64(pool.count))]
            let expected = reference[key, default: 0]
            reference[key] = expected + 1
            #expect(try counter.next(key) == expected)
        }
        #expect(try FileManager.default.contentsOfDirectory(atPath: directory).isEmpty)
        #expect(OccurrenceFile.wanted(for: 1 << 21) && !OccurrenceFile.wanted(for: 1 << 20))
    }
}
