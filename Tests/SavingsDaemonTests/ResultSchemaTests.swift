import SavingsRPC
import SavingsStore
import Testing

/// The result schemas name what the code can write: an enum SavingsRPC cannot see is written
/// out there, and must stay the store's.
@Suite struct ResultSchemaTests {
    @Test func theExecutionStatusesAreTheStoresOwn() {
        #expect(Wire.executionStatus["enum"] == .array(ExecutionRecord.Status.allCases.map { .string($0.rawValue) }))
    }
}
