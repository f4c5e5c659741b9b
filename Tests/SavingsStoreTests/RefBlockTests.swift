import Foundation
import GRDB
import SavingsCore
import Testing
@testable import SavingsStore

/// Refs taken a block at a time for a bulk write: handed out in order, never twice, and the
/// rest given back at the end.
@Suite struct RefBlockTests {
    func counter(_ db: Database) throws -> Int64 {
        try Int64.fetchOne(db, sql: "SELECT last FROM transaction_counter") ?? -1
    }

    @Test func refsComeInOrderAndTheRestGoesBack() async throws {
        let database = try SavingsDatabase.inMemory()
        try await database.writer.write { db in
            let before = try counter(db)
            var block = RefBlock(.transactions)
            let first = try block.take(256, db)
            #expect(first == before + 1)
            #expect(try counter(db) == before + Int64(RefBlock.size), "one update for the block")
            #expect(try block.take(256, db) == first + 256)
            // More than the block holds: a new block, contiguous with the first.
            let third = try block.take(RefBlock.size, db)
            #expect(third == first + 512)
            #expect(try block.take(1, db) == third + Int64(RefBlock.size))
            try block.finish(db)
            #expect(try counter(db) == third + Int64(RefBlock.size), "what was not handed out went back")
            #expect(try RefTable.transactions.take(1, db) == third + Int64(RefBlock.size) + 1)
        }
    }

    @Test func aRefTakenApartIsNeverGivenAgain() async throws {
        let database = try SavingsDatabase.inMemory()
        try await database.writer.write { db in
            var block = RefBlock(.transactions)
            let first = try block.take(10, db)
            let apart = try RefTable.transactions.take(1, db)
            #expect(apart == first + Int64(RefBlock.size))
            // The block goes on with what it holds; the counter, past it, is left as it is.
            #expect(try block.take(10, db) == first + 10)
            try block.finish(db)
            #expect(try counter(db) == apart)
            // A block that no longer fits starts after what was taken apart.
            #expect(try block.take(RefBlock.size, db) == apart + 1)
        }
    }
}
