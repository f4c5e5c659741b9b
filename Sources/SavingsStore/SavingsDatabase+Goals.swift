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

    /// Resolves an id or a name; a reference matching one goal's id and another's name is ambiguous.
    static func resolveGoal(_ reference: String, _ db: Database) throws -> GoalRecord {
        let byID = try UUID(uuidString: reference).flatMap {
            try GoalRecord.fetchOne(db, key: $0.uuidString.lowercased())
        }
        let byName = try GoalRecord.filter(GoalRecord.Columns.nameKey == Goal.nameKey(reference)).fetchOne(db)
        switch (byID, byName) {
        case let (id?, name?) where id.id != name.id:
            throw DomainError(.ambiguous, "'\(reference)' is the id of one goal and the name of another; use the id",
                              details: ["reference": reference])
        case let (goal?, _), let (nil, goal?):
            return goal
        case (nil, nil):
            throw DomainError.notFound("goal", reference)
        }
    }

    static func ensureNameFree(_ name: String, except id: UUID?, _ db: Database) throws {
        let existing = try GoalRecord.filter(GoalRecord.Columns.nameKey == Goal.nameKey(name)).fetchOne(db)
        if let existing, existing.id != id?.uuidString.lowercased() {
            throw DomainError(.conflict, "a goal named '\(existing.name)' already exists", details: ["field": "name"])
        }
    }
}
