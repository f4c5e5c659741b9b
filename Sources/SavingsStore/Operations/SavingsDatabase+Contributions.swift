import Foundation
import GRDB
import SavingsCore

/// What `goal.contribute` did.
public struct Contribution: Sendable, Equatable {
    public var id: UUID
    public var goal: Goal
    public var asset: Asset
    public var assetCreated: Bool
    public var transaction: AssetTransaction
}

extension SavingsDatabase {
    /// "I saved 200 EUR": one deposit plus the same allocation increase, in one transaction
    /// (SPEC 5.1). Without `asset`: the single asset in the goal's currency allocated to the
    /// goal, else the fiat asset "<CUR> savings" (created when missing).
    public func contribute(goal goalRef: String, amount: Decimal, asset assetRef: String?, date: Date, note: String?,
                           now: Date, timeZone: TimeZone) async throws -> Contribution {
        let now = Timestamp.truncatedToMilliseconds(now)
        let date = Timestamp.truncatedToMilliseconds(date)
        guard amount > 0 else {
            throw DomainError(.invalidAmount, "amount: a contribution must be greater than zero", details: ["field": "amount"])
        }
        return try await write { db in
            let goal = try Self.activeGoal(goalRef, db).goal()
            let (asset, created) = try assetRef.map { (try Self.resolveAsset($0, db).asset(), false) }
                ?? Self.contributionAsset(for: goal, now: now, db)
            let (transaction, _) = try Self.insertTransaction(
                AssetTransaction(id: UUID(), assetID: asset.id, amount: amount, date: date, source: .manual, note: note, externalID: nil,
                                 createdAt: now), autoAllocate: false, now: now, timeZone: timeZone, db)
            let historyID = try Self.applyAllocationDelta(assetID: asset.id, goalID: goal.id, delta: amount, at: date, now: now,
                                                          timeZone: timeZone, db)
            let id = try ContributionTable.insert(
                id: UUID(), keepID: false, goalID: StoreKey.id(goal.id), assetID: StoreKey.id(asset.id),
                transaction: ("?", [DerivedID.transactions.ref(transaction.id)]), history: ("?", [DerivedID.history.ref(historyID)]),
                amount: Amount.plainText(amount), date: Timestamp.format(date), createdAt: Timestamp.format(now), undoneAt: nil, db)
            return Contribution(id: id, goal: goal, asset: asset, assetCreated: created, transaction: transaction)
        }
    }

    /// Reverts both parts of a contribution within `undoWindow` of it.
    public func undoContribution(_ id: String, undoWindow: TimeInterval, now: Date) async throws -> Goal {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            guard let uuid = UUID(uuidString: id), let record = try ContributionRecord.fetchOne(publicID: uuid, db) else {
                throw DomainError.notFound("contribution", id)
            }
            guard record.undoneAt == nil else { throw DomainError(.invalidState, "contribution \(id) was already undone") }
            let createdAt = try Timestamp.parse(record.createdAt, field: "created_at")
            guard now.timeIntervalSince(createdAt) <= undoWindow else {
                throw DomainError(.undoExpired, "contribution \(id) can no longer be undone (the undo window of \(Int(undoWindow)) s has passed)")
            }
            let amount = try Amount.parse(record.amount)
            if let transaction = record.transactionRef {
                try db.execute(sql: "DELETE FROM asset_transaction WHERE ref = ?", arguments: [transaction])
            }
            // Take the contribution's row out of the timeline and shift later rows back.
            if let historyRef = record.historyRef, let row = try HistoryRecord.fetchOne(ref: historyRef, db) {
                let entry = try row.entry()
                let pair = try HistoryTable.pairRefs(assetID: entry.assetID, goalID: entry.goalID, db)
                for later in try HistoryRecord.fetchAll(where: "h.asset = ? AND h.goal = ? AND h.timestamp >= ?",
                                                        arguments: [pair.asset, pair.goal, row.timestamp], db) {
                    guard (later.timestamp, later.createdAt) > (row.timestamp, row.createdAt) else { continue }
                    try HistoryTable.setAmount(ref: later.ref, try Amount.parse(later.amount) - amount, db)
                }
                try HistoryTable.delete(ref: row.ref, db)
                try Self.syncAllocation(assetID: entry.assetID, goalID: entry.goalID, now: now, db)
            }
            // Both parts are gone; the record keeps its amount, date and when it was undone.
            try db.execute(sql: "UPDATE contribution SET transaction_ref = NULL, history_ref = NULL, undone_at = ? WHERE ref = ?",
                           arguments: [Timestamp.format(now), record.ref])
            return try Self.resolveGoal(record.goalID, db).goal()
        }
    }

    private static func contributionAsset(for goal: Goal, now: Date, _ db: Database) throws -> (Asset, Bool) {
        let candidates = try AssetRecord.fetchAll(db, sql: """
            SELECT asset.* FROM asset JOIN allocation ON allocation.asset_id = asset.id
            WHERE allocation.goal_id = ? AND asset.currency = ?
            """, arguments: [StoreKey.id(goal.id), goal.currency.code])
        if candidates.count > 1 {
            throw DomainError(.ambiguous, "'\(goal.name)' has several \(goal.currency) assets (\(candidates.map(\.name).sorted().joined(separator: ", "))); say which with asset")
        }
        if let only = candidates.first { return (try only.asset(), false) }
        let name = Asset.savingsAccountName(goal.currency)
        if let existing = try AssetRecord.filter(Column("name_key") == Goal.nameKey(name)).fetchOne(db) {
            let asset = try existing.asset()
            guard asset.currency == goal.currency else {
                throw DomainError(.conflict, "an asset named '\(name)' exists in \(asset.currency); say which asset with asset")
            }
            return (asset, false)
        }
        let asset = Asset(id: UUID(), name: name, currency: goal.currency, kind: .fiat, address: nil,
                          notes: "created by goal.contribute", createdAt: now, updatedAt: now)
        try AssetRecord(asset).insert(db)
        return (asset, true)
    }
}
