import Foundation
import GRDB
import SavingsCore

extension SavingsDatabase {
    /// Creates a goal; a name already used (case-insensitively) is a conflict.
    public func createGoal(_ new: NewGoal, id: UUID = UUID(), now: Date) async throws -> Goal {
        let now = Timestamp.truncatedToMilliseconds(now)
        let goal = Goal(id: id, name: new.name, currency: new.currency, targetAmount: new.targetAmount,
                        deadline: new.deadline, startDate: new.startDate, archived: false, notes: new.notes,
                        createdAt: now, updatedAt: now)
        return try await write { db in
            try Self.ensureNameFree(goal.name, except: nil, db)
            try GoalRecord(goal).insert(db)
            return goal
        }
    }

    /// Goals ordered by name; archived ones only on request.
    public func goals(includeArchived: Bool = false) async throws -> [Goal] {
        try await read { db in
            var request = GoalRecord.order(GoalRecord.Columns.nameKey)
            if !includeArchived { request = request.filter(GoalRecord.Columns.archived == false) }
            return try request.fetchAll(db).map { try $0.goal() }
        }
    }

    /// One goal by id or unique name.
    public func goal(_ reference: String) async throws -> Goal {
        try await read { db in try Self.resolveGoal(reference, db).goal() }
    }

    /// Applies `changes` (validated by the core) in one transaction.
    public func updateGoal(_ reference: String, changes: GoalChanges, now: Date) async throws -> Goal {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let current = try Self.resolveGoal(reference, db).goal()
            let updated = try changes.applied(to: current, at: now)
            if Goal.nameKey(updated.name) != Goal.nameKey(current.name) {
                try Self.ensureNameFree(updated.name, except: current.id, db)
            }
            if updated != current { try GoalRecord(updated).update(db) }
            return updated
        }
    }

    /// Archives (or restores) a goal: it leaves the active views but keeps its history.
    public func setGoalArchived(_ reference: String, archived: Bool, now: Date) async throws -> Goal {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            var goal = try Self.resolveGoal(reference, db).goal()
            guard goal.archived != archived else { return goal }
            goal.archived = archived
            goal.updatedAt = now
            try GoalRecord(goal).update(db)
            return goal
        }
    }

    /// Deletes a goal for good and returns what it was.
    public func deleteGoal(_ reference: String) async throws -> Goal {
        try await write { db in
            let record = try Self.resolveGoal(reference, db)
            let goal = try record.goal()
            try record.delete(db)
            return goal
        }
    }

    static func resolveGoal(_ reference: String, _ db: Database) throws -> GoalRecord {
        try Reference.resolve(GoalRecord.self, reference, what: "goal", id: \.id, db)
    }

    static func ensureNameFree(_ name: String, except id: UUID?, _ db: Database) throws {
        try Reference.ensureNameFree(GoalRecord.self, name, except: id.map(StoreKey.id), what: "goal", id: \.id,
                                     displayName: \.name, db)
    }
}
