import Foundation
import Testing
@testable import SavingsStore

@Suite struct StoreKeyTests {
    /// The byte-wise reading of stored ids agrees with Foundation's, and leaves every other
    /// shape to it.
    @Test func canonicalIdsReadLikeFoundation() throws {
        for _ in 0..<5_000 {
            let uuid = UUID()
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
}
