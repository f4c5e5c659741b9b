import Foundation
import SavingsCore

extension Wire {
    /// An asset's `watch` object (SPEC 10). The extended key is shown shortened: it reveals
    /// every address of the wallet to whoever reads it, and the daemon only needs it whole.
    public static func watch(_ watch: AssetWatch, provider: String?, asset: Asset) -> JSONValue {
        let target = watch.target
        var object: [String: JSONValue] = [
            "chain": .string(target.chain.rawValue),
            "provider": provider.map { .string($0) } ?? .null,
            "addresses": .array(target.addresses.map { .string($0) }),
            "min_confirmations": .int(target.minConfirmations),
            "last_sync_at": watch.lastSyncAt.map(timestamp) ?? .null,
            "last_error": .optional(watch.lastError),
            "height": watch.height.map { .int($0) } ?? .null,
            "pending": pendingJSON(watch.pending, asset: asset),
            "reported_balance": watch.reportedBalance.map { .string(asset.format($0)) } ?? .null,
            "reconciled": watch.reconciled.map { .bool($0) } ?? .null,
        ]
        object["xpub"] = target.xpub.map { .string(WatchTarget.shortened($0)) } ?? .null
        object["token"] = .optional(target.token)
        return .object(object)
    }

    /// The result of `asset.sync` for one asset.
    public static func syncOutcome(_ outcome: ChainSyncOutcome, asset: Asset) -> JSONValue {
        [
            "asset": ["id": id(asset.id), "name": .string(asset.name)],
            "added": .int(outcome.added),
            "removed": .array(outcome.removed.map { .string($0) }),
            "pending": pendingJSON(outcome.pending, asset: asset),
            "balance": .string(asset.format(outcome.balance)),
            "reported_balance": .string(asset.format(outcome.reportedBalance)),
            "reconciled": .bool(outcome.reconciled),
            "height": outcome.height.map { .int($0) } ?? .null,
        ]
    }

    static func pendingJSON(_ pending: [PendingTransaction], asset: Asset) -> JSONValue {
        .array(pending.map { ["txid": .string($0.txid), "amount": .string(asset.format($0.amount)), "confirmations": .int($0.confirmations)] })
    }
}
