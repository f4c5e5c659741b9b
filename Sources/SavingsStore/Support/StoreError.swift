import GRDB
import SavingsCore

/// Failures of the store that are not the client's fault.
public struct StoreError: Error, Sendable, CustomStringConvertible {
    public let message: String

    public var description: String { message }

    static func corrupt(_ what: String) -> StoreError { StoreError(message: "stored data does not parse: \(what)") }

    /// Maps any error from a database operation to what a client may see: domain errors pass
    /// through; a unique-constraint violation is a conflict; everything else is a storage error
    /// whose details stay in the log.
    static func clientFacing(_ error: any Error) -> any Error {
        switch error {
        case is DomainError, is CancellationError, is DryRunFinished, is RuleVerdicts.OverBudget:
            return error
        case let error as DatabaseError where error.extendedResultCode == .SQLITE_CONSTRAINT_UNIQUE
            || error.extendedResultCode == .SQLITE_CONSTRAINT_PRIMARYKEY:
            return DomainError(.conflict, "the change conflicts with existing data")
        case let error as DatabaseError where error.resultCode == .SQLITE_BUSY || error.resultCode == .SQLITE_LOCKED:
            return DomainError(.busy, "the database is busy; try again")
        default:
            return StorageFailure(underlying: error)
        }
    }
}

/// A storage failure: the client sees `storage_error`, the daemon logs `underlying`.
public struct StorageFailure: DomainErrorConvertible, Sendable, CustomStringConvertible {
    public let underlying: any Error
    public var description: String { "storage failure: \(underlying)" }
    public var domainError: DomainError { DomainError(.storageError, "the database could not complete the operation") }
}
