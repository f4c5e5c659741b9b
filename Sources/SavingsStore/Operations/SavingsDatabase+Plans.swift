import Foundation
import GRDB
import SavingsCore

/// How a request names a plan: by id, or by goal and month.
public enum PlanReference: Sendable, Equatable {
    case id(String)
    case goal(String, MonthLabel)
}

/// What happens to a stale draft (SPEC 5.4).
public enum StaleAction: String, Sendable, CaseIterable {
    case complete
    case skip
    case delete
}

extension SavingsDatabase {
    /// The plans of a month as stored, oldest first.
    public func plans(month: MonthLabel) async throws -> [MonthlyPlan] {
        // Kept between writes to the plans (`StructureCache`): read after every write for the
        // month's progress, and a thousand plans took most of a dashboard after a deposit.
        // Read alone, they need no snapshot taken before the kept ones are looked at: kept
        // plans are used only while no write to the plans has begun since `before`, so they
        // are the plans as committed.
        let before = structure.versions
        return try await read { db in try structure.plans(of: month, before: before) { try Self.plans(month: month, db) } }
    }

    /// Active goals that have no plan for `month` yet.
    public func goalsWithoutPlan(month: MonthLabel) async throws -> [Goal] {
        try await read { db in
            try GoalRecord.fetchAll(db, sql: """
                SELECT * FROM goal WHERE archived = 0
                AND id NOT IN (SELECT g.id FROM monthly_plan p JOIN goal_ref g ON g.ref = p.goal WHERE p.month_label = ?)
                ORDER BY name_key
                """, arguments: [month.description]).map { try $0.goal() }
        }
    }

    /// Get-or-create: inside one write transaction (writes are serialized), every active goal
    /// without a plan for `month` gets one from `requirements`; existing plans are returned as
    /// they are. The unique (goal, month) constraint backs this up. Returns the month's plans
    /// and the ids created by this call.
    public func createPlans(month: MonthLabel, requirements: [UUID: Requirement], now: Date) async throws
        -> (plans: [MonthlyPlan], created: [UUID]) {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            var created: [UUID] = []
            let existing = Set(try String.fetchAll(db, sql: """
                SELECT g.id FROM monthly_plan p JOIN goal_ref g ON g.ref = p.goal WHERE p.month_label = ?
                """, arguments: [month.description]))
            for record in try GoalRecord.filter(GoalRecord.Columns.archived == false).fetchAll(db) where !existing.contains(record.id) {
                let goal = try record.goal()
                guard let requirement = requirements[goal.id] else { continue }
                let plan = MonthlyPlan(id: UUID(), goalID: goal.id, month: month, currency: goal.currency, requirement: requirement,
                                       state: .draft, customAmount: nil, isProtected: false, isSkipped: false, needsReview: false,
                                       createdAt: now, updatedAt: now)
                created.append(try PlanTable.insert(plan, keepID: false, db).id)
            }
            return (try Self.plans(month: month, db), created)
        }
    }

    public func plan(_ reference: PlanReference) async throws -> MonthlyPlan {
        try await read { db in try Self.resolvePlan(reference, db).plan() }
    }

    /// Applies a user override to a draft plan; plans being executed or completed are locked.
    public func updatePlan(_ reference: PlanReference, now: Date,
                           _ change: @escaping @Sendable (inout MonthlyPlan) throws -> Void) async throws -> MonthlyPlan {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            var plan = try Self.resolvePlan(reference, db).plan()
            guard plan.state == .draft else {
                throw DomainError(.planLocked, "the \(plan.month) plan is \(plan.state.rawValue); it can no longer be changed",
                                  details: ["plan": StoreKey.id(plan.id), "state": plan.state.rawValue])
            }
            let before = plan
            try change(&plan)
            if plan != before {
                plan.updatedAt = now
                try PlanTable.update(plan, db)
            }
            return plan
        }
    }

    /// Drafts of months before `current`, oldest first, one page at a time.
    public func stalePlans(current: MonthLabel, offset: Int, limit: Int) async throws -> (items: [MonthlyPlan], total: Int) {
        try await read { db in
            let total = try Int.fetchOne(db.cachedStatement(sql: "SELECT COUNT(*) FROM monthly_plan p WHERE \(Self.staleDraftsSQL)"),
                                         arguments: [current.description]) ?? 0
            let items = try PlanRecord.fetchAll(where: Self.staleDraftsSQL, order: "p.month_label, p.created_at, p.ref", limit: "LIMIT ? OFFSET ?",
                                                arguments: [current.description, limit, offset], db).map { try $0.plan() }
            return (items, total)
        }
    }

    /// SQL: drafts of months before the month given (an index by state, then month, finds them alone).
    static let staleDraftsSQL = "p.state = 'draft' AND p.month_label < ?"

    /// Resolves a stale draft; anything else is `invalid_state`. Returns the plan (nil once deleted).
    public func resolveStale(_ id: String, action: StaleAction, current: MonthLabel, now: Date) async throws -> MonthlyPlan? {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let record = try Self.resolvePlan(.id(id), db)
            var plan = try record.plan()
            guard plan.isStale(current: current) else {
                throw DomainError(.invalidState, "plan \(id) (\(plan.month), \(plan.state.rawValue)) is not a stale draft")
            }
            switch action {
            case .delete:
                try db.execute(sql: "DELETE FROM monthly_plan WHERE ref = ?", arguments: [record.ref])
                return nil
            case .complete:
                plan.state = .completed
                plan.isSkipped = false
            case .skip:
                plan.state = .completed
                plan.isSkipped = true
            }
            plan.needsReview = false
            plan.updatedAt = now
            try PlanTable.update(plan, db)
            return plan
        }
    }

    // MARK: - Metadata (last rollover, reminders)

    public func metadata(_ key: String) async throws -> String? {
        try await read { db in try String.fetchOne(db, sql: "SELECT value FROM metadata WHERE key = ?", arguments: [key]) }
    }

    public func setMetadata(_ key: String, _ value: String) async throws {
        try await write { db in
            try db.execute(sql: "INSERT INTO metadata (key, value) VALUES (?, ?) ON CONFLICT(key) DO UPDATE SET value = excluded.value",
                           arguments: [key, value])
        }
    }

    static func plans(month: MonthLabel, _ db: Database) throws -> [MonthlyPlan] {
        try PlanRecord.fetchAll(where: "p.month_label = ?", arguments: [month.description], db).map { try $0.plan() }
    }

    static func resolvePlan(_ reference: PlanReference, _ db: Database) throws -> PlanRecord {
        switch reference {
        case .id(let id):
            guard let uuid = UUID(uuidString: id), let record = try PlanRecord.fetchOne(publicID: uuid, db) else {
                throw DomainError.notFound("plan", id)
            }
            return record
        case .goal(let goal, let month):
            let goalID = try resolveGoal(goal, db).id
            guard let record = try PlanRecord.fetchAll(where: "p.goal = (SELECT ref FROM goal_ref WHERE id = ?) AND p.month_label = ?",
                                                       arguments: [goalID, month.description], db).first else {
                throw DomainError.notFound("plan", "\(goal) \(month)")
            }
            return record
        }
    }
}
