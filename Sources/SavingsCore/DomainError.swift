/// An error a user or client can cause, with a stable machine-readable kind.
///
/// Kinds are part of the wire contract (SPEC section 6); `invalidField` is reported as
/// JSON-RPC "invalid params" and names the offending field.
public struct DomainError: Error, Sendable, Equatable, CustomStringConvertible {
    public enum Kind: String, Sendable, CaseIterable {
        case notFound = "not_found"
        case ambiguous
        case invalidAmount = "invalid_amount"
        case insufficientBalance = "insufficient_balance"
        case conflict
        case planLocked = "plan_locked"
        case invalidState = "invalid_state"
        case undoExpired = "undo_expired"
        case rateUnavailable = "rate_unavailable"
        case permissionDenied = "permission_denied"
        case readOnly = "read_only"
        case tooLarge = "too_large"
        case storageError = "storage_error"
        case busy
        /// An address, extended key or token of a watch that cannot be right (SPEC 10).
        case invalidWatch = "invalid_watch"
        /// Something the configuration must provide first (a chain's provider).
        case notConfigured = "not_configured"
        /// A manual write to an asset whose transactions come from the chain.
        case watchedAsset = "watched_asset"
        /// An outside service (a block explorer) failed or asked to wait; `retry_in_seconds` says when.
        case providerUnavailable = "provider_unavailable"
        /// A parameter that is well-typed but not acceptable (an empty name, an impossible date).
        case invalidField = "invalid_field"
    }

    public var kind: Kind
    public var message: String
    /// Extra facts that help the caller (`field`, `available`, ...). Values are strings so the
    /// core stays free of any wire format.
    public var details: [String: String]

    public init(_ kind: Kind, _ message: String, details: [String: String] = [:]) {
        self.kind = kind
        self.message = message
        self.details = details
    }

    public var description: String { "\(kind.rawValue): \(message)" }

    public static func invalidField(_ field: String, _ reason: String) -> DomainError {
        DomainError(.invalidField, "\(field): \(reason)", details: ["field": field])
    }

    public static func notFound(_ what: String, _ reference: String) -> DomainError {
        DomainError(.notFound, "no \(what) matches '\(reference)'", details: ["reference": reference])
    }
}

/// An internal failure that still has a meaningful client-facing kind (e.g. `storage_error`).
/// The RPC layer logs the error itself and sends only `domainError`.
public protocol DomainErrorConvertible: Error {
    var domainError: DomainError { get }
}
