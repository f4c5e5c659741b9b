import Foundation
import GRDB
import SavingsCore

extension SavingsDatabase {
    public func createAsset(_ new: NewAsset, id: UUID = UUID(), now: Date) async throws -> Asset {
        let now = Timestamp.truncatedToMilliseconds(now)
        let asset = Asset(id: id, name: new.name, currency: new.currency, kind: new.kind, address: new.address, notes: new.notes,
                          createdAt: now, updatedAt: now)
        return try await write { db in
            try Self.ensureAssetNameFree(asset.name, except: nil, db)
            try AssetRecord(asset).insert(db)
            return asset
        }
    }

    /// Every asset by id, for labelling amounts without computing figures.
    public func assetsByID() async throws -> [UUID: Asset] {
        try await read { db in
            Dictionary(uniqueKeysWithValues: try AssetRecord.fetchAll(db).map { record in
                let asset = try record.asset()
                return (asset.id, asset)
            })
        }
    }

    public func asset(_ reference: String) async throws -> Asset {
        try await read { db in try Self.resolveAsset(reference, db).asset() }
    }

    /// Changes an asset; its currency is fixed once it has transactions or allocations.
    public func updateAsset(_ reference: String, changes: AssetChanges, now: Date) async throws -> Asset {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let current = try Self.resolveAsset(reference, db).asset()
            let updated = try changes.applied(to: current, at: now)
            if Goal.nameKey(updated.name) != Goal.nameKey(current.name) {
                try Self.ensureAssetNameFree(updated.name, except: current.id, db)
            }
            if updated.currency != current.currency, try Self.hasHistory(assetID: StoreKey.id(current.id), db) {
                throw DomainError(.conflict, "the currency of '\(current.name)' cannot change: it has transactions or allocations",
                                  details: ["field": "currency"])
            }
            if updated != current { try AssetRecord(updated).update(db) }
            return updated
        }
    }

    /// Deletes an asset; one with transactions or allocations only with `force`.
    public func deleteAsset(_ reference: String, force: Bool) async throws -> Asset {
        try await write { db in
            let record = try Self.resolveAsset(reference, db)
            if !force, try Self.hasHistory(assetID: record.id, db) {
                throw DomainError(.conflict, "'\(record.name)' has transactions or allocations; pass force to delete them too")
            }
            let asset = try record.asset()
            try record.delete(db)
            return asset
        }
    }

    static func resolveAsset(_ reference: String, _ db: Database) throws -> AssetRecord {
        try Reference.resolve(AssetRecord.self, reference, what: "asset", id: \.id, db)
    }

    static func ensureAssetNameFree(_ name: String, except id: UUID?, _ db: Database) throws {
        try Reference.ensureNameFree(AssetRecord.self, name, except: id.map(StoreKey.id), what: "asset", id: \.id,
                                     displayName: \.name, db)
    }

    static func hasHistory(assetID: String, _ db: Database) throws -> Bool {
        try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM asset_transaction WHERE asset = ?)", arguments: [try assetRef(assetID, db)]) == true
            || AllocationRecord.filter(Column("asset_id") == assetID).fetchCount(db) > 0
    }

    /// Sum of the asset's transactions dated at or before `instant`: the maintained total less
    /// the transactions dated after `instant` (for "now", almost always none).
    static func balance(assetID: String, at instant: Date, _ db: Database) throws -> Decimal {
        var total = try String.fetchOne(db.cachedStatement(sql: "SELECT total FROM asset_balance WHERE asset_id = ?"), arguments: [assetID])
            .map { try Amount.parse($0) } ?? 0
        let later = try String.fetchCursor(db.cachedStatement(sql: "SELECT amount FROM asset_transaction WHERE asset = ? AND date > ?"),
                                           arguments: [try assetRef(assetID, db), Timestamp.milliseconds(instant)])
        while let amount = try later.next() { total -= try Amount.parse(amount) }
        return total
    }

    /// One consistent snapshot of everything the figures depend on; served from the cache
    /// until a write commits or a transaction's date is reached.
    public func portfolio(now: Date, pivot: CurrencyCode) async throws -> Portfolio {
        try await requestPortfolio(now: now, pivot: pivot).value()
    }

    /// The snapshot for `now`, asked for at once and awaited later: from the cache, or a load
    /// (shared with other callers) that holds at least every write that had ended when it was
    /// asked for, and whatever a read begun after this call returns sees.
    public func requestPortfolio(now: Date, pivot: CurrencyCode) -> PortfolioRequest {
        if let cached = figures.lookup(now: now, pivot: pivot) { return PortfolioRequest(source: .cached(cached)) }
        let version = figures.version
        let keep = { @Sendable [self] (at: Date) async throws -> (portfolio: Portfolio, validUntil: Date?) in
            var (portfolio, validUntil) = try await loadPortfolio(now: at, pivot: pivot)
            portfolio.snapshot = figures.nextSnapshot()
            figures.store(portfolio, version: version, now: at, pivot: pivot, validUntil: validUntil)
            return (portfolio, validUntil)
        }
        let (at, load) = figures.sharedLoad(version: version, now: now, pivot: pivot) { try await keep(now) }
        return PortfolioRequest(source: .loading(now: now, at: at, task: load, keep: keep))
    }

    private func loadPortfolio(now: Date, pivot: CurrencyCode) async throws -> (Portfolio, Date?) {
        let structureVersions = structure.versions
        return try await read { db in
            // Maintained totals, less whatever is dated after now.
            var sums: [String: Decimal] = [:]
            let totals = try Row.fetchCursor(db.cachedStatement(sql: "SELECT asset_id, total FROM asset_balance"))
            while let row = try totals.next() { sums[row[0] as String] = try Amount.parse(row[1] as String) }
            // Each account's own date range (CROSS JOIN keeps that order), of the accounts whose
            // newest row is after now (schema v15): a seek for those alone, not for every account
            // after every write. The earliest of these rows is when the figures change next.
            let later = try Row.fetchCursor(db.cachedStatement(sql: """
                SELECT r.id, t.amount, t.date FROM asset_balance b JOIN asset_ref r ON r.id = b.asset_id
                 CROSS JOIN asset_transaction t ON t.asset = r.ref AND t.date > ?1 WHERE b.newest > ?1
                """), arguments: [Timestamp.milliseconds(now)])
            var next: Int64?
            while let row = try later.next() {
                sums[row[0] as String, default: 0] -= try Amount.parse(row[1] as String)
                let date: Int64 = row[2]
                if next.map({ date < $0 }) ?? true { next = date }
            }
            var balances: [UUID: Decimal] = [:]
            for (id, sum) in sums { balances[try StoreKey.uuid(id)] = sum }
            // The snapshot is taken (the statements above read from it).
            let parts = try structure.structure(db, before: structureVersions)
            return (Portfolio(goals: parts.goals, assets: parts.assets, balances: balances, allocations: parts.allocations,
                              rates: RateTable(rates: parts.rates, pivot: pivot)), next.map(Timestamp.date(milliseconds:)))
        }
    }
}

/// A portfolio snapshot asked for (`SavingsDatabase.requestPortfolio`).
public struct PortfolioRequest: Sendable {
    fileprivate enum Source: Sendable {
        case cached(Portfolio)
        /// A load begun at `at` for a caller at `now`; `keep` loads again for a later clock.
        case loading(now: Date, at: Date, task: Task<(portfolio: Portfolio, validUntil: Date?), any Error>,
                     keep: @Sendable (Date) async throws -> (portfolio: Portfolio, validUntil: Date?))
    }

    fileprivate let source: Source

    /// The snapshot, when the cache had it.
    public var cached: Portfolio? {
        if case .cached(let portfolio) = source { portfolio } else { nil }
    }

    public func value() async throws -> Portfolio {
        switch source {
        case .cached(let portfolio):
            return portfolio
        case .loading(let now, let at, let task, let keep):
            let shared = try await task.value
            // A load started earlier holds until its next dated transaction; past that, read again.
            if at < now, let validUntil = shared.validUntil, now >= validUntil { return try await keep(now).portfolio }
            return shared.portfolio
        }
    }
}
