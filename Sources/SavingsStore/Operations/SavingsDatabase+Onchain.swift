import Foundation
import GRDB
import SavingsCore

/// Watch-only chain sync (SPEC 10): watches, and the rows a sync writes.
extension SavingsDatabase {
    /// Makes an asset watch `target` (replacing an earlier watch of it). Also says how many of
    /// its transactions did not come from the chain: the chain's own will be added beside them.
    public func watch(asset reference: String, target: WatchTarget, now: Date) async throws -> (Asset, AssetWatch, byHand: Int) {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let record = try Self.resolveAsset(reference, db)
            let asset = try record.asset()
            if let link = try Self.link(assetID: record.id, db) {
                throw DomainError(.invalidState, "'\(asset.name)' is linked to its \(link.service.title) account; asset.unlink first, then watch it",
                                  details: ["asset": record.id])
            }
            guard asset.kind == .crypto else {
                throw DomainError(.invalidWatch, "'\(asset.name)' is a fiat account; only crypto assets watch a chain", details: ["field": "asset"])
            }
            if target.token == nil, !target.chain.currencies.contains(asset.currency.code) {
                throw DomainError(.invalidWatch, "'\(asset.name)' holds \(asset.currency.code), but \(target.chain.rawValue) carries \(target.chain.currencies.sorted().joined(separator: " or "))",
                                  details: ["field": "chain"])
            }
            let previous = try Row.fetchOne(db, sql: "SELECT chain, xpub, addresses, token FROM asset_watch WHERE asset_id = ?", arguments: [record.id])
            let same = previous.map { row in
                row["chain"] == target.chain.rawValue && row["xpub"] == target.xpub && row["addresses"] == Self.lines(target.addresses)
                    && row["token"] == target.token
            } ?? false
            try db.execute(sql: """
                INSERT INTO asset_watch (asset_id, chain, xpub, addresses, token, min_confirmations, created_at) VALUES (?, ?, ?, ?, ?, ?, ?)
                ON CONFLICT(asset_id) DO UPDATE SET chain = excluded.chain, xpub = excluded.xpub, addresses = excluded.addresses,
                    token = excluded.token, min_confirmations = excluded.min_confirmations
                """, arguments: [record.id, target.chain.rawValue, target.xpub, Self.lines(target.addresses), target.token,
                                 target.minConfirmations, Timestamp.format(now)])
            // Another target starts from scratch: its first sync walks everything again.
            if !same {
                try db.execute(sql: """
                    UPDATE asset_watch SET last_sync_at = NULL, last_error = NULL, height = NULL, pending = '', ignored = '', reported_balance = NULL,
                        reconciled = NULL, cursor = NULL, provider = NULL, created_at = ? WHERE asset_id = ?
                    """, arguments: [Timestamp.format(now), record.id])
            }
            guard let watch = try Self.watch(assetID: record.id, db) else { throw StoreError.corrupt("watch of \(record.id)") }
            let byHand = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset_transaction WHERE asset = ? AND NOT \(TransactionKind.onchainSQL)",
                                          arguments: [try Self.assetRef(record.id, db)]) ?? 0
            return (asset, watch, byHand)
        }
    }

    /// Stops watching; what was imported stays.
    public func unwatch(asset reference: String) async throws -> Asset {
        try await write { db in
            let record = try Self.resolveAsset(reference, db)
            try db.execute(sql: "DELETE FROM asset_watch WHERE asset_id = ?", arguments: [record.id])
            guard db.changesCount > 0 else {
                throw DomainError(.invalidState, "'\(record.name)' is not watching a chain", details: ["asset": record.id])
            }
            return try record.asset()
        }
    }

    /// Every watch, by asset id.
    public func watches() async throws -> [UUID: AssetWatch] {
        try await read { db in
            var watches: [UUID: AssetWatch] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM asset_watch") {
                let watch = try Self.watch(row)
                watches[watch.assetID] = watch
            }
            return watches
        }
    }

    /// One asset's watch, or nil; the asset is resolved by id or name.
    public func watch(asset reference: String) async throws -> (Asset, AssetWatch?) {
        try await read { db in
            let record = try Self.resolveAsset(reference, db)
            return (try record.asset(), try Self.watch(assetID: record.id, db))
        }
    }

    /// The txids stored from the chain for an asset, with their block times.
    public func chainTransactions(assetID: UUID) async throws -> [String: Date] {
        try await read { db in
            var stored: [String: Date] = [:]
            let rows = try Row.fetchCursor(db, sql: """
                SELECT external_id, date FROM asset_transaction WHERE asset = ? AND \(TransactionKind.onchainSQL) AND external_id IS NOT NULL
                """, arguments: [try Self.assetRef(StoreKey.id(assetID), db)])
            while let row = try rows.next() { stored[row[0]] = Timestamp.date(milliseconds: row[1]) }
            return stored
        }
    }

    /// Stores one page of confirmed chain transactions in one transaction (already stored ones
    /// are left as they are), growing allocations as `tx.add` would, and remembers where an
    /// unfinished walk goes on. Returns how many went in. The page is durable once
    /// `finishChainSync` is (`bulkWrite(durable:)`).
    public func storeChainTransactions(assetID: UUID, _ transactions: [ChainTransaction], cursor: String?, now: Date,
                                       timeZone: TimeZone) async throws -> Int {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await bulkWrite(durable: false) { db -> BulkWriteOutcome<Int> in
            guard let asset = try AssetRecord.fetchOne(db, key: StoreKey.id(assetID)) else { throw DomainError.notFound("asset", assetID.uuidString) }
            // Whether it is still watched, without reading the watch (which decodes and checks
            // its key again, at every page).
            guard try Bool.fetchOne(db.cachedStatement(sql: "SELECT EXISTS (SELECT 1 FROM asset_watch WHERE asset_id = ?)"),
                                    arguments: [asset.id]) == true else {
                throw DomainError(.invalidState, "'\(asset.name)' stopped watching during the sync")
            }
            // A transaction that nets to nothing for the set (a consolidation paying no fee
            // from it) moves no money: nothing to store.
            let rows = transactions.compactMap { transaction -> TransactionCSVRow? in
                guard let date = transaction.blockTime, transaction.amount != 0 else { return nil }
                return TransactionCSVRow(line: 0, date: Timestamp.truncatedToMilliseconds(date), amount: transaction.amount, note: nil,
                                         externalID: transaction.txid)
            }
            let inserted = try Self.storeSynced(rows, asset: asset, source: .onchain, now: now, timeZone: timeZone, db)
            try db.execute(sql: "UPDATE asset_watch SET cursor = ? WHERE asset_id = ?", arguments: [cursor, asset.id])
            return .commit(inserted)
        }
    }

    /// Stores rows from outside (a chain, a linked account) keyed by their own ids, those already
    /// stored left as they are, growing allocations as `tx.add` would. Returns how many went in.
    static func storeSynced(_ rows: [TransactionCSVRow], asset: AssetRecord, source: AssetTransaction.Source, now: Date,
                            timeZone: TimeZone, _ db: Database) throws -> Int {
        var allocator = try DepositAllocator(asset: asset, now: now, db)
        var chunk = ImportChunk()
        var refs = RefBlock(.transactions)
        let ref = try Self.assetRef(asset.id, db)
        var inserted = 0
        func flush() throws {
            try chunk.flush(into: db, asset: (asset.id, ref), source: source, createdAt: now, refs: &refs) { entry, fresh in
                guard fresh else { return }
                inserted += 1
                try allocator.inserted(amount: entry.row.amount, units: entry.row.units, date: entry.row.date, db)
            }
        }
        for row in rows {
            chunk.append(row, key: row.externalID ?? "")
            if chunk.isFull { try flush() }
        }
        try flush()
        try refs.finish(db)
        try allocator.apply(timeZone: timeZone, db)
        return inserted
    }

    /// Ends a sync: removes the stored transactions the chain no longer has, records what the
    /// provider reported, and returns the asset's balance afterwards, all in one transaction.
    public func finishChainSync(assetID: UUID, removing removed: [String], provider: String, pending: [PendingTransaction],
                                ignored: Set<String>, reported: Decimal, height: Int?, now: Date) async throws -> (removed: [String], balance: Decimal, reconciled: Bool) {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let id = StoreKey.id(assetID)
            let ref = try Self.assetRef(id, db)
            var gone: [String] = []
            for txid in removed {
                guard let row = try ExternalKeys.find(txid, asset: ref, db) else { continue }
                try db.execute(sql: "DELETE FROM asset_transaction WHERE ref = ? AND \(TransactionKind.onchainSQL)", arguments: [row])
                if db.changesCount > 0 { gone.append(txid) }
            }
            let balance = try Self.balance(assetID: id, at: now, db)
            let reconciled = ChainSyncPlan.reconciled(stored: balance, reported: reported, pending: pending)
            try db.execute(sql: """
                UPDATE asset_watch SET provider = ?, last_sync_at = ?, last_error = NULL, height = ?, pending = ?, ignored = ?,
                    reported_balance = ?, reconciled = ?, cursor = NULL WHERE asset_id = ?
                """, arguments: [provider, Timestamp.format(now), height, Self.pendingText(pending), Self.lines(ignored.sorted()),
                                 Amount.plainText(reported), reconciled, id])
            return (gone, balance, reconciled)
        }
    }

    /// Records a failed sync (what was stored before the failure stays).
    public func recordChainSyncFailure(assetID: UUID, provider: String?, error: String, now: Date) async throws {
        try await write { db in
            try db.execute(sql: "UPDATE asset_watch SET last_error = ?, provider = COALESCE(?, provider) WHERE asset_id = ?",
                           arguments: [error, provider, StoreKey.id(assetID)])
        }
    }

    /// Refuses a write of transactions that do not come from the chain (`tx.add`,
    /// `goal.contribute`, `tx.import`) to a watched asset (SPEC 10: `watched_asset`), or to a
    /// linked one.
    static func refuseIfWatched(assetID: String, _ db: Database) throws {
        if let row = try Row.fetchOne(db, sql: "SELECT chain, name FROM asset_watch JOIN asset ON asset.id = asset_id WHERE asset_id = ?",
                                      arguments: [assetID]) {
            throw DomainError(.watchedAsset, "'\(row["name"] as String)' takes its transactions from \(row["chain"] as String); run asset.sync, or asset.unwatch first to add by hand",
                              details: ["asset": assetID])
        }
        if let link = try link(assetID: assetID, db), let name = try String.fetchOne(db, sql: "SELECT name FROM asset WHERE id = ?", arguments: [assetID]) {
            throw DomainError(.watchedAsset, "'\(name)' takes its transactions from its \(link.service.title) account; run asset.sync, or asset.unlink first to add by hand",
                              details: ["asset": assetID])
        }
    }

    static func watch(assetID: String, _ db: Database) throws -> AssetWatch? {
        try Row.fetchOne(db, sql: "SELECT * FROM asset_watch WHERE asset_id = ?", arguments: [assetID]).map(watch)
    }

    static func watch(_ row: Row) throws -> AssetWatch {
        let addresses: String = row["addresses"]
        let target: WatchTarget
        do {
            target = try WatchTarget(chain: try Chain(name: row["chain"]), xpub: row["xpub"],
                                     addresses: addresses.split(separator: "\n").map(String.init), token: row["token"],
                                     minConfirmations: row["min_confirmations"])
        } catch {
            throw StoreError.corrupt("watch of asset \(row["asset_id"] as String): \(error)")
        }
        let pendingText: String = row["pending"]
        let pending = try pendingText.split(separator: "\n").map { line -> PendingTransaction in
            let parts = line.split(separator: " ")
            guard parts.count == 3, let confirmations = Int(parts[2]) else { throw StoreError.corrupt("pending transaction '\(line)'") }
            return PendingTransaction(txid: String(parts[0]), amount: try Amount.parse(String(parts[1])), confirmations: confirmations)
        }
        let ignored: String = row["ignored"]
        var watch = AssetWatch(
            assetID: try StoreKey.uuid(row["asset_id"]), target: target, createdAt: try Timestamp.parse(row["created_at"], field: "created_at"),
            provider: row["provider"], lastSyncAt: try (row["last_sync_at"] as String?).map { try Timestamp.parse($0, field: "last_sync_at") },
            lastError: row["last_error"], height: row["height"], pending: pending,
            reportedBalance: try (row["reported_balance"] as String?).map { try Amount.parse($0) }, reconciled: row["reconciled"],
            cursor: row["cursor"])
        watch.ignored = Set(ignored.split(separator: "\n").map(String.init))
        return watch
    }

    private static func lines(_ values: [String]) -> String { values.joined(separator: "\n") }

    private static func pendingText(_ pending: [PendingTransaction]) -> String {
        pending.map { "\($0.txid) \(Amount.plainText($0.amount)) \($0.confirmations)" }.joined(separator: "\n")
    }
}
