import Foundation
import GRDB
import SavingsCore
import Testing
@testable import SavingsStore

/// Schema v14: allocation history keyed by integers (its ref, its pair's asset and goal refs),
/// instants as integer milliseconds, ids clients hold kept.
@Suite struct HistoryTableTests {
    let utc = TimeZone(identifier: "UTC")!
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let assetID = "5e912fc5-4d4f-4c1f-8348-9ec4dc203b0c"
    let tripID = "0b4c6a3e-6a55-4f6e-9d0c-3f3c6f1d2a10"
    let carID = "7d1e2f30-1111-4a2b-9c3d-4e5f60718293"
    /// The v13 rows' ids, in the order they were written (created_at): Trip in January, Car,
    /// Trip in February (with a contribution).
    let historyIDs = ["018f2a6e-0001-7abc-8def-0123456789ab", "018f2a6e-0002-7abc-8def-0123456789ab",
                      "6a9e3c1d-2b4f-4e8a-9c7d-0e1f2a3b4c5d"]
    let contributionID = "c0ffee00-0000-4000-8000-000000000002"

    func temporaryPath() throws -> String { try StoreTestSupport.databasePath("v14") }

    /// A database as v13 wrote it: one account of 100 EUR, two goals, three history rows with
    /// text keys, a contribution naming the newest of them.
    func writeV13Database(at path: String) throws {
        try StoreTestSupport.writeDatabase(at: path, upTo: TransactionTable.migration) { db in
            let stamp = "2026-01-01T00:00:00.000Z"
            try db.execute(sql: """
                INSERT INTO goal (id, name, name_key, currency, target_amount, deadline, start_date, created_at, updated_at) VALUES
                    (?, 'Trip', 'trip', 'EUR', '1000', '2027-06-30', '2026-01-01', ?, ?),
                    (?, 'Car', 'car', 'EUR', '5000', '2028-06-30', '2026-01-01', ?, ?);
                INSERT INTO asset (id, name, name_key, currency, kind, created_at, updated_at) VALUES (?, 'Bank', 'bank', 'EUR', 'fiat', ?, ?);
                INSERT INTO asset_transaction (asset, date, ref, amount, kind, created_at) VALUES (1, 1767225600000, 1, '100', 2, 1767225600000);
                UPDATE transaction_counter SET last = 1;
                INSERT INTO asset_balance (asset_id, total) VALUES (?, '100');
                INSERT INTO allocation (asset_id, goal_id, amount, updated_at) VALUES (?, ?, '50', ?), (?, ?, '20', ?);
                INSERT INTO allocation_history (id, asset_id, goal_id, amount, timestamp, created_at, month_label) VALUES
                    (?, ?, ?, '30', '2026-01-01T00:00:00.000Z', '2026-01-01T00:00:00.000Z', '2026-01'),
                    (?, ?, ?, '20', '2026-01-15T12:00:00.000Z', '2026-01-15T12:00:00.000Z', '2026-01'),
                    (?, ?, ?, '50', '2026-02-01T00:00:00.000Z', '2026-11-19T00:00:00.000Z', '2026-02');
                INSERT INTO contribution (id, goal_id, asset_id, transaction_ref, history_id, amount, date, created_at)
                VALUES (?, ?, ?, NULL, ?, '20', '2026-02-01T00:00:00.000Z', ?);
                """, arguments: [tripID, stamp, stamp, carID, stamp, stamp, assetID, stamp, stamp, assetID,
                                 assetID, tripID, stamp, assetID, carID, stamp,
                                 historyIDs[0], assetID, tripID, historyIDs[1], assetID, carID, historyIDs[2], assetID, tripID,
                                 contributionID, tripID, assetID, historyIDs[2], Timestamp.format(now.addingTimeInterval(-60))])
        }
    }

    /// The migration keeps every id, amount, instant and month, and the contribution's link;
    /// new rows take refs after the last one and the ids derived from them.
    @Test func aV13DatabaseMigratesKeepingHistoryIDs() async throws {
        let path = try temporaryPath()
        try writeV13Database(at: path)
        let db = try SavingsDatabase.open(path: path)
        #expect(try await db.schemaVersion() == Schema.migrator.migrations.count)
        let report = try await db.check()
        #expect(report.ok, "\(report.summary)")
        let history = try await db.allocationHistory(asset: nil, goal: nil, from: nil, to: nil)
        #expect(history.map { StoreKey.id($0.id) } == historyIDs)
        #expect(history.map { StoreKey.id($0.goalID) } == [tripID, carID, tripID])
        #expect(history.map(\.amount) == [30, 20, 50])
        #expect(history.map { Timestamp.format($0.timestamp) } == ["2026-01-01T00:00:00.000Z", "2026-01-15T12:00:00.000Z", "2026-02-01T00:00:00.000Z"])
        #expect(history.map { Timestamp.format($0.createdAt) } == ["2026-01-01T00:00:00.000Z", "2026-01-15T12:00:00.000Z", "2026-11-19T00:00:00.000Z"])
        #expect(history.map(\.monthLabel.description) == ["2026-01", "2026-01", "2026-02"])
        let stored = try await db.writer.read { db in
            try Row.fetchAll(db, sql: """
                SELECT ref, asset, goal, typeof(timestamp) AS t, typeof(created_at) AS c, length(uuid) AS n FROM allocation_history ORDER BY ref
                """).map { "\($0["ref"] as Int64) \($0["asset"] as Int64) \($0["goal"] as Int64) \($0["t"] as String) \($0["c"] as String) \($0["n"] as Int)" }
        }
        #expect(stored == ["1 1 1 integer integer 16", "2 1 2 integer integer 16", "3 1 1 integer integer 16"])
        #expect(try await db.writer.read { db in try Int64.fetchOne(db, sql: "SELECT history_ref FROM contribution") } == 3)
        // Filters read the integer keys.
        #expect(try await db.allocationHistory(asset: "Bank", goal: "Car", from: nil, to: nil).map { StoreKey.id($0.id) } == [historyIDs[1]])
        let february = try Timestamp.parse("2026-02-01T00:00:00.000Z", field: "from")
        #expect(try await db.allocationHistory(asset: nil, goal: nil, from: february, to: nil).map { StoreKey.id($0.id) } == [historyIDs[2]])
        #expect(try await db.transactions(TransactionFilter(goal: "Car", limit: 5)).count == 1)
        // A new row takes the next ref and the id derived from it.
        _ = try await db.setAllocation(asset: "Bank", goal: "Car", amount: 25, now: now, timeZone: utc)
        let newest = try await db.allocationHistory(asset: nil, goal: "Car", from: nil, to: nil)
        #expect(newest.map(\.id) == [UUID(uuidString: historyIDs[1])!, DerivedID.history.derived(ref: 4)])
        #expect(newest.last?.amount == 25)
        // The contribution still names its row: undoing it takes the row out.
        _ = try await db.undoContribution(contributionID, undoWindow: 3_600, now: now)
        #expect(try await db.allocationHistory(asset: nil, goal: "Trip", from: nil, to: nil).map { StoreKey.id($0.id) } == [historyIDs[0]])
        let targets = try await db.writer.read { db in try SavingsDatabase.allocations(assetID: assetID, db) }
        #expect(targets == [UUID(uuidString: tripID)!: 30, UUID(uuidString: carID)!: 25])
        // A new contribution (schema v17) takes the next ref and the id derived from it.
        let contribution = try await db.contribute(goal: "Trip", amount: 5, asset: "Bank", date: now, note: nil, now: now, timeZone: utc)
        #expect(contribution.id == DerivedID.contributions.derived(ref: 2))
        #expect(try await db.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT ref, goal, asset, length(uuid) AS n FROM contribution ORDER BY ref").map { [$0[0], $0[1], $0[2], $0[3]] as [Int64?] }
        } == [[1, 1, 1, 16], [2, 1, 1, nil]])
        _ = try await db.undoContribution(StoreKey.id(contribution.id), undoWindow: 3_600, now: now)
        await #expect(throws: DomainError.self) { _ = try await db.undoContribution(StoreKey.id(contribution.id), undoWindow: 3_600, now: now) }
        // A goal deleted takes its rows with it.
        _ = try await db.deleteGoal("Car")
        #expect(try await db.allocationHistory(asset: nil, goal: nil, from: nil, to: nil).count == 1)
        #expect(try await db.check().ok)
        try db.close()
    }

    /// The v13 database upgraded, Car's allocation set to each of `targets` and `deposit` made
    /// (new rows, with derived ids), and its export.
    func exported(targets: [Decimal], deposit: Decimal? = nil) async throws -> (SavingsDatabase, CollectedRows) {
        let path = try temporaryPath()
        try writeV13Database(at: path)
        let source = try SavingsDatabase.open(path: path)
        for target in targets { _ = try await source.setAllocation(asset: "Bank", goal: "Car", amount: target, now: now, timeZone: utc) }
        if let deposit {
            _ = try await source.addTransaction(asset: "Bank", amount: deposit, date: now, note: nil, externalID: nil, now: now, timeZone: utc)
        }
        let rows = CollectedRows()
        try await source.export(into: rows)
        return (source, rows)
    }

    /// A document keeps the ids of both kinds (kept from before v14, derived from a ref) and
    /// a contribution's link, and a restore puts them back as they were.
    @Test func aRestoreKeepsHistoryIDsAndLinks() async throws {
        let (source, rows) = try await exported(targets: [25])
        #expect(rows.sections["contributions"]?.first?["history_id"] == .text(historyIDs[2]))
        #expect(rows.sections["allocation_history"]?.last?["id"] == .text(StoreKey.id(DerivedID.history.derived(ref: 4))))
        let target = try SavingsDatabase.inMemory()
        _ = try await target.importData(rows.sections, replace: false)
        let before = try await source.allocationHistory(asset: nil, goal: nil, from: nil, to: nil)
        #expect(try await target.allocationHistory(asset: nil, goal: nil, from: nil, to: nil) == before)
        let again = CollectedRows()
        try await target.export(into: again)
        #expect(again.sections["contributions"] == rows.sections["contributions"])
        // Rows keeping ids of their own come after the derived ones: the same rows.
        #expect(again.sections["allocation_history"].map { Array($0.dropFirst()) } == rows.sections["allocation_history"].map { Array($0.dropLast()) })
        #expect(again.sections["allocation_history"]?.first == rows.sections["allocation_history"]?.last)
        // The next row of the restored database comes after every ref it holds.
        _ = try await target.setAllocation(asset: "Bank", goal: "Car", amount: 26, now: now, timeZone: utc)
        #expect(try await target.allocationHistory(asset: nil, goal: "Car", from: nil, to: nil).last?.id == DerivedID.history.derived(ref: 8))
        _ = try await target.undoContribution(contributionID, undoWindow: 3_600, now: now)
        #expect(try await target.check().ok)
        try source.close()
    }

    /// A document replacing a database whose counters stand in the middle of the document's
    /// refs goes back whole: rows keeping ids of their own take refs after every derived one.
    @Test func aRestoreOverAnyCounterKeepsEveryID() async throws {
        let (source, rows) = try await exported(targets: [25, 24], deposit: 1)
        let target = try SavingsDatabase.inMemory()
        try await target.write { db in
            for counter in ["history_counter", "transaction_counter", "plan_counter", "contribution_counter"] {
                try db.execute(sql: "UPDATE \(counter) SET last = 3")
            }
        }
        _ = try await target.importData(rows.sections, replace: true)
        let again = CollectedRows()
        try await target.export(into: again)
        func byID(_ rows: [TransferRow]?) -> [TransferRow] {
            func id(_ row: TransferRow) -> String { if case .text(let text)? = row["id"] { text } else { "" } }
            return (rows ?? []).sorted { id($0) < id($1) }
        }
        for section in ["allocation_history", "transactions", "contributions"] {
            #expect(byID(again.sections[section]) == byID(rows.sections[section]), "\(section)")
            #expect(!(rows.sections[section] ?? []).isEmpty, "\(section)")
        }
        #expect(try await target.check().ok)
        try source.close()
    }

    /// Each query of the history reads the index made for it, never a whole scan or a sort;
    /// no other index is kept.
    @Test func queriesReadTheirIndexes() async throws {
        let database = try SavingsDatabase.inMemory()
        let plans = try await database.writer.read { db in
            try StoreTestSupport.queryPlans([
                // An allocation change: the row in force, the later rows, the newest created_at.
                "SELECT \(HistoryTable.columns) FROM \(HistoryTable.from) WHERE h.asset = 1 AND h.goal = 2 AND h.timestamp <= 5 ORDER BY h.timestamp DESC, h.created_at DESC LIMIT 1",
                "SELECT \(HistoryTable.columns) FROM \(HistoryTable.from) WHERE h.asset = 1 AND h.goal = 2 AND h.timestamp > 5 ORDER BY h.timestamp, h.created_at, h.ref",
                "SELECT MAX(created_at) FROM allocation_history WHERE asset = 1 AND goal = 2",
                // Execution windows: the pairs' goals, the changes in a window, the first after it.
                "SELECT goal FROM allocation_history WHERE asset = 1 AND goal > 2 ORDER BY goal LIMIT 1",
                "SELECT \(HistoryTable.columns) FROM \(HistoryTable.from) WHERE h.asset = 1 AND h.timestamp > 5 AND h.timestamp <= 9 ORDER BY h.timestamp, h.created_at",
                "SELECT MIN(timestamp) FROM allocation_history WHERE asset = 1 AND timestamp > 9",
                // By goal; by public id.
                "SELECT DISTINCT asset FROM allocation_history WHERE goal = 2",
                "SELECT \(HistoryTable.columns) FROM \(HistoryTable.from) WHERE h.uuid = x'00112233445566778899aabbccddeeff' ORDER BY h.timestamp, h.created_at, h.ref",
                "SELECT \(HistoryTable.columns) FROM \(HistoryTable.from) WHERE h.ref = 3 ORDER BY h.timestamp, h.created_at, h.ref",
            ], db)
        }
        let expected = ["allocation_history_by_pair", "allocation_history_by_pair", "allocation_history_by_pair_created",
                        "allocation_history_by_pair", "allocation_history_by_asset_time", "allocation_history_by_asset_time",
                        "allocation_history_by_goal", "allocation_history_by_uuid", "INTEGER PRIMARY KEY (rowid=?)"]
        for (number, (plan, index)) in zip(plans, expected).enumerated() {
            #expect(plan.contains(index), "\(plan)")
            #expect(!plan.contains("SCAN h") && !plan.contains("SCAN allocation_history"), "\(plan)")
            // The assets of one goal are made distinct in memory (a few, from that goal's rows).
            #expect(number == 6 || !plan.contains("TEMP B-TREE"), "\(plan)")
        }
        let indexes = try await database.writer.read { db in
            try String.fetchAll(db, sql: "SELECT name FROM sqlite_master WHERE type = 'index' AND tbl_name = 'allocation_history' AND sql IS NOT NULL ORDER BY name")
        }
        #expect(indexes == ["allocation_history_by_asset_time", "allocation_history_by_goal", "allocation_history_by_pair",
                            "allocation_history_by_pair_created", "allocation_history_by_uuid"])
    }
}

