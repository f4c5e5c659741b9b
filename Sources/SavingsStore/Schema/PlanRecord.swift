import Foundation
import GRDB
import SavingsCore

/// How schema v16 keeps monthly plans, a table that grows by a row per goal and month: by
/// integers, as v14 keeps allocation history.
///
/// - `monthly_plan.ref` is the rowid, handed out by `plan_counter` (never reused). A plan's
///   public id is derived from it (`DerivedID.plans`) unless the row has its own 16 bytes in `uuid`:
///   plans written before v16, put back from a document or brought by the earlier app's export.
/// - `goal` is the goal's `goal_ref` key; `(goal, month_label)` stays unique.
/// - The earlier app's contributions name their plan by `legacy_contribution.plan_ref`.
enum PlanTable {
    static let migration = "v16-plans-by-integer-keys"

    static func migrate(_ db: Database) throws {
        let before = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM monthly_plan") ?? 0
        try db.execute(sql: """
            CREATE TABLE plan_v16 (
                ref INTEGER PRIMARY KEY,
                goal INTEGER NOT NULL REFERENCES goal_ref(ref) ON DELETE CASCADE,
                month_label TEXT NOT NULL,
                currency TEXT NOT NULL,
                required_monthly TEXT NOT NULL,
                remaining_amount TEXT NOT NULL,
                months_remaining INTEGER NOT NULL,
                status TEXT NOT NULL CHECK (status IN ('on_track', 'attention', 'critical', 'completed')),
                state TEXT NOT NULL CHECK (state IN ('draft', 'executing', 'completed')),
                custom_amount TEXT,
                is_protected INTEGER NOT NULL DEFAULT 0,
                is_skipped INTEGER NOT NULL DEFAULT 0,
                needs_review INTEGER NOT NULL DEFAULT 0,
                created_at TEXT NOT NULL,
                updated_at TEXT NOT NULL,
                uuid BLOB,
                UNIQUE (goal, month_label)
            );
            INSERT INTO plan_v16 (goal, month_label, currency, required_monthly, remaining_amount, months_remaining, status, state,
                                  custom_amount, is_protected, is_skipped, needs_review, created_at, updated_at, uuid)
                SELECT g.ref, p.month_label, p.currency, p.required_monthly, p.remaining_amount, p.months_remaining, p.status, p.state,
                       p.custom_amount, p.is_protected, p.is_skipped, p.needs_review, p.created_at, p.updated_at, uuid_blob(p.id)
                  FROM monthly_plan p JOIN goal_ref g ON g.id = p.goal_id ORDER BY p.created_at, p.id;
            CREATE UNIQUE INDEX plan_v16_by_uuid ON plan_v16(uuid) WHERE uuid IS NOT NULL;
            CREATE TABLE plan_counter (
                id INTEGER PRIMARY KEY CHECK (id = 1),
                last INTEGER NOT NULL
            );
            INSERT INTO plan_counter (id, last) VALUES (1, COALESCE((SELECT MAX(ref) FROM plan_v16), 0));
            CREATE TABLE legacy_contribution_v16 (
                id TEXT PRIMARY KEY NOT NULL,
                goal_id TEXT NOT NULL REFERENCES goal(id) ON DELETE CASCADE,
                asset_id TEXT REFERENCES asset(id) ON DELETE SET NULL,
                plan_ref INTEGER REFERENCES monthly_plan(ref) ON DELETE SET NULL,
                amount TEXT NOT NULL,
                currency TEXT NOT NULL,
                date TEXT NOT NULL,
                month_label TEXT NOT NULL,
                source_type TEXT,
                created_at TEXT NOT NULL
            );
            INSERT INTO legacy_contribution_v16 (id, goal_id, asset_id, plan_ref, amount, currency, date, month_label, source_type, created_at)
                SELECT l.id, l.goal_id, l.asset_id, p.ref, l.amount, l.currency, l.date, l.month_label, l.source_type, l.created_at
                  FROM legacy_contribution l LEFT JOIN plan_v16 p ON p.uuid = uuid_blob(l.plan_id) ORDER BY l.rowid;
            DROP TABLE legacy_contribution;
            ALTER TABLE legacy_contribution_v16 RENAME TO legacy_contribution;
            CREATE INDEX legacy_contribution_by_goal ON legacy_contribution(goal_id, month_label);
            DROP TABLE monthly_plan;
            ALTER TABLE plan_v16 RENAME TO monthly_plan;
            DROP INDEX plan_v16_by_uuid;
            CREATE UNIQUE INDEX monthly_plan_by_uuid ON monthly_plan(uuid) WHERE uuid IS NOT NULL;
            CREATE INDEX monthly_plan_by_month ON monthly_plan(month_label, state);
            CREATE INDEX monthly_plan_by_state ON monthly_plan(state, month_label);
            """)
        let after = try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM monthly_plan") ?? 0
        guard after == before else { throw StoreError.corrupt("the v16 migration kept \(after) of \(before) plans") }
    }

    /// The integer key of the plan a public id names, if stored.
    static func ref(of id: UUID, _ db: Database) throws -> Int64? {
        let row = RefTable.plans.condition(id, alias: "p")
        return try Int64.fetchOne(db.cachedStatement(sql: "SELECT p.ref FROM monthly_plan p WHERE \(row.sql)"), arguments: [row.argument])
    }

    /// Writes a plan. A new one takes the next ref and the id derived from it; with `keepID`
    /// (a document, the earlier app's export) it keeps its id: at the ref it was derived from,
    /// or in `uuid`. Returns the plan as stored.
    @discardableResult
    static func insert(_ plan: MonthlyPlan, keepID: Bool, _ db: Database) throws -> MonthlyPlan {
        var stored = plan
        let place = try RefTable.plans.place(plan.id, keepID: keepID, db)
        stored.id = place.id
        let row = PlanRecord(plan)
        try insertRow(ref: place.ref, uuid: place.uuid, [
            row.goalID, row.monthLabel, row.currency, row.requiredMonthly, row.remainingAmount, row.monthsRemaining, row.status, row.state,
            row.customAmount, row.isProtected, row.isSkipped, row.needsReview, row.createdAt, row.updatedAt,
        ], db)
        return stored
    }

    /// The stored columns after `ref`, in the order `insertRow` takes them (`goal_id` being the
    /// goal's public id); also a document's plan fields.
    static let valueColumns = ["goal_id", "month_label", "currency", "required_monthly", "remaining_amount", "months_remaining", "status",
                               "state", "custom_amount", "is_protected", "is_skipped", "needs_review", "created_at", "updated_at"]

    static func insertRow(ref: Int64, uuid: Data?, _ values: [(any DatabaseValueConvertible)?], _ db: Database) throws {
        try db.cachedStatement(sql: """
            INSERT INTO monthly_plan (ref, goal, month_label, currency, required_monthly, remaining_amount, months_remaining, status, state,
                                      custom_amount, is_protected, is_skipped, needs_review, created_at, updated_at, uuid)
            VALUES (?, (SELECT ref FROM goal_ref WHERE id = ?), ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?, ?)
            """).execute(arguments: StatementArguments([ref] + values + [uuid]))
    }

    /// Stores what can change of a plan (its requirement, state and overrides).
    static func update(_ plan: MonthlyPlan, _ db: Database) throws {
        guard let ref = try ref(of: plan.id, db) else { throw DomainError.notFound("plan", StoreKey.id(plan.id)) }
        let row = PlanRecord(plan)
        try db.cachedStatement(sql: """
            UPDATE monthly_plan SET currency = ?, required_monthly = ?, remaining_amount = ?, months_remaining = ?, status = ?, state = ?,
                   custom_amount = ?, is_protected = ?, is_skipped = ?, needs_review = ?, updated_at = ? WHERE ref = ?
            """).execute(arguments: [row.currency, row.requiredMonthly, row.remainingAmount, row.monthsRemaining, row.status, row.state,
                                     row.customAmount, row.isProtected, row.isSkipped, row.needsReview, row.updatedAt, ref])
    }
}

/// A `monthly_plan` row as read (`PlanRecord.columns`), or as a plan is written.
struct PlanRecord: RefRecord {
    static let table = RefTable.plans
    static let alias = "p"
    static let order = "p.created_at, p.ref"
    /// The columns every reader of a plan selects, `p` being the plan and `g` its goal's
    /// `goal_ref` row.
    static let columns = """
        p.ref, p.uuid, g.id AS goal_id, p.month_label, p.currency, p.required_monthly, p.remaining_amount, p.months_remaining, p.status,
        p.state, p.custom_amount, p.is_protected, p.is_skipped, p.needs_review, p.created_at, p.updated_at
        """
    static let from = "monthly_plan p JOIN goal_ref g ON g.ref = p.goal"

    var ref: Int64 = 0
    var uuid: Data?
    var goalID: String
    var monthLabel: String
    var currency: String
    var requiredMonthly: String
    var remainingAmount: String
    var monthsRemaining: Int
    var status: String
    var state: String
    var customAmount: String?
    var isProtected: Bool
    var isSkipped: Bool
    var needsReview: Bool
    var createdAt: String
    var updatedAt: String

    /// A plan's stored values (`ref` and `uuid` are where `PlanTable.insert` places it).
    init(_ plan: MonthlyPlan) {
        goalID = StoreKey.id(plan.goalID)
        monthLabel = plan.month.description
        currency = plan.currency.code
        requiredMonthly = Amount.plainText(plan.requirement.requiredMonthly)
        remainingAmount = Amount.plainText(plan.requirement.remaining)
        monthsRemaining = plan.requirement.monthsRemaining
        status = plan.requirement.status.rawValue
        state = plan.state.rawValue
        customAmount = plan.customAmount.map(Amount.plainText)
        isProtected = plan.isProtected
        isSkipped = plan.isSkipped
        needsReview = plan.needsReview
        createdAt = Timestamp.format(plan.createdAt)
        updatedAt = Timestamp.format(plan.updatedAt)
    }

    /// Read by column name (the month's plans are read after each write to them; Decodable
    /// took most of that read).
    init(row: Row) {
        ref = row["ref"]
        uuid = row["uuid"]
        goalID = row["goal_id"]
        monthLabel = row["month_label"]
        currency = row["currency"]
        requiredMonthly = row["required_monthly"]
        remainingAmount = row["remaining_amount"]
        monthsRemaining = row["months_remaining"]
        status = row["status"]
        state = row["state"]
        customAmount = row["custom_amount"]
        isProtected = row["is_protected"]
        isSkipped = row["is_skipped"]
        needsReview = row["needs_review"]
        createdAt = row["created_at"]
        updatedAt = row["updated_at"]
    }

    func plan() throws -> MonthlyPlan {
        try StoreKey.decoding("plan \(ref)") {
            guard let status = Requirement.Status(rawValue: status), let state = MonthlyPlan.State(rawValue: state) else {
                throw StoreError.corrupt("plan status \(status)/\(state)")
            }
            return MonthlyPlan(
                id: try publicID, goalID: try StoreKey.uuid(goalID), month: try MonthLabel(parsing: monthLabel),
                currency: try CurrencyCode(currency),
                requirement: Requirement(monthsRemaining: monthsRemaining, requiredMonthly: try Amount.parse(requiredMonthly),
                                         remaining: try Amount.parse(remainingAmount), status: status),
                state: state, customAmount: try customAmount.map { try Amount.parse($0) }, isProtected: isProtected,
                isSkipped: isSkipped, needsReview: needsReview, createdAt: try Timestamp.parse(createdAt, field: "created_at"),
                updatedAt: try Timestamp.parse(updatedAt, field: "updated_at"))
        }
    }
}
