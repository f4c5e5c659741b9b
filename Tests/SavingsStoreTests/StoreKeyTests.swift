import Foundation
import Testing
import SavingsCore
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

    /// Rows stored by integer key derive their public ids from it, a tag byte per table: a
    /// transaction's id never names a history row of the same ref, and ids of any other form
    /// name no ref at all.
    @Test func derivedIdsNameTheirTableAndRef() throws {
        for ref: Int64 in [1, 2, 255, 256, 65_537, 1 << 40, (1 << 56) - 1] {
            let transaction = DerivedID.transactions.derived(ref: ref), history = DerivedID.history.derived(ref: ref)
            #expect(DerivedID.transactions.ref(transaction) == ref)
            #expect(DerivedID.history.ref(history) == ref)
            #expect(DerivedID.transactions.ref(history) == nil)
            #expect(DerivedID.history.ref(transaction) == nil)
            #expect(StoreKey.id(history).hasPrefix("73617664-0001-8000-80"), "\(StoreKey.id(history))")
            #expect(try StoreKey.publicID(ref: ref, stored: nil, scheme: DerivedID.history) == history)
        }
        #expect(StoreKey.id(DerivedID.transactions.derived(ref: 1)) == "73617664-0000-8000-8000-000000000001", "transaction ids are unchanged")
        #expect(DerivedID.history.ref(DerivedID.history.derived(ref: 0)) == nil, "ref 0 is no row")
        for text in ["0f8fad5b-d9cb-469f-a165-70867728950e", "018f2a6e-4444-7abc-8def-0123456789ab"] {
            #expect(DerivedID.history.ref(UUID(uuidString: text)!) == nil)
        }
    }
}
