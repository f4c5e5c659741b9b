import Foundation
import GRDB
import SavingsCore
import Testing
@testable import SavingsStore

/// Schema v13: each account's transactions kept together in date order, dates as integers,
/// rows without an external_id keyed by their own content.
@Suite struct TransactionTableTests {
    let utc = TimeZone(identifier: "UTC")!
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let assetID = "5e912fc5-4d4f-4c1f-8348-9ec4dc203b0c"
    let goalID = "0b4c6a3e-6a55-4f6e-9d0c-3f3c6f1d2a10"
    let keptID = "018f2a6e-4444-7abc-8def-0123456789ab"

    func temporaryPath() throws -> String { try StoreTestSupport.databasePath("v13") }

    func file(_ text: String) throws -> String {
        let path = NSTemporaryDirectory() + "v13-\(UUID().uuidString).csv"
        try text.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// A database as v12 wrote it: a manual row (with a contribution), a row keyed by its
    /// content, one by the file's external_id, one keeping an id from before v12, one from the
    /// chain; the newest ref deleted, so the counter is beyond every row.
    func writeV12Database(at path: String) throws {
        try StoreTestSupport.writeDatabase(at: path, upTo: CompactTransactions.migration) { db in
            let stamp = "2026-11-01T00:00:00.000Z"
            let content = ExternalKeys.contentKey(dateText: "2026-01-02T00:00:00.000Z", amountText: "20", note: "salary")
            try db.execute(sql: """
                INSERT INTO goal (id, name, name_key, currency, target_amount, deadline, start_date, created_at, updated_at)
                VALUES (?, 'Trip', 'trip', 'EUR', '1000', '2027-06-30', '2026-01-01', ?, ?);
                INSERT INTO asset (id, name, name_key, currency, kind, created_at, updated_at) VALUES (?, 'Bank', 'bank', 'EUR', 'fiat', ?, ?);
                INSERT INTO asset_transaction (asset, amount, date, source, note, external_key, external_id, created_at, uuid) VALUES
                    (1, '5', '2026-01-01T10:00:00.000Z', 'manual', 'cash', NULL, NULL, ?, NULL),
                    (1, '20', '2026-01-02T00:00:00.000Z', 'import', 'salary', external_key(?), NULL, ?, NULL),
                    (1, '-3', '2026-01-03T00:00:00.000Z', 'import', 'fee', external_key('bank-77'), 'bank-77', ?, NULL),
                    (1, '7', '2025-12-31T23:59:59.999Z', 'import', NULL, external_key('old-1'), 'old-1', ?, uuid_blob(?)),
                    (1, '0.5', '2026-01-04T00:00:00.000Z', 'onchain', NULL, external_key('txid-1'), 'txid-1', ?, NULL),
                    (1, '100', '2026-01-05T00:00:00.000Z', 'manual', 'gone', NULL, NULL, ?, NULL);
                DELETE FROM asset_transaction WHERE ref = 6;
                INSERT INTO asset_balance (asset_id, total) VALUES (?, '29.5');
                INSERT INTO contribution (id, goal_id, asset_id, transaction_ref, history_id, amount, date, created_at)
                VALUES ('c0ffee00-0000-4000-8000-000000000001', ?, ?, 1, NULL, '5', '2026-01-01T10:00:00.000Z', ?);
                """, arguments: [goalID, stamp, stamp, assetID, stamp, stamp, stamp, content, stamp, stamp, stamp, keptID, stamp, stamp,
                                 assetID, goalID, assetID, stamp])
        }
    }

    /// The migration keeps every id, external_id, date, source and link; rows keyed by their
    /// content keep no key; refs go on after the last one ever given.
    @Test func aV12DatabaseMigratesKeepingWhatClientsHold() async throws {
        let path = try temporaryPath()
        try writeV12Database(at: path)
        let db = try SavingsDatabase.open(path: path)
        #expect(try await db.schemaVersion() == Schema.migrator.migrations.count)
        let report = try await db.check()
        #expect(report.ok, "\(report.summary)")
        #expect(try await db.writer.read { db in try Int.fetchOne(db, sql: "PRAGMA freelist_count") } == 0)
        let listed = try await db.transactions(TransactionFilter(limit: 10))
        let content = ExternalKeys.contentKey(dateText: "2026-01-02T00:00:00.000Z", amountText: "20", note: "salary")
        #expect(listed.map(\.externalID) == ["txid-1", "bank-77", content, nil, "old-1"])
        #expect(listed.map { StoreKey.id($0.id) } == [5, 3, 2, 1].map { StoreKey.id(DerivedID.transactions.derived(ref: $0)) } + [keptID])
        #expect(listed.map(\.source) == [.onchain, .import, .import, .manual, .import])
        #expect(listed.map { Timestamp.format($0.date) } == ["2026-01-04T00:00:00.000Z", "2026-01-03T00:00:00.000Z", "2026-01-02T00:00:00.000Z",
                                                             "2026-01-01T10:00:00.000Z", "2025-12-31T23:59:59.999Z"])
        #expect(listed.allSatisfy { Timestamp.format($0.createdAt) == "2026-11-01T00:00:00.000Z" })
        let stored = try await db.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT ref, kind, external_key IS NOT NULL AS keyed, typeof(date) AS type FROM asset_transaction ORDER BY ref")
                .map { [$0["ref"] as Int64, $0["kind"] as Int64, $0["keyed"] as Int64] + [($0["type"] as String) == "integer" ? 1 : 0] }
        }
        #expect(stored == [[1, 2, 0, 1], [2, 0, 0, 1], [3, 1, 1, 1], [4, 1, 1, 1], [5, 3, 1, 1]])
        #expect(try await db.portfolio(now: now, pivot: try CurrencyCode("EUR")).balances.values.reduce(0, +) == 29.5)
        // The deleted ref 6 is never given again.
        let next = try await db.addTransaction(asset: "Bank", amount: 1, date: now, note: nil, externalID: nil, now: now, timeZone: utc)
        #expect(DerivedID.transactions.ref(next.transaction.id) == 7)
        // The same rows imported again are present, by content and by external_id.
        let again = try file("date,amount,note,external_id\n2026-01-02,20,salary,\n2026-01-03,-3,fee,bank-77\n2026-01-06,1,new,\n")
        defer { try? FileManager.default.removeItem(atPath: again) }
        let result = try await db.importTransactions(asset: "Bank", path: again, partial: false, now: now, timeZone: utc)
        #expect(result.inserted == 1 && result.alreadyPresent == 2, "\(result)")
        // The contribution still points at its transaction, and loses it with it.
        #expect(try await db.writer.read { db in try Int64?.fetchOne(db, sql: "SELECT transaction_ref FROM contribution") } == 1)
        _ = try await db.deleteTransaction(StoreKey.id(DerivedID.transactions.derived(ref: 1)))
        #expect(try await db.writer.read { db in try Int64?.fetchOne(db, sql: "SELECT transaction_ref FROM contribution") } == .some(nil))
        #expect(try await db.check().ok)
        try db.close()
    }

    /// A row keyed by its content is the same whichever way its key arrives: worked out for a
    /// row without an external_id, or given by a file as the external_id (as tx.list shows it),
    /// before or after, in one file or in two, and `tx.add` refuses it once it is there.
    @Test func aContentKeyIsOneKeyHoweverItArrives() async throws {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createAsset(try NewAsset(name: "Bank", currency: "EUR", kind: "fiat", address: nil, notes: nil), now: now)
        let plain = try file("date,amount,note\n2026-01-01,5,coffee\n2026-01-02,6,tea\n")
        defer { try? FileManager.default.removeItem(atPath: plain) }
        #expect(try await db.importTransactions(asset: "Bank", path: plain, partial: false, now: now, timeZone: utc).inserted == 2)
        let keys = try await db.transactions(TransactionFilter(limit: 10)).compactMap(\.externalID)
        #expect(keys.count == 2 && keys.allSatisfy(ExternalKeys.looksLikeContentKey))
        // The keys given back as the file's own ids, with a newer row: only that one goes in.
        let given = try file("date,amount,note,external_id\n2026-01-02,6,tea,\(keys[0])\n2026-01-01,5,coffee,\(keys[1])\n2026-01-03,7,cake,\n")
        defer { try? FileManager.default.removeItem(atPath: given) }
        let second = try await db.importTransactions(asset: "Bank", path: given, partial: false, now: now, timeZone: utc)
        #expect(second.inserted == 1 && second.alreadyPresent == 2, "\(second)")
        // One file giving a row's content key and then the same row without one: one row.
        let cake = ExternalKeys.contentKey(dateText: "2026-01-04T00:00:00.000Z", amountText: "8", note: "pie")
        let both = try file("date,amount,note,external_id\n2026-01-04,8,pie,\(cake)\n2026-01-04,8,pie,\n")
        defer { try? FileManager.default.removeItem(atPath: both) }
        let third = try await db.importTransactions(asset: "Bank", path: both, partial: false, now: now, timeZone: utc)
        #expect(third.inserted == 1 && third.alreadyPresent == 1, "\(third)")
        // The reverse order, in a newer day than any stored row.
        let scone = ExternalKeys.contentKey(dateText: "2026-01-05T00:00:00.000Z", amountText: "9", note: "scone")
        let reversed = try file("date,amount,note,external_id\n2026-01-05,9,scone,\n2026-01-05,9,scone,\(scone)\n")
        defer { try? FileManager.default.removeItem(atPath: reversed) }
        let fourth = try await db.importTransactions(asset: "Bank", path: reversed, partial: false, now: now, timeZone: utc)
        #expect(fourth.inserted == 1 && fourth.alreadyPresent == 1, "\(fourth)")
        // Two identical rows of one file are two rows, and stay two when imported again.
        let twice = try file("date,amount,note\n2026-01-06,2,bus\n2026-01-06,2,bus\n")
        defer { try? FileManager.default.removeItem(atPath: twice) }
        #expect(try await db.importTransactions(asset: "Bank", path: twice, partial: false, now: now, timeZone: utc).inserted == 2)
        let repeated = try await db.importTransactions(asset: "Bank", path: twice, partial: false, now: now, timeZone: utc)
        #expect(repeated.inserted == 0 && repeated.alreadyPresent == 2, "\(repeated)")
        await #expect(throws: DomainError.self) {
            _ = try await db.addTransaction(asset: "Bank", amount: 5, date: try Timestamp.parse("2026-01-01T00:00:00.000Z", field: "date"),
                                            note: "coffee", externalID: keys[1], now: now, timeZone: utc)
        }
        #expect(try await db.transactions(TransactionFilter(limit: 20)).count == 7)
        #expect(try await db.check().ok)
    }

    /// The figures at "now" leave out rows dated after now, looked for only in accounts whose
    /// newest date (schema v15) is after now; every way a row goes in keeps that date, and
    /// `db.check` finds one left behind.
    @Test func rowsDatedLaterCountOnceTheirDateComes() async throws {
        let db = try SavingsDatabase.inMemory()
        for name in ["Bank", "Cash", "Card"] {
            _ = try await db.createAsset(try NewAsset(name: name, currency: "EUR", kind: "fiat", address: nil, notes: nil), now: now)
        }
        let day: TimeInterval = 86_400
        _ = try await db.addTransaction(asset: "Bank", amount: 10, date: now.addingTimeInterval(-day), note: nil, externalID: nil, now: now, timeZone: utc)
        _ = try await db.addTransaction(asset: "Cash", amount: 5, date: now.addingTimeInterval(10 * day), note: nil, externalID: nil, now: now, timeZone: utc)
        let path = try file("date,amount\n\(Timestamp.format(now.addingTimeInterval(-3 * day)).prefix(10)),4\n\(Timestamp.format(now.addingTimeInterval(-2 * day)).prefix(10)),3\n")
        defer { try? FileManager.default.removeItem(atPath: path) }
        let imported = try await db.importTransactions(asset: "Card", path: path, partial: false, now: now, timeZone: utc)
        #expect(imported.inserted == 2, "\(imported)")
        func newest() async throws -> [Date] {
            try await db.writer.read { db in
                try Int64.fetchAll(db, sql: "SELECT b.newest FROM asset a JOIN asset_balance b ON b.asset_id = a.id ORDER BY a.rowid")
                    .map(Timestamp.date(milliseconds:))
            }
        }
        let importedDay = try Timestamp.parse("\(Timestamp.format(now.addingTimeInterval(-2 * day)).prefix(10))T00:00:00.000Z", field: "date")
        #expect(try await newest() == [now.addingTimeInterval(-day), now.addingTimeInterval(10 * day), importedDay])
        _ = try await db.addTransaction(asset: "Card", amount: 7, date: now.addingTimeInterval(30 * day), note: nil, externalID: nil, now: now, timeZone: utc)
        #expect(try await newest() == [now.addingTimeInterval(-day), now.addingTimeInterval(10 * day), now.addingTimeInterval(30 * day)])
        func balances(at instant: Date) async throws -> [Decimal] {
            let portfolio = try await db.portfolio(now: instant, pivot: try CurrencyCode("EUR"))
            // In the order the assets were made.
            return ["Bank", "Cash", "Card"].map { name in portfolio.assets.first { $0.name == name }.flatMap { portfolio.balances[$0.id] } ?? 0 }
        }
        #expect(try await balances(at: now) == [10, 0, 7])
        #expect(try await balances(at: now.addingTimeInterval(11 * day)) == [10, 5, 7])
        #expect(try await balances(at: now.addingTimeInterval(31 * day)) == [10, 5, 14])
        // A row moved to a later date raises it; one left behind is reported.
        try await db.write { db in
            try db.execute(sql: "UPDATE asset_transaction SET date = date + 86400000 * 100 WHERE asset = (SELECT ref FROM asset_ref r JOIN asset a ON a.id = r.id WHERE a.name = 'Bank')")
        }
        #expect(try await balances(at: now.addingTimeInterval(31 * day)) == [0, 5, 14])
        #expect(try await db.check().ok)
        try await db.writer.write { db in try db.execute(sql: "UPDATE asset_balance SET newest = newest - 86400000 * 200") }
        let report = try await db.check()
        #expect(!report.ok && report.summary.contains("newest"), "\(report.summary)")
    }
}
