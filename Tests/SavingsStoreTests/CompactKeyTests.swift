import Foundation
import GRDB
import SavingsCore
import Testing
@testable import SavingsStore

/// Schema v12: transactions keyed by integers, the ids clients hold still working.
@Suite struct CompactKeyTests {
    let utc = TimeZone(identifier: "UTC")!
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let assetID = "5e912fc5-4d4f-4c1f-8348-9ec4dc203b0c"
    let goalID = "0b4c6a3e-6a55-4f6e-9d0c-3f3c6f1d2a10"
    let manualID = "018f2a6e-1111-7abc-8def-0123456789ab"
    let importedID = "018f2a6e-2222-7abc-8def-0123456789ab"
    let byFileID = "018f2a6e-3333-7abc-8def-0123456789ab"

    func temporaryPath() throws -> String { try StoreTestSupport.databasePath("compact") }

    /// A database as v11 wrote it: text ids everywhere, a content-keyed import row, a row with the
    /// file's own external_id, and a contribution pointing at a transaction.
    func writeV11Database(at path: String) throws {
        try StoreTestSupport.writeDatabase(at: path, upTo: "v11-onchain-watch") { db in
            let stamp = "2026-11-01T00:00:00.000Z"
            let content = ExternalKeys.contentKey(dateText: "2026-01-02T00:00:00.000Z", amountText: "20", note: "salary")
            try db.execute(sql: """
                INSERT INTO goal (id, name, name_key, currency, target_amount, deadline, start_date, created_at, updated_at)
                VALUES (?, 'Trip', 'trip', 'EUR', '1000', '2027-06-30', '2026-01-01', ?, ?);
                INSERT INTO asset (id, name, name_key, currency, kind, created_at, updated_at) VALUES (?, 'Bank', 'bank', 'EUR', 'fiat', ?, ?);
                INSERT INTO asset_transaction (id, asset_id, amount, date, source, note, external_id, created_at) VALUES
                    (?, ?, '5', '2026-01-01T10:00:00.000Z', 'manual', 'cash', NULL, ?),
                    (?, ?, '20', '2026-01-02T00:00:00.000Z', 'import', 'salary', ?, ?),
                    (?, ?, '-3', '2026-01-03T00:00:00.000Z', 'import', 'fee', 'bank-77', ?);
                INSERT INTO contribution (id, goal_id, asset_id, transaction_id, history_id, amount, date, created_at)
                VALUES ('c0ffee00-0000-4000-8000-000000000001', ?, ?, ?, NULL, '5', '2026-01-01T10:00:00.000Z', ?);
                """, arguments: [goalID, stamp, stamp, assetID, stamp, stamp,
                                 manualID, assetID, stamp, importedID, assetID, content, stamp, byFileID, assetID, stamp,
                                 goalID, assetID, manualID, stamp])
        }
    }

    /// The migration keeps every id and external_id, the balance and the contribution's link;
    /// the old ids still find and delete their rows; the same rows imported again are present.
    @Test func aV11DatabaseMigratesKeepingWhatClientsHold() async throws {
        let path = try temporaryPath()
        try writeV11Database(at: path)
        let db = try SavingsDatabase.open(path: path)
        #expect(try await db.schemaVersion() == Schema.migrator.migrations.count)
        let report = try await db.check()
        #expect(report.ok, "\(report.summary)")
        // The upgrade rewrites the file: the old rows' pages are not left free.
        #expect(try await db.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA freelist_count") } == 0)
        let listed = try await db.transactions(TransactionFilter(limit: 10))
        #expect(listed.map { StoreKey.id($0.id) } == [byFileID, importedID, manualID])
        #expect(listed.map(\.externalID) == ["bank-77", ExternalKeys.contentKey(dateText: "2026-01-02T00:00:00.000Z", amountText: "20", note: "salary"), nil])
        #expect(try await db.portfolio(now: now, pivot: try CurrencyCode("EUR")).balances.values.reduce(0, +) == 22)
        // The content key is not stored twice: it is worked out from the row.
        let stored = try await db.writer.read { db in try String?.fetchAll(db, sql: "SELECT external_id FROM asset_transaction ORDER BY ref") }
        #expect(stored == [nil, nil, "bank-77"])

        let file = NSTemporaryDirectory() + "again-\(UUID().uuidString).csv"
        try "date,amount,note,external_id\n2026-01-02,20,salary,\n2026-01-03,-3,fee,bank-77\n2026-01-04,1,new,\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let again = try await db.importTransactions(asset: "Bank", path: file, partial: false, now: now, timeZone: utc)
        #expect(again.inserted == 1 && again.alreadyPresent == 2, "\(again)")

        let deleted = try await db.deleteTransaction(manualID)
        #expect(deleted.note == "cash")
        let link = try await db.writer.read { db in try Int64?.fetchOne(db, sql: "SELECT transaction_ref FROM contribution") }
        #expect(link == .some(nil), "the contribution's link is cleared with its transaction")
        #expect(try await db.portfolio(now: now, pivot: try CurrencyCode("EUR")).balances.values.reduce(0, +) == 18)
        try db.close()
    }

    /// New rows get ids derived from their integer key; they find and delete their rows, and a
    /// look-alike of another form (or a ref never given) finds nothing.
    @Test func newRowsHaveIDsDerivedFromTheirKey() async throws {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createAsset(try NewAsset(name: "Bank", currency: "EUR", kind: "fiat", address: nil, notes: nil), now: now)
        let added = try await db.addTransaction(asset: "Bank", amount: 7, date: now, note: nil, externalID: "x-1", now: now, timeZone: utc)
        let id = added.transaction.id
        #expect(DerivedID.transactions.ref(id) != nil)
        #expect(StoreKey.id(id).hasPrefix("73617664-0000-8000-80"))
        #expect(try await db.transactions(TransactionFilter(limit: 5)).map(\.id) == [id])
        await #expect(throws: DomainError.self) { _ = try await db.deleteTransaction(StoreKey.id(DerivedID.transactions.derived(ref: 99))) }
        await #expect(throws: DomainError.self) {
            _ = try await db.addTransaction(asset: "Bank", amount: 1, date: now, note: nil, externalID: "x-1", now: now, timeZone: utc)
        }
        #expect(try await db.deleteTransaction(StoreKey.id(id)).amount == 7)
        // AUTOINCREMENT: the next row never takes the deleted one's key (and so its id).
        let next = try await db.addTransaction(asset: "Bank", amount: 1, date: now, note: nil, externalID: nil, now: now, timeZone: utc)
        #expect(next.transaction.id != id)
    }

    /// Two external ids of one asset whose keys collide both stay, each found as itself: the
    /// second takes the next free key of its block.
    @Test func collidingExternalIDsBothStay() async throws {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createAsset(try NewAsset(name: "Bank", currency: "EUR", kind: "fiat", address: nil, notes: nil), now: now)
        let home = ExternalKeys.home("wanted")
        // Another id already holding the home key of "wanted" (as a hash collision would).
        try await db.writer.write { db in
            let day = Timestamp.milliseconds(try Timestamp.parse("2026-01-01T00:00:00.000Z", field: "date"))
            try db.execute(sql: TransactionTable.insertOne, arguments: [
                try RefTable.transactions.take(1, db), try Int64.fetchOne(db, sql: "SELECT ref FROM asset_ref"), "1", day,
                TransactionKind(source: .import, contentKeyed: false).code, nil, home, "squatter", day, nil,
            ])
            try SavingsDatabase.addToBalance(assetID: try String.fetchOne(db, sql: "SELECT id FROM asset")!, amount: "1", newest: day, db)
        }
        let file = NSTemporaryDirectory() + "collide-\(UUID().uuidString).csv"
        try "date,amount,note,external_id\n2026-01-02,5,first,wanted\n".write(toFile: file, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: file) }
        let first = try await db.importTransactions(asset: "Bank", path: file, partial: false, now: now, timeZone: utc)
        #expect(first.inserted == 1, "\(first)")
        let again = try await db.importTransactions(asset: "Bank", path: file, partial: false, now: now, timeZone: utc)
        #expect(again.inserted == 0 && again.alreadyPresent == 1, "\(again)")
        let keys = try await db.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT external_id, external_key FROM asset_transaction ORDER BY ref").map { ($0[0] as String, $0[1] as Int64) }
        }
        #expect(keys.map(\.0) == ["squatter", "wanted"] && keys.map(\.1) == [home, home + 1])
        await #expect(throws: DomainError.self) {
            _ = try await db.addTransaction(asset: "Bank", amount: 1, date: now, note: nil, externalID: "wanted", now: now, timeZone: utc)
        }
        #expect(try await db.check().ok)
    }

    /// Each query of the large table reads the table's own order or the index made for it
    /// (v13 keeps three, each small or partial: refs, the external keys of rows that have one,
    /// the ids kept from before v12), never a whole scan or a sort.
    @Test func queriesReadTheirIndexes() async throws {
        let database = try SavingsDatabase.inMemory()
        let plans = try await database.writer.read { db in
            try StoreTestSupport.queryPlans([
                "SELECT date, amount FROM asset_transaction WHERE asset = 1 AND date > 0 ORDER BY date",
                "SELECT date, ref FROM asset_transaction WHERE asset = 1 AND date <= 9 AND (date < 9 OR ref < 5) ORDER BY date DESC, ref DESC LIMIT 8",
                "SELECT ref FROM asset_transaction WHERE asset = 1 AND external_key BETWEEN 0 AND 15",
                "SELECT ref FROM asset_transaction WHERE uuid = x'00112233445566778899aabbccddeeff'",
                "SELECT EXISTS (SELECT 1 FROM asset_transaction WHERE asset = 1)",
                "SELECT \(TransactionTable.columns) FROM \(TransactionTable.from) WHERE t.ref = 5",
                "SELECT ref FROM asset_transaction WHERE asset = 1 AND date = 5 AND amount = '1' AND note IS NULL AND \(TransactionKind.contentKeyedSQL) LIMIT 1",
                "SELECT MAX(date) FROM asset_transaction WHERE asset = 1",
            ], db)
        }
        for plan in [plans[0], plans[1], plans[4], plans[7]] {
            #expect(plan.contains("asset_transaction USING PRIMARY KEY (asset=?") && !plan.contains("TEMP B-TREE"), "\(plan)")
        }
        #expect(plans[2].contains("asset_transaction_by_key"), "\(plans[2])")
        #expect(plans[3].contains("asset_transaction_by_uuid"), "\(plans[3])")
        #expect(plans[5].contains("asset_transaction_by_ref"), "\(plans[5])")
        #expect(plans[6].contains("PRIMARY KEY (asset=? AND date=?)"), "\(plans[6])")
        let indexes = try await database.writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'asset_transaction' AND sql IS NOT NULL ORDER BY name")
        }
        #expect(indexes == ["asset_transaction_by_key", "asset_transaction_by_ref", "asset_transaction_by_uuid"])
    }

    /// A row without an external_id meets a stored row whose own external_id is that row's
    /// content key, also when the rows before it in the file all have ids of their own (the
    /// import asks whether the account holds such ids only once a row keyed by its content comes).
    @Test func aContentKeyedRowAfterAChunkOfIDsMeetsAnIDThatIsItsKey() async throws {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createAsset(try NewAsset(name: "Bank", currency: "EUR", kind: "fiat", address: nil, notes: nil), now: now)
        let key = ExternalKeys.contentKey(dateText: "2026-05-01T00:00:00.000Z", amountText: "7", note: "gift")
        let first = NSTemporaryDirectory() + "keyed-\(UUID().uuidString).csv"
        try "date,amount,note,external_id\n2026-05-02,1,other,\(key)\n".write(toFile: first, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: first) }
        #expect(try await db.importTransactions(asset: "Bank", path: first, partial: false, now: now, timeZone: utc).inserted == 1)
        // More rows with ids than one chunk holds, then the row the stored id is the key of.
        let ids = (0..<(ImportChunk.capacity + 10)).map { "2026-04-01,1,row,id-\($0)" }
        let second = NSTemporaryDirectory() + "keyed-\(UUID().uuidString).csv"
        try (["date,amount,note,external_id"] + ids + ["2026-05-01,7,gift,"]).joined(separator: "\n").appending("\n")
            .write(toFile: second, atomically: true, encoding: .utf8)
        defer { try? FileManager.default.removeItem(atPath: second) }
        let again = try await db.importTransactions(asset: "Bank", path: second, partial: false, now: now, timeZone: utc)
        #expect(again.inserted == ids.count && again.alreadyPresent == 1, "\(again)")
        #expect(try await db.check().ok)
    }
}


@Suite struct CompactKeyTransferTests {
    let utc = TimeZone(identifier: "UTC")!
    let now = Date(timeIntervalSince1970: 1_795_000_000)

    /// A restored document gives every transaction the id it had, derived ids too, even where a
    /// deleted row left a gap in the keys (the restore does not number them afresh).
    @Test func aRestoreKeepsDerivedIDsAcrossGaps() async throws {
        let source = try SavingsDatabase.inMemory()
        _ = try await source.createAsset(try NewAsset(name: "Bank", currency: "EUR", kind: "fiat", address: nil, notes: nil), now: now)
        var ids: [UUID] = []
        for amount in [1, 2, 3] as [Decimal] {
            ids.append(try await source.addTransaction(asset: "Bank", amount: amount, date: now, note: nil, externalID: nil, now: now, timeZone: utc).transaction.id)
        }
        _ = try await source.deleteTransaction(StoreKey.id(ids[0]))
        let rows = CollectedRows()
        try await source.export(into: rows)
        let target = try SavingsDatabase.inMemory()
        _ = try await target.importData(rows.sections, replace: false)
        let restored = try await target.transactions(TransactionFilter(limit: 10)).map(\.id)
        #expect(Set(restored) == Set(ids.dropFirst()), "\(restored) against \(ids)")
        #expect(try await target.deleteTransaction(StoreKey.id(ids[2])).amount == 3)
    }
}
