import Foundation
import GRDB
import SavingsCore
import Testing
@testable import SavingsStore

/// Schema v16: monthly plans keyed by integers (their ref, their goal's ref), the ids clients
/// hold kept; the earlier app's contributions name their plan by ref.
@Suite struct PlanTableTests {
    let now = Date(timeIntervalSince1970: 1_795_000_000)
    let tripID = "0b4c6a3e-6a55-4f6e-9d0c-3f3c6f1d2a10"
    let carID = "7d1e2f30-1111-4a2b-9c3d-4e5f60718293"
    /// The v15 plans' ids: Trip in October (a stale draft), Car in October, Trip in November.
    let planIDs = ["9a0e3c1d-2b4f-4e8a-9c7d-0e1f2a3b4c01", "1a0e3c1d-2b4f-4e8a-9c7d-0e1f2a3b4c02", "5a0e3c1d-2b4f-4e8a-9c7d-0e1f2a3b4c03"]
    let legacyID = "c0ffee00-0000-4000-8000-0000000000aa"

    func temporaryPath() throws -> String { try StoreTestSupport.databasePath("v16") }

    /// A database as v15 wrote it: two goals, three plans with text keys (two made in the same
    /// millisecond), a contribution of the earlier app naming one of them.
    func writeV15Database(at path: String) throws {
        try StoreTestSupport.writeDatabase(at: path, upTo: "v15-balance-newest") { db in
            let stamp = "2026-10-01T00:00:00.000Z", later = "2026-11-01T00:00:00.000Z"
            try db.execute(sql: """
                INSERT INTO goal (id, name, name_key, currency, target_amount, deadline, start_date, created_at, updated_at) VALUES
                    (?, 'Trip', 'trip', 'EUR', '1000', '2027-06-30', '2026-01-01', ?, ?),
                    (?, 'Car', 'car', 'EUR', '5000', '2028-06-30', '2026-01-01', ?, ?);
                INSERT INTO monthly_plan (id, goal_id, month_label, currency, required_monthly, remaining_amount, months_remaining, status, state,
                                          custom_amount, created_at, updated_at) VALUES
                    (?, ?, '2026-10', 'EUR', '100', '900', 9, 'on_track', 'draft', NULL, ?, ?),
                    (?, ?, '2026-10', 'EUR', '200', '4800', 24, 'on_track', 'draft', '150', ?, ?),
                    (?, ?, '2026-11', 'EUR', '100', '800', 8, 'on_track', 'draft', NULL, ?, ?);
                INSERT INTO legacy_contribution (id, goal_id, asset_id, plan_id, amount, currency, date, month_label, source_type, created_at)
                VALUES (?, ?, NULL, ?, '100', 'EUR', '2026-10-05T00:00:00.000Z', '2026-10', 'manual', ?);
                """, arguments: [tripID, stamp, stamp, carID, stamp, stamp,
                                 planIDs[0], tripID, stamp, stamp, planIDs[1], carID, stamp, stamp, planIDs[2], tripID, later, later,
                                 legacyID, tripID, planIDs[0], stamp])
        }
    }

    /// The migration keeps every plan's id, goal, figures and order, and the earlier app's link;
    /// new plans take refs after the last one and the ids derived from them.
    @Test func aV15DatabaseMigratesKeepingPlanIDs() async throws {
        let path = try temporaryPath()
        try writeV15Database(at: path)
        let db = try SavingsDatabase.open(path: path)
        #expect(try await db.schemaVersion() == Schema.migrator.migrations.count)
        let report = try await db.check()
        #expect(report.ok, "\(report.summary)")
        let october = try MonthLabel(parsing: "2026-10"), november = try MonthLabel(parsing: "2026-11")
        // Plans made in the same millisecond keep the order their ids gave them.
        let plans = try await db.plans(month: october)
        #expect(plans.map { StoreKey.id($0.id) } == [planIDs[1], planIDs[0]])
        #expect(plans.map { StoreKey.id($0.goalID) } == [carID, tripID])
        #expect(plans.map(\.customAmount) == [150, nil] && plans.map(\.requirement.monthsRemaining) == [24, 9])
        #expect(try await db.plan(.id(planIDs[2])).month == november)
        #expect(try await db.plan(.goal("Car", october)).id == UUID(uuidString: planIDs[1]))
        let stored = try await db.writer.read { db in
            try Row.fetchAll(db, sql: "SELECT ref, goal, length(uuid) AS n FROM monthly_plan ORDER BY ref").map { [$0["ref"] as Int64, $0["goal"], $0["n"]] }
        }
        #expect(stored == [[1, 2, 16], [2, 1, 16], [3, 1, 16]])
        #expect(try await db.writer.read { db in try Int64.fetchOne(db, sql: "SELECT plan_ref FROM legacy_contribution") } == 2)
        // A new plan takes the next ref and the id derived from it.
        let requirement = Requirement(monthsRemaining: 7, requiredMonthly: 100, remaining: 700, status: .onTrack)
        let created = try await db.createPlans(month: try MonthLabel(parsing: "2026-12"),
                                               requirements: [UUID(uuidString: tripID)!: requirement, UUID(uuidString: carID)!: requirement], now: now)
        #expect(created.created == [DerivedID.plans.derived(ref: 4), DerivedID.plans.derived(ref: 5)] || created.created == [DerivedID.plans.derived(ref: 5), DerivedID.plans.derived(ref: 4)])
        #expect(Set(created.plans.map(\.id)) == Set(created.created))
        let overridden = try await db.updatePlan(.id(StoreKey.id(created.created[0])), now: now) { $0.customAmount = 42 }
        #expect(try await db.plan(.id(StoreKey.id(created.created[0]))) == overridden)
        // A stale draft deleted loses the earlier app's link to it, not the contribution.
        #expect(try await db.stalePlans(current: november, offset: 0, limit: 10).total == 2)
        #expect(try await db.resolveStale(planIDs[0], action: .delete, current: november, now: now) == nil)
        #expect(try await db.writer.read { db in try Int64?.fetchOne(db, sql: "SELECT plan_ref FROM legacy_contribution") } == .some(nil))
        // A goal deleted takes its plans with it.
        _ = try await db.deleteGoal("Car")
        #expect(try await db.plans(month: october).isEmpty)
        #expect(try await db.check().ok)
        try db.close()
    }

    /// A document keeps plan ids of both kinds and the earlier app's link, and a restore puts
    /// them back as they were.
    @Test func aRestoreKeepsPlanIDsAndLinks() async throws {
        let path = try temporaryPath()
        try writeV15Database(at: path)
        let source = try SavingsDatabase.open(path: path)
        let requirement = Requirement(monthsRemaining: 7, requiredMonthly: 100, remaining: 700, status: .onTrack)
        _ = try await source.createPlans(month: try MonthLabel(parsing: "2026-12"), requirements: [UUID(uuidString: tripID)!: requirement], now: now)
        let rows = CollectedRows()
        try await source.export(into: rows)
        #expect(rows.sections["legacy_contributions"]?.first?["plan_id"] == .text(planIDs[0]))
        #expect(rows.sections["plans"]?.contains { $0["id"] == .text(StoreKey.id(DerivedID.plans.derived(ref: 4))) } == true)
        let target = try SavingsDatabase.inMemory()
        _ = try await target.importData(rows.sections, replace: false)
        let again = CollectedRows()
        try await target.export(into: again)
        // The same rows (the document's plans are in month and goal order, whatever their refs).
        for section in ["plans", "legacy_contributions"] { #expect(again.sections[section] == rows.sections[section], "\(section)") }
        let december = try MonthLabel(parsing: "2026-12")
        #expect(try await target.plans(month: december) == (try await source.plans(month: december)))
        // The restored database goes on after every ref it holds: the derived one (4), then the
        // three plans keeping their own ids (5, 6, 7).
        let created = try await target.createPlans(month: december, requirements: [UUID(uuidString: carID)!: requirement], now: now)
        #expect(created.created == [DerivedID.plans.derived(ref: 8)])
        #expect(try await target.check().ok)
        try source.close()
    }

    /// Each query of the plans reads an index made for it, never a whole scan.
    @Test func queriesReadTheirIndexes() async throws {
        let database = try SavingsDatabase.inMemory()
        let plans = try await database.writer.read { db in
            try StoreTestSupport.queryPlans([
                "SELECT \(PlanRecord.columns) FROM \(PlanRecord.from) WHERE p.month_label = '2026-11' ORDER BY p.created_at, p.ref",
                "SELECT \(PlanRecord.columns) FROM \(PlanRecord.from) WHERE p.goal = 2 AND p.month_label = '2026-11' ORDER BY p.created_at, p.ref",
                "SELECT \(PlanRecord.columns) FROM \(PlanRecord.from) WHERE p.uuid = x'00112233445566778899aabbccddeeff' ORDER BY p.created_at, p.ref",
                "SELECT \(PlanRecord.columns) FROM \(PlanRecord.from) WHERE p.ref = 3 ORDER BY p.created_at, p.ref",
            ], db)
        }
        let expected = ["monthly_plan_by_month", "sqlite_autoindex_monthly_plan_1", "monthly_plan_by_uuid", "INTEGER PRIMARY KEY (rowid=?)"]
        for (plan, index) in zip(plans, expected) {
            #expect(plan.contains(index) && !plan.contains("SCAN p"), "\(plan)")
        }
    }
}

