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
        if transaction.source == .manual || transaction.source == .import { try refuseIfWatched(assetID: assetID, db) }
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
}
