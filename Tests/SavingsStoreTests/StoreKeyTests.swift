import Foundation
import Testing
@testable import SavingsStore

@Suite struct StoreKeyTests {
    /// The byte-wise reading of stored ids agrees with Foundation's, and leaves every other
    /// shape to it.
    @Test func canonicalIdsReadLikeFoundation() throws {
        for _ in 0..<5_000 {
            let uuid = UUID()
            #expect(StoreKey.id(uuid) == uuid.uuidString.lowercased())
            #expect(StoreKey.parseCanonical(StoreKey.id(uuid)) == uuid)
            #expect(StoreKey.parseCanonical(uuid.uuidString) == uuid)
            #expect(try StoreKey.uuid(StoreKey.id(uuid)) == uuid)
        }
        for text in ["", "not-an-id", "0f8fad5b-d9cb-469f-a165-70867728950", "0f8fad5b-d9cb-469f-a165-70867728950ez",
                     "0f8fad5bd-9cb-469f-a165-70867728950e", "0f8fad5b-d9cb-469f-a165-70867728950g"] {
            #expect(StoreKey.parseCanonical(text) == nil, "\(text)")
            #expect(UUID(uuidString: text) == nil, "\(text)")
        }
    }

    /// New transaction and history ids are version 7 UUIDs that sort by the time they were
    /// made, so the primary-key index grows at its end.
    @Test func timeOrderedIdsSortByTimeAndStayDistinct() throws {
        let start = Date(timeIntervalSince1970: 1_790_000_000.123)
        var previous = ""
        var seen = Set<String>()
        for step in 0..<2_000 {
            let id = StoreKey.id(StoreKey.timeOrdered(at: start.addingTimeInterval(Double(step / 2) * 0.001)))
            #expect(Array(id)[14] == "7", "version 7: \(id)")
            #expect("89ab".contains(Array(id)[19]), "RFC 9562 variant: \(id)")
            #expect(UUID(uuidString: id) != nil)
            if step % 2 == 0 { #expect(id > previous, "a later millisecond sorts after: \(previous) \(id)") }
            previous = id
            seen.insert(id)
        }
        #expect(seen.count == 2_000)
        #expect(StoreKey.id(StoreKey.timeOrdered(at: start)).hasPrefix("01a0c450-6c7b-7"), "the first 48 bits are the Unix milliseconds")
    }
}
