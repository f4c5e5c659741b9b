import Foundation
import GRDB
import SavingsCore

/// The result of recording a transaction.
public struct RecordedTransaction: Sendable, Equatable {
    public var transaction: AssetTransaction
    /// The goal whose allocation grew with the deposit (SPEC 5.1), if any.
    public var autoAllocatedGoalID: UUID?
}

/// Which transactions `tx.list` returns.
public struct TransactionFilter: Sendable, Equatable {
    public var asset: String?
    public var goal: String?
    public var from: Date?
    public var to: Date?
    public var limit: Int
    /// Only rows whose note or external_id holds this text (ASCII letters in any case), or
    /// whose amount is this number, either sign.
    public var search: String?
    /// Continue after this (date, id) position, newest first.
    public var after: (date: String, id: String)?

    public init(asset: String? = nil, goal: String? = nil, from: Date? = nil, to: Date? = nil, limit: Int = 100,
                after: (date: String, id: String)? = nil, search: String? = nil) {
        self.asset = asset
        self.search = search
        self.goal = goal
        self.from = from
        self.to = to
        self.limit = limit
        self.after = after
    }

    public static func == (a: TransactionFilter, b: TransactionFilter) -> Bool {
        a.asset == b.asset && a.goal == b.goal && a.from == b.from && a.to == b.to && a.limit == b.limit && a.search == b.search
            && a.after?.date == b.after?.date && a.after?.id == b.after?.id
    }
}

extension SavingsDatabase {
    /// Records a transaction; a deposit into an asset dedicated to one goal grows that
    /// allocation at the transaction's date.
    public func addTransaction(asset reference: String, amount: Decimal, date: Date, source: AssetTransaction.Source = .manual,
                               note: String?, externalID: String?, now: Date, timeZone: TimeZone) async throws -> RecordedTransaction {
        let now = Timestamp.truncatedToMilliseconds(now)
        let date = Timestamp.truncatedToMilliseconds(date)
        return try await write { db in
            let asset = try Self.resolveAsset(reference, db)
            let transaction = AssetTransaction(id: UUID(), assetID: try StoreKey.uuid(asset.id), amount: amount, date: date,
                                               source: source, note: note, externalID: externalID, createdAt: now)
            let (stored, goal) = try Self.insertTransaction(transaction, autoAllocate: true, now: now, timeZone: timeZone, db)
            return RecordedTransaction(transaction: stored, autoAllocatedGoalID: goal)
        }
    }

    /// Inserts a transaction inside a write (its id is the one its row is given); returns it,
    /// and the auto-allocated goal if any.
    static func insertTransaction(_ transaction: AssetTransaction, autoAllocate: Bool, now: Date, timeZone: TimeZone,
                                  _ db: Database) throws -> (transaction: AssetTransaction, grown: UUID?) {
        let assetID = StoreKey.id(transaction.assetID)
        if transaction.source != .onchain { try refuseIfWatched(assetID: assetID, db) }
        let asset = try assetRef(assetID, db)
        if let externalID = transaction.externalID, try ExternalKeys.find(transaction, asset: asset, db) != nil {
            throw DomainError(.conflict, "a transaction with external_id '\(externalID)' already exists for this asset",
                              details: ["field": "external_id"])
        }
        var grown: UUID?
        if autoAllocate, transaction.amount > 0 {
            let targets = try allocations(assetID: assetID, db)
            let balance = try balance(assetID: assetID, at: now, db)
            grown = AutoAllocation.goalToGrow(allocations: targets, balanceBefore: balance, deposit: transaction.amount)
        }
        let stored = try insertRow(transaction, asset: asset, keepID: false, db)
        if let grown {
            _ = try applyAllocationDelta(assetID: transaction.assetID, goalID: grown, delta: transaction.amount,
                                         at: transaction.date, now: now, timeZone: timeZone, db)
        }
        return (stored, grown)
    }

    /// Writes one transaction row and adds it to its asset's total. Its id becomes the one its
    /// ref gives, unless `keepID` (an id from elsewhere: the earlier app's export, a restored
    /// document, where an id derived from a ref puts the row back at that ref).
    static func insertRow(_ transaction: AssetTransaction, asset: Int64, keepID: Bool, _ db: Database) throws -> AssetTransaction {
        let amount = Amount.plainText(transaction.amount), date = Timestamp.milliseconds(transaction.date)
        let stored = ExternalKeys.stored(transaction.externalID, dateText: Timestamp.format(transaction.date), amountText: amount,
                                         note: transaction.note)
        var key: Int64?
        if let text = stored.text {
            guard let free = try ExternalKeys.freeKey(asset: asset, home: ExternalKeys.home(text), db) else {
                throw DomainError(.conflict, "external_id '\(text)' cannot be stored: too many ids of this asset share its key",
                                  details: ["field": "external_id"])
            }
            key = free
        }
        let place = try RefTable.transactions.place(transaction.id, keepID: keepID, db)
        let kind = TransactionKind(source: transaction.source, contentKeyed: stored.contentKeyed)
        try WindowCache.touching(db, assetID: StoreKey.id(transaction.assetID)) {
            try db.cachedStatement(sql: TransactionTable.insertOne).execute(arguments: [
                place.ref, asset, amount, date, kind.code, transaction.note, key, stored.text, Timestamp.milliseconds(transaction.createdAt),
                place.uuid,
            ])
            return date
        }
        var row = transaction
        row.id = place.id
        try addToBalance(assetID: StoreKey.id(transaction.assetID), amount: amount, newest: date, db)
        return row
    }

    /// Adds inserted transactions' sum to the asset's maintained total, and their newest date
    /// to its newest (deletes and updates keep them by trigger).
    static func addToBalance(assetID: String, amount: String, newest: Int64, _ db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO asset_balance (asset_id, total, newest) VALUES (?, ?, ?)
            ON CONFLICT(asset_id) DO UPDATE SET total = decimal_add(total, excluded.total),
                                                newest = MAX(COALESCE(newest, excluded.newest), excluded.newest)
            """).execute(arguments: [assetID, amount, newest])
    }

    /// The integer key of a stored asset (schema v12's `asset_ref`).
    static func assetRef(_ assetID: String, _ db: Database) throws -> Int64 {
        guard let ref = try knownAssetRef(assetID, db) else { throw StoreError.corrupt("asset \(assetID) has no ref") }
        return ref
    }

    /// The integer key of an asset, nil when no asset has that id.
    static func knownAssetRef(_ assetID: String, _ db: Database) throws -> Int64? {
        try Int64.fetchOne(db.cachedStatement(sql: "SELECT ref FROM asset_ref WHERE id = ?"), arguments: [assetID])
    }

    /// Newest first (date, then id), merged from each account's own date range
    /// (`NewestTransactions`).
    public func transactions(_ filter: TransactionFilter) async throws -> [AssetTransaction] {
        try await read { db in
            // The accounts listed (nil: all of them).
            var included: Set<String>?
            if let asset = filter.asset { included = [try Self.resolveAsset(asset, db).id] }
            if let goal = filter.goal {
                let goalID = try Self.resolveGoal(goal, db).id
                let funding = Set(try String.fetchAll(db, sql: """
                    SELECT asset_id FROM allocation WHERE goal_id = ?
                    UNION SELECT r.id FROM asset_ref r WHERE r.ref IN (SELECT asset FROM allocation_history WHERE goal = ?)
                    """, arguments: [goalID, try HistoryTable.goalRef(goalID, db)]))
                included = included?.intersection(funding) ?? funding
            }
            guard filter.limit > 0, included?.isEmpty != true else { return [] }
            let refs = try NewestTransactions(db, from: filter.from, to: filter.to, search: filter.search)
                .refs(of: included, after: filter.after, limit: filter.limit)
            return try refs.map { ref in
                guard let record = try TransactionRecord.fetchOne(ref: ref, db) else { throw StoreError.corrupt("transaction row \(ref)") }
                return try record.transaction()
            }
        }
    }

    /// One transaction by its id.
    public func transaction(_ id: String) async throws -> AssetTransaction {
        try await read { db in
            guard let uuid = UUID(uuidString: id), let record = try TransactionRecord.fetchOne(publicID: uuid, db) else {
                throw DomainError.notFound("transaction", id)
            }
            return try record.transaction()
        }
    }

    public func deleteTransaction(_ id: String) async throws -> AssetTransaction {
        try await write { db in
            guard let uuid = UUID(uuidString: id), let record = try TransactionRecord.fetchOne(publicID: uuid, db) else {
                throw DomainError.notFound("transaction", id)
            }
            try db.execute(sql: "DELETE FROM asset_transaction WHERE ref = ?", arguments: [record.ref])
            return try record.transaction()
        }
    }

    /// What `updateTransaction` changes; nil leaves a field as it is (`note: .some(nil)` clears it).
    public struct TransactionChange: Sendable, Equatable {
        public var amount: Decimal?
        public var date: Date?
        public var note: String??

        public init(amount: Decimal? = nil, date: Date? = nil, note: String?? = nil) {
            self.amount = amount
            self.date = date
            self.note = note
        }
    }

    /// Changes a transaction's amount, date or note in place: its id, asset, source and
    /// external_id stay (an edited import row is still found by its id when the file comes
    /// again, so it is not imported twice). A watched asset's rows are the chain's
    /// (`watched_asset`); a contribution's row keeps its amount and date (undo the
    /// contribution instead).
    public func updateTransaction(_ id: String, change: TransactionChange) async throws -> (before: AssetTransaction, after: AssetTransaction) {
        try await write { db in
            guard let uuid = UUID(uuidString: id), let record = try TransactionRecord.fetchOne(publicID: uuid, db) else {
                throw DomainError.notFound("transaction", id)
            }
            let before = try record.transaction()
            try Self.refuseIfWatched(assetID: record.assetID, db)
            var after = before
            if let amount = change.amount { after.amount = amount }
            if let date = change.date { after.date = Timestamp.truncatedToMilliseconds(date) }
            if let note = change.note { after.note = note }
            guard after != before else { return (before, after) }
            if after.amount != before.amount || after.date != before.date,
               let goal = try String.fetchOne(db, sql: """
                   SELECT g.name FROM contribution c JOIN goal_ref r ON r.ref = c.goal JOIN goal g ON g.id = r.id
                    WHERE c.transaction_ref = ? AND c.undone_at IS NULL LIMIT 1
                   """, arguments: [record.ref]) {
                throw DomainError(.conflict, "this transaction records a contribution to '\(goal)': its note can change, but to change its amount or date undo the contribution and record it again",
                                  details: ["field": after.amount != before.amount ? "amount" : "date"])
            }
            let amountText = Amount.plainText(after.amount), date = Timestamp.milliseconds(after.date)
            let stored = ExternalKeys.stored(before.externalID, dateText: Timestamp.format(after.date), amountText: amountText, note: after.note)
            var key = record.externalKey
            if let text = stored.text, record.storedExternalID != text || key == nil {
                guard let free = try ExternalKeys.freeKey(asset: try Self.assetRef(record.assetID, db), home: ExternalKeys.home(text), db) else {
                    throw DomainError(.conflict, "external_id '\(text)' cannot be stored: too many ids of this asset share its key",
                                      details: ["field": "external_id"])
                }
                key = free
            } else if stored.text == nil {
                key = nil
            }
            let kind = TransactionKind(source: before.source, contentKeyed: stored.contentKeyed)
            try db.execute(sql: """
                UPDATE asset_transaction SET amount = ?, date = ?, note = ?, kind = ?, external_key = ?, external_id = ? WHERE ref = ?
                """, arguments: [amountText, date, after.note, kind.code, key, stored.text, record.ref])
            // The asset's total follows by trigger; its newest date only grows.
            try Self.addToBalance(assetID: record.assetID, amount: "0", newest: date, db)
            return (before, after)
        }
    }

    // MARK: - Allocations

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
