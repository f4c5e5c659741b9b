import Testing
@testable import SavingsCore

@Suite struct OccurrenceCounterTests {
    /// The same answers as counting with a dictionary, through growth, the key 0 and the ends of the range.
    @Test func countsAsADictionaryWould() throws {
        var counter = try OccurrenceCounter(expected: 4)
        try expectCounts(&counter)
    }

    /// Keys that start their probe in the same slot are still told apart.
    @Test func collidingKeysStayApart() throws {
        var counter = try OccurrenceCounter(expected: 1)
        let keys: [UInt64] = (1...40).map { $0 }  // all scale to the table's first slot
        for key in keys { #expect(try counter.next(key) == 0) }
        for key in keys { #expect(try counter.next(key) == 1) }
    }
}

/// Draws 20,000 keys from a pool (0 and the largest included) and checks each answer against a dictionary.
func expectCounts(_ counter: inout OccurrenceCounter) throws {
    var reference: [UInt64: UInt32] = [:]
    var random = SeededGenerator(state: 42)
    let pool: [UInt64] = (0..<3_000).map { _ in random.next() as UInt64 } + [0, 1, .max, .max - 1]
    for step in 0..<20_000 {
        let key = step % 5 == 0 ? pool[Int(random.next() as UInt64 % 4) + 3_000] : pool[Int(random.next() as UInt64 % 3_000)]
        let expected = reference[key, default: 0]
        reference[key] = expected + 1
        #expect(try counter.next(key) == expected)
    }
    #expect(reference[0] != nil && reference[.max] != nil && reference.count > 2_900)
}
