import Foundation
import SavingsCore

/// Linked accounts on the wire (issue 50): the link object an asset carries, and what a sync did.
extension Wire {
    public static func link(_ link: AccountLink, asset: Asset) -> JSONValue {
        [
            "service": .string(link.service.rawValue),
            "account": .string(link.account),
            "credential": .string(link.credential),
            "created_at": timestamp(link.createdAt),
            "last_sync_at": link.lastSyncAt.map(timestamp) ?? .null,
            "last_error": .optional(link.lastError),
            "reported_balance": link.reportedBalance.map { .string(asset.format($0)) } ?? .null,
            "reconciled": link.reconciled.map { .bool($0) } ?? .null,
            "first_sync_unfinished": .bool(link.lastSyncAt == nil && link.cursor != nil),
        ]
    }

    /// The result of `asset.sync` for one linked asset.
    public static func linkOutcome(_ outcome: LinkSyncOutcome, asset: Asset, service: LinkedService) -> JSONValue {
        [
            "asset": ["id": id(asset.id), "name": .string(asset.name)],
            "service": .string(service.rawValue),
            "added": .int(outcome.added),
            "removed": .array(outcome.removed.map { .string($0) }),
            "balance": .string(asset.format(outcome.balance)),
            "reported_balance": .string(asset.format(outcome.reportedBalance)),
            "reconciled": .bool(outcome.reconciled),
        ]
    }
}
