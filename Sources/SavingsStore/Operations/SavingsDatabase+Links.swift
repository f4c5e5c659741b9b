import Foundation
import GRDB
import SavingsCore

/// Linked accounts (issue 50): an asset that takes its transactions from an account at an
/// exchange or a bank, and the rows a sync writes. The rows are ordinary transactions whose
/// source is the service and whose external_id is the service's own id.
extension SavingsDatabase {
    /// Links an asset to an account at a service (replacing an earlier link of it). Also says
    /// how many of its transactions did not come from the service.
    public func link(asset reference: String, service: LinkedService, account: String, credential: String,
                     now: Date) async throws -> (Asset, AccountLink, byHand: Int) {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let record = try Self.resolveAsset(reference, db)
            let asset = try record.asset()
            if try Self.watch(assetID: record.id, db) != nil {
                throw DomainError(.invalidState, "'\(asset.name)' watches a chain; asset.unwatch first, then link it", details: ["asset": record.id])
            }
            if service.holdsFiat, asset.kind != .fiat {
                throw DomainError.invalidField("asset", "'\(asset.name)' is a crypto asset; \(service.title) links bank accounts to fiat accounts")
            }
            if let currency = service.currency(ofAccount: account), currency != asset.currency.code {
                throw DomainError.invalidField("account", "\(service.title)'s '\(account)' holds \(currency), but '\(asset.name)' holds \(asset.currency.code)")
            }
            let previous = try Row.fetchOne(db, sql: "SELECT service, account, credential FROM asset_link WHERE asset_id = ?", arguments: [record.id])
            let same = previous.map { $0["service"] == service.rawValue && $0["account"] == account && $0["credential"] == credential } ?? false
            try db.execute(sql: """
                INSERT INTO asset_link (asset_id, service, account, credential, created_at) VALUES (?, ?, ?, ?, ?)
                ON CONFLICT(asset_id) DO UPDATE SET service = excluded.service, account = excluded.account, credential = excluded.credential
                """, arguments: [record.id, service.rawValue, account, credential, Timestamp.format(now)])
            // Another account (or key) starts from scratch: its first sync reads everything again,
            // and a sync of the link before it, still running, can store nothing more.
            if !same {
                try db.execute(sql: """
                    UPDATE asset_link SET last_sync_at = NULL, last_error = NULL, reported_balance = NULL, reconciled = NULL, cursor = NULL,
                        created_at = ? WHERE asset_id = ?
                    """, arguments: [Timestamp.format(now), record.id])
            }
            guard let link = try Self.link(assetID: record.id, db) else { throw StoreError.corrupt("link of \(record.id)") }
            let byHand = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset_transaction WHERE asset = ? AND kind <> ?",
                                          arguments: [try Self.assetRef(record.id, db), TransactionKind(source: .init(service), contentKeyed: false).code]) ?? 0
            return (asset, link, byHand)
        }
    }

    /// Ends a link; what was imported stays.
    public func unlinkAccount(asset reference: String) async throws -> Asset {
        try await write { db in
            let record = try Self.resolveAsset(reference, db)
            try db.execute(sql: "DELETE FROM asset_link WHERE asset_id = ?", arguments: [record.id])
            guard db.changesCount > 0 else {
                throw DomainError(.invalidState, "'\(record.name)' is not linked to an account", details: ["asset": record.id])
            }
            return try record.asset()
        }
    }

    /// Every link, by asset id.
    public func links() async throws -> [UUID: AccountLink] {
        try await read { db in
            var links: [UUID: AccountLink] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT * FROM asset_link") {
                let link = try Self.link(row)
                links[link.assetID] = link
            }
            return links
        }
    }

    /// One asset's link, or nil; the asset is resolved by id or name.
    public func link(asset reference: String) async throws -> (Asset, AccountLink?) {
        try await read { db in
            let record = try Self.resolveAsset(reference, db)
            return (try record.asset(), try Self.link(assetID: record.id, db))
        }
    }

    /// What a sync of a link reads again (`LinkSyncPlan.since`: everything on its first sync,
    /// else from well before the newest row stored from the service, or its last sync when
    /// there is none), and the ids stored since then with their dates.
    public func linkedWindow(_ link: AccountLink) async throws -> (since: Date?, stored: [String: Date]) {
        try await read { db in
            let ref = try Self.assetRef(StoreKey.id(link.assetID), db)
            let kind = TransactionKind(source: .init(link.service), contentKeyed: false).code
            let newest = try Int64.fetchOne(db, sql: "SELECT MAX(date) FROM asset_transaction WHERE asset = ? AND kind = ?", arguments: [ref, kind])
            // A first sync reads everything and removes nothing: what is stored is not needed.
            guard let since = LinkSyncPlan.since(newest: newest.map(Timestamp.date(milliseconds:)), lastSync: link.lastSyncAt) else {
                return (nil, [:])
            }
            var stored: [String: Date] = [:]
            let rows = try Row.fetchCursor(db, sql: """
                SELECT external_id, date FROM asset_transaction WHERE asset = ? AND kind = ? AND date > ? AND external_id IS NOT NULL
                """, arguments: [ref, kind, Timestamp.milliseconds(since)])
            while let row = try rows.next() { stored[row[0]] = Timestamp.date(milliseconds: row[1]) }
            return (since, stored)
        }
    }

    /// Refuses a sync's write once its link has changed (relinked, unlinked) since it began:
    /// what it read belongs to the link before.
    static func checkUnchanged(_ link: AccountLink, _ db: Database) throws {
        guard let current = try Self.link(assetID: StoreKey.id(link.assetID), db), current.service == link.service,
              current.account == link.account, current.credential == link.credential, current.createdAt == link.createdAt else {
            throw DomainError(.invalidState, "the link changed during the sync; what it read was not kept")
        }
    }

    /// Stores one page of a service's rows in one transaction (already stored ones are left as
    /// they are) and remembers where an unfinished first sync goes on. Returns how many went in.
    public func storeLinkedRows(_ link: AccountLink, _ rows: [LinkedRow], cursor: String?, now: Date, timeZone: TimeZone) async throws -> Int {
        let now = Timestamp.truncatedToMilliseconds(now)
        // Durable with the sync's last transaction (`finishLinkSync`), as a chain's pages are.
        return try await bulkWrite(durable: false) { db -> BulkWriteOutcome<Int> in
            guard let asset = try AssetRecord.fetchOne(db, key: StoreKey.id(link.assetID)) else { throw DomainError.notFound("asset", link.assetID.uuidString) }
            try Self.checkUnchanged(link, db)
            let stored = rows.filter { $0.amount != 0 }.map {
                TransactionCSVRow(line: 0, date: Timestamp.truncatedToMilliseconds($0.date), amount: $0.amount, note: $0.note, externalID: $0.id)
            }
            let inserted = try Self.storeSynced(stored, asset: asset, source: .init(link.service), now: now, timeZone: timeZone, db)
            try db.execute(sql: "UPDATE asset_link SET cursor = ? WHERE asset_id = ?", arguments: [cursor, asset.id])
            return .commit(inserted)
        }
    }

    /// Ends a sync: removes the stored rows the service no longer lists, records its balance
    /// (and what the service said beside it, `notice`, as the last error), and returns the
    /// asset's balance afterwards, all in one transaction.
    public func finishLinkSync(_ link: AccountLink, removing removed: [String], reported: Decimal, notice: String?,
                               now: Date) async throws -> (removed: [String], balance: Decimal, reconciled: Bool) {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let id = StoreKey.id(link.assetID)
            try Self.checkUnchanged(link, db)
            let ref = try Self.assetRef(id, db)
            let kind = TransactionKind(source: .init(link.service), contentKeyed: false).code
            var gone: [String] = []
            for external in removed {
                guard let row = try ExternalKeys.find(external, asset: ref, db) else { continue }
                try db.execute(sql: "DELETE FROM asset_transaction WHERE ref = ? AND kind = ?", arguments: [row, kind])
                if db.changesCount > 0 { gone.append(external) }
            }
            let balance = try Self.balance(assetID: id, at: now, db)
            let reconciled = LinkSyncPlan.reconciled(stored: balance, reported: reported)
            try db.execute(sql: """
                UPDATE asset_link SET last_sync_at = ?, last_error = ?, reported_balance = ?, reconciled = ?, cursor = NULL WHERE asset_id = ?
                """, arguments: [Timestamp.format(now), notice, Amount.plainText(reported), reconciled, id])
            return (gone, balance, reconciled)
        }
    }

    /// Records a failed sync (what was stored before the failure stays), unless the link has
    /// changed since the sync began.
    public func recordLinkSyncFailure(_ link: AccountLink, error: String) async throws {
        try await write { db in
            try Self.checkUnchanged(link, db)
            try db.execute(sql: "UPDATE asset_link SET last_error = ? WHERE asset_id = ?", arguments: [error, StoreKey.id(link.assetID)])
        }
    }

    static func link(assetID: String, _ db: Database) throws -> AccountLink? {
        try Row.fetchOne(db, sql: "SELECT * FROM asset_link WHERE asset_id = ?", arguments: [assetID]).map(link)
    }

    static func link(_ row: Row) throws -> AccountLink {
        guard let service = LinkedService(rawValue: row["service"]) else {
            throw StoreError.corrupt("link of asset \(row["asset_id"] as String): service \(row["service"] as String)")
        }
        return AccountLink(
            assetID: try StoreKey.uuid(row["asset_id"]), service: service, account: row["account"], credential: row["credential"],
            createdAt: try Timestamp.parse(row["created_at"], field: "created_at"),
            lastSyncAt: try (row["last_sync_at"] as String?).map { try Timestamp.parse($0, field: "last_sync_at") },
            lastError: row["last_error"], reportedBalance: try (row["reported_balance"] as String?).map { try Amount.parse($0) },
            reconciled: row["reconciled"], cursor: row["cursor"])
    }

    /// A document's link (`data.import`) passes the checks of asset.link: a known service, a
    /// plain account and credential name.
    static func checkLinkRow(_ row: TransferRow, place: String) throws {
        func text(_ column: String) -> String { if case .text(let value)? = row[column] { return value } else { return "" } }
        do throws(DomainError) {
            _ = try LinkedService(name: text("service"))
            _ = try AccountLink.checkAccount(text("account"))
            _ = try AccountLink.checkCredentialName(text("credential"))
        } catch {
            throw DomainError.invalidField("document", "\(place): \(error.message)")
        }
    }

    /// An asset watches a chain or is linked to an account, never both: both would add its money twice.
    static func checkNotWatched(_ row: TransferRow, place: String, _ db: Database) throws {
        guard case .text(let asset)? = row["asset_id"],
              try Bool.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM asset_watch WHERE asset_id = ?)", arguments: [asset]) == true else { return }
        throw DomainError.invalidField("document", "\(place): asset \(asset) both watches a chain and is linked to an account")
    }
}
