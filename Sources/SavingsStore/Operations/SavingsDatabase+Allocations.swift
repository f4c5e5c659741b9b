import Foundation
import GRDB
import SavingsCore

/// Allocations: how much of each asset is reserved for each goal, and their history.
extension SavingsDatabase {
    /// Sets the target of (asset, goal); 0 removes it. Raising it beyond the balance is refused.
    public func setAllocation(asset assetRef: String, goal goalRef: String, amount: Decimal, now: Date,
                              timeZone: TimeZone) async throws -> Allocation {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let asset = try Self.resolveAsset(assetRef, db)
            let goal = try Self.activeGoal(goalRef, db)
            let targets = try Self.allocations(assetID: asset.id, db)
            let goalID = try StoreKey.uuid(goal.id)
            let current = targets[goalID] ?? 0
            if amount > current {
                let others = targets.filter { $0.key != goalID }.values.reduce(Decimal(0), +)
                let balance = max(try Self.balance(assetID: asset.id, at: now, db), 0)
                if others + amount > balance {
                    let available = max(balance - others, 0)
                    throw DomainError(.insufficientBalance,
                                      "'\(asset.name)' has \(Amount.plainText(available)) \(asset.currency) available for '\(goal.name)', not \(Amount.plainText(amount))",
                                      details: ["available": Amount.plainText(available)])
                }
            }
            if amount != current {
                _ = try Self.applyAllocationDelta(assetID: try StoreKey.uuid(asset.id), goalID: goalID, delta: amount - current,
                                                  at: now, now: now, timeZone: timeZone, db)
            }
            return Allocation(assetID: try StoreKey.uuid(asset.id), goalID: goalID, amount: amount)
        }
    }

    /// Moves part of one goal's allocation to another in one step (a reallocation).
    public func moveAllocation(asset assetRef: String, from fromRef: String, to toRef: String, amount: Decimal, now: Date,
                               timeZone: TimeZone) async throws -> (from: Allocation, to: Allocation) {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let asset = try Self.resolveAsset(assetRef, db)
            let from = try Self.resolveGoal(fromRef, db)
            let to = try Self.activeGoal(toRef, db)
            guard from.id != to.id else { throw DomainError.invalidField("to_goal", "must differ from from_goal") }
            guard amount > 0 else {
                throw DomainError(.invalidAmount, "amount: must be greater than zero", details: ["field": "amount"])
            }
            let targets = try Self.allocations(assetID: asset.id, db)
            let assetID = try StoreKey.uuid(asset.id), fromID = try StoreKey.uuid(from.id), toID = try StoreKey.uuid(to.id)
            let available = targets[fromID] ?? 0
            guard available >= amount else {
                throw DomainError(.insufficientBalance,
                                  "'\(from.name)' has only \(Amount.plainText(available)) \(asset.currency) of '\(asset.name)' allocated",
                                  details: ["available": Amount.plainText(available)])
            }
            _ = try Self.applyAllocationDelta(assetID: assetID, goalID: fromID, delta: -amount, at: now, now: now, timeZone: timeZone, db)
            _ = try Self.applyAllocationDelta(assetID: assetID, goalID: toID, delta: amount, at: now, now: now, timeZone: timeZone, db)
            return (Allocation(assetID: assetID, goalID: fromID, amount: available - amount),
                    Allocation(assetID: assetID, goalID: toID, amount: (targets[toID] ?? 0) + amount))
        }
    }

    public func allocationHistory(asset: String?, goal: String?, from: Date?, to: Date?) async throws -> [AllocationHistoryEntry] {
        try await read { db in
            var conditions = ["1"], arguments: [any DatabaseValueConvertible] = []
            if let asset {
                conditions.append("h.asset = ?")
                arguments.append(try Self.assetRef(try Self.resolveAsset(asset, db).id, db))
            }
            if let goal {
                conditions.append("h.goal = ?")
                arguments.append(try HistoryTable.goalRef(try Self.resolveGoal(goal, db).id, db))
            }
            if let from {
                conditions.append("h.timestamp >= ?")
                arguments.append(Timestamp.milliseconds(from))
            }
            if let to {
                conditions.append("h.timestamp <= ?")
                arguments.append(Timestamp.milliseconds(to))
            }
            return try HistoryRecord.fetchAll(where: conditions.joined(separator: " AND "), arguments: StatementArguments(arguments), db)
                .map { try $0.entry() }
        }
    }

    static func activeGoal(_ reference: String, _ db: Database) throws -> GoalRecord {
        let goal = try resolveGoal(reference, db)
        guard !goal.archived else {
            throw DomainError(.invalidState, "goal '\(goal.name)' is archived; restore it first", details: ["goal": goal.id])
        }
        return goal
    }

    static func allocations(assetID: String, _ db: Database) throws -> [UUID: Decimal] {
        var targets: [UUID: Decimal] = [:]
        for record in try AllocationRecord.filter(Column("asset_id") == assetID).fetchAll(db) {
            let allocation = try record.allocation()
            targets[allocation.goalID] = allocation.amount
        }
        return targets
    }

    /// Changes the target of a pair by `delta` as of `instant` (SPEC 5.1): writes a history
    /// row there, shifts later rows, and updates the current allocation. Returns the row id.
    static func applyAllocationDelta(assetID: UUID, goalID: UUID, delta: Decimal, at instant: Date, now: Date,
                                     timeZone: TimeZone, _ db: Database) throws -> UUID {
        try applyAllocationDeltas(assetID: assetID, goalID: goalID, [(instant, delta)], now: now, timeZone: timeZone, db)[0]
    }

    /// Applies changes to a pair as if one after another, in one pass over the pair's rows
    /// from the earliest change on. Returns the new rows' ids, in the order of `deltas`.
    static func applyAllocationDeltas(assetID: UUID, goalID: UUID, _ deltas: [(at: Date, delta: Decimal)], now: Date,
                                      timeZone: TimeZone, _ db: Database) throws -> [UUID] {
        guard let earliest = deltas.lazy.map(\.at).min() else { return [] }
        let pair = try HistoryTable.pairRefs(assetID: assetID, goalID: goalID, db)
        // Only the rows the changes need: the one in force at the earliest and those after it
        // (none for changes made in date order), not the pair's whole history.
        let stamp = Timestamp.milliseconds(earliest)
        let inForce = try HistoryRecord.fetchOne(db.cachedStatement(sql: """
            SELECT \(HistoryTable.columns) FROM \(HistoryTable.from) WHERE h.asset = ? AND h.goal = ? AND h.timestamp <= ?
             ORDER BY h.timestamp DESC, h.created_at DESC LIMIT 1
            """), arguments: [pair.asset, pair.goal, stamp])
        let later = try HistoryRecord.fetchAll(where: "h.asset = ? AND h.goal = ? AND h.timestamp > ?", arguments: [pair.asset, pair.goal, stamp], db)
        let records = [inForce].compactMap { $0 } + later
        let rows = try records.map { try $0.entry() }
        // created_at breaks ties between rows with the same timestamp, so it must strictly
        // increase per pair even when two changes land in the same millisecond.
        let newestCreated = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(created_at) FROM allocation_history WHERE asset = ? AND goal = ?"),
                                               arguments: [pair.asset, pair.goal])
        let firstCreated = max(Timestamp.milliseconds(now), (newestCreated ?? .min) + 1)
        let change = AllocationTimeline.applying(deltas: deltas, to: rows) { index, amount in
            // The id is the one the row's ref gives (`HistoryTable.insert`).
            AllocationHistoryEntry(id: HistoryTable.unassigned, assetID: assetID, goalID: goalID, amount: amount, timestamp: deltas[index].at,
                                   createdAt: Timestamp.date(milliseconds: firstCreated + Int64(index)),
                                   monthLabel: MonthLabel(deltas[index].at, in: timeZone))
        }
        let inserted = try HistoryTable.insert(change.inserted, asset: pair.asset, goal: pair.goal, keepIDs: false, db)
        let refs = Dictionary(uniqueKeysWithValues: zip(rows.map(\.id), records.map(\.ref)))
        for row in change.shifted {
            guard let ref = refs[row.id] else { throw StoreError.corrupt("allocation history row \(row.id) moved without its ref") }
            try HistoryTable.setAmount(ref: ref, row.amount, db)
        }
        try syncAllocation(assetID: assetID, goalID: goalID, now: now, db)
        return inserted.map(\.id)
    }

    /// The amount of the pair's newest history row: its current target (0 without rows).
    static func newestTarget(assetID: UUID, goalID: UUID, _ db: Database) throws -> Decimal {
        let pair = try HistoryTable.pairRefs(assetID: assetID, goalID: goalID, db)
        return try String.fetchOne(db.cachedStatement(sql: """
            SELECT amount FROM allocation_history WHERE asset = ? AND goal = ? ORDER BY timestamp DESC, created_at DESC LIMIT 1
            """), arguments: [pair.asset, pair.goal]).map { try Amount.parse($0) } ?? 0
    }

    /// Makes the allocation row equal the newest history row of the pair (0 removes it).
    static func syncAllocation(assetID: UUID, goalID: UUID, now: Date, _ db: Database) throws {
        let pair = Column("asset_id") == StoreKey.id(assetID) && Column("goal_id") == StoreKey.id(goalID)
        let amount = try newestTarget(assetID: assetID, goalID: goalID, db)
        guard amount >= 0 else {
            throw DomainError(.conflict, "the allocation would become negative; it changed since")
        }
        if amount == 0 {
            try AllocationRecord.filter(pair).deleteAll(db)
        } else {
            try AllocationRecord(assetID: StoreKey.id(assetID), goalID: StoreKey.id(goalID), amount: Amount.plainText(amount),
                                 updatedAt: Timestamp.format(now)).save(db)
        }
    }
}
