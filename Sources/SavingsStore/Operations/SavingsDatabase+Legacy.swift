import Foundation
import GRDB
import SavingsCore

/// What a legacy import wrote (or, for a dry run, would write).
public struct LegacyImportOutcome: Sendable, Equatable {
    public var alreadyImported = false
    public var inserted: [String: Int] = [:]
    /// Rows whose id was already present (a partly overlapping earlier import).
    public var alreadyPresent: [String: Int] = [:]
}

/// A dry run's outcome travels out of the rolled-back transaction as an error.
struct DryRunFinished: Error {
    var outcome: LegacyImportOutcome
}

extension SavingsDatabase {
    /// The names already used, for the importer's clash handling.
    public func takenNames() async throws -> (goals: [String: UUID], assets: [String: UUID]) {
        try await read { db in
            func names(_ table: String) throws -> [String: UUID] {
                var result: [String: UUID] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT name_key, id FROM \(table)") {
                    if let id = UUID(uuidString: row["id"]) { result[row["name_key"]] = id }
                }
                return result
            }
            return (try names("goal"), try names("asset"))
        }
    }

    /// Writes a legacy import in one transaction: rows already present are left alone, the
    /// invariants are verified before commit, and a document imported before changes nothing.
    /// `frozen` renders an executed month's snapshot and (for closed months) frozen result.
    public func legacyImport(_ plan: LegacyImportPlan, fingerprint: String, dryRun: Bool, now: Date, timeZone: TimeZone,
                             frozen: @escaping @Sendable (LegacyImportPlan.Month) -> (snapshot: String, completed: String?))
        async throws -> LegacyImportOutcome {
        let stamp = Timestamp.format(Timestamp.truncatedToMilliseconds(now))
        do {
            return try await write { db in
                var outcome = LegacyImportOutcome()
                let marker = "legacy_import.\(fingerprint)"
                if try String.fetchOne(db, sql: "SELECT value FROM metadata WHERE key = ?", arguments: [marker]) != nil {
                    outcome.alreadyImported = true
                    if dryRun { throw DryRunFinished(outcome: outcome) }
                    return outcome
                }
                func count(_ kind: String, _ inserted: Bool) {
                    if inserted { outcome.inserted[kind, default: 0] += 1 } else { outcome.alreadyPresent[kind, default: 0] += 1 }
                }
                func exists(_ sql: String, _ arguments: StatementArguments) throws -> Bool {
                    try Int.fetchOne(db, sql: "SELECT EXISTS (\(sql))", arguments: arguments) == 1
                }
                for goal in plan.goals {
                    let fresh = try !exists("SELECT 1 FROM goal WHERE id = ?", [StoreKey.id(goal.id)])
                    if fresh { try GoalRecord(goal).insert(db) }
                    count("goals", fresh)
                }
                for asset in plan.assets {
                    let fresh = try !exists("SELECT 1 FROM asset WHERE id = ?", [StoreKey.id(asset.id)])
                    if fresh { try AssetRecord(asset).insert(db) }
                    count("assets", fresh)
                }
                for transaction in plan.transactions {
                    let asset = try Self.assetRef(StoreKey.id(transaction.assetID), db)
                    let fresh = try TransactionRecord.fetchOne(publicID: transaction.id, db) == nil
                        && (try ExternalKeys.find(transaction, asset: asset, db)) == nil
                    if fresh { _ = try Self.insertRow(transaction, asset: asset, keepID: true, db) }
                    count("transactions", fresh)
                }
                for allocation in plan.allocations {
                    let asset = StoreKey.id(allocation.assetID), goal = StoreKey.id(allocation.goalID)
                    let pair = try HistoryTable.pairRefs(assetID: allocation.assetID, goalID: allocation.goalID, db)
                    let fresh = try !exists("SELECT 1 FROM allocation_history WHERE asset = ? AND goal = ?", [pair.asset, pair.goal])
                    count("allocations", fresh)
                    guard fresh else { continue }
                    let entry = AllocationHistoryEntry(id: LegacyDocument.uuid("allocation:\(asset):\(goal)", kind: "history"), assetID: allocation.assetID,
                                                       goalID: allocation.goalID, amount: allocation.amount, timestamp: allocation.at,
                                                       createdAt: now, monthLabel: MonthLabel(allocation.at, in: timeZone))
                    try HistoryTable.insert([entry], asset: pair.asset, goal: pair.goal, keepIDs: true, db)
                    try db.execute(sql: """
                        INSERT INTO allocation (asset_id, goal_id, amount, updated_at, legacy_percentage) VALUES (?, ?, ?, ?, ?)
                        """, arguments: [asset, goal, Amount.plainText(allocation.amount), stamp, Amount.plainText(allocation.legacyPercentage)])
                }
                for monthlyPlan in plan.plans {
                    let fresh = try PlanTable.ref(of: monthlyPlan.id, db) == nil && !exists("""
                        SELECT 1 FROM monthly_plan WHERE goal = (SELECT ref FROM goal_ref WHERE id = ?) AND month_label = ?
                        """, [StoreKey.id(monthlyPlan.goalID), monthlyPlan.month.description])
                    if fresh { try PlanTable.insert(monthlyPlan, keepID: true, db) }
                    count("plans", fresh)
                }
                for contribution in plan.contributions {
                    let fresh = try !exists("SELECT 1 FROM legacy_contribution WHERE id = ?", [StoreKey.id(contribution.id)])
                    count("legacy_contributions", fresh)
                    guard fresh else { continue }
                    let planRef = try PlanTable.ref(of: contribution.planID, db)
                    try db.execute(sql: """
                        INSERT INTO legacy_contribution (id, goal_id, asset_id, plan_ref, amount, currency, date, month_label, source_type, created_at)
                        VALUES (?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
                        """, arguments: [StoreKey.id(contribution.id), StoreKey.id(contribution.goalID), contribution.assetID.map(StoreKey.id),
                                         planRef, Amount.plainText(contribution.amount),
                                         contribution.currency.code, Timestamp.format(contribution.date), contribution.month.description,
                                         contribution.sourceType, stamp])
                }
                for month in plan.months {
                    let fresh = try !exists("SELECT 1 FROM execution_record WHERE month_label = ?", [month.month.description])
                    count("executed_months", fresh)
                    guard fresh else { continue }
                    let rendered = frozen(month)
                    try db.execute(sql: """
                        INSERT INTO execution_record (month_label, status, started_at, completed_at, can_undo_until, snapshot, baseline_rows,
                                                      completed, created_at, updated_at)
                        VALUES (?, ?, ?, ?, ?, ?, '', ?, ?, ?)
                        """, arguments: [month.month.description, month.closed ? "closed" : "executing", Timestamp.format(month.startedAt),
                                         month.completedAt.map(Timestamp.format), month.completedAt.map(Timestamp.format) ?? stamp,
                                         rendered.snapshot, rendered.completed, stamp, stamp])
                    if month.closed { try Self.setPlanStates(month.month, to: .completed, db) }
                }
                for archived in plan.archived {
                    try db.execute(sql: """
                        INSERT INTO legacy_archive (kind, legacy_id, reason, document, created_at) VALUES (?, ?, ?, ?, ?)
                        ON CONFLICT(kind, legacy_id) DO NOTHING
                        """, arguments: [archived.kind, archived.legacyID, archived.reason, archived.raw, stamp])
                    count("archived", db.changesCount > 0)
                }
                try Self.verifyLegacyImport(plan, db)
                try db.execute(sql: "INSERT INTO metadata (key, value) VALUES (?, ?)", arguments: [marker, stamp])
                try db.execute(sql: "INSERT INTO metadata (key, value) VALUES ('legacy_import.month', ?) ON CONFLICT(key) DO NOTHING",
                               arguments: [MonthLabel(now, in: timeZone).description])
                if dryRun { throw DryRunFinished(outcome: outcome) }
                return outcome
            }
        } catch let finished as DryRunFinished {
            return finished.outcome
        }
    }

    /// SPEC 8 step 6: no duplicate plan, every plan labelled, no over-allocation, and the
    /// general invariants. Any failure rolls the whole import back.
    static func verifyLegacyImport(_ plan: LegacyImportPlan, _ db: Database) throws {
        for asset in Set(plan.allocations.map(\.assetID)) {
            let id = StoreKey.id(asset)
            let allocated = try String.fetchAll(db, sql: "SELECT amount FROM allocation WHERE asset_id = ?", arguments: [id])
                .reduce(Decimal(0)) { $0 + (try Amount.parse($1)) }
            let balance = try String.fetchAll(db, sql: "SELECT amount FROM asset_transaction WHERE asset = ?", arguments: [try assetRef(id, db)])
                .reduce(Decimal(0)) { $0 + (try Amount.parse($1)) }
            guard allocated <= max(balance, 0) else {
                throw DomainError(.invalidState, "verification failed: asset \(id) would be over-allocated (\(Amount.plainText(allocated)) of \(Amount.plainText(balance))); nothing was imported")
            }
        }
        let report = try check(db, integrity: false)
        guard report.ok else {
            throw DomainError(.invalidState, "verification failed: \(report.summary.prefix(500)); nothing was imported")
        }
    }

    /// Contributions the earlier app recorded for a goal, by month, in the goal's currency,
    /// and the month the import happened (history before it comes from these).
    public func legacyContributions(goal: UUID, currency: CurrencyCode) async throws -> (importMonth: MonthLabel?, byMonth: [MonthLabel: Decimal]) {
        try await read { db in
            let importMonth = try String.fetchOne(db, sql: "SELECT value FROM metadata WHERE key = 'legacy_import.month'")
                .flatMap { try? MonthLabel(parsing: $0) }
            var byMonth: [MonthLabel: Decimal] = [:]
            for row in try Row.fetchAll(db, sql: "SELECT month_label, amount FROM legacy_contribution WHERE goal_id = ? AND currency = ?",
                                        arguments: [StoreKey.id(goal), currency.code]) {
                guard let month = try? MonthLabel(parsing: row["month_label"]), let amount = try? Amount.parse(row["amount"]) else { continue }
                byMonth[month, default: 0] += amount
            }
            return (importMonth, byMonth)
        }
    }
}
