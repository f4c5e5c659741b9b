import Foundation
import GRDB
import SavingsCore

/// A month's execution (SPEC 5.3). `snapshot` and `completed` are JSON documents written by
/// the daemon: the planned amounts frozen at start, and the frozen result at close.
public struct ExecutionRecord: Sendable, Equatable {
    public enum Status: String, Sendable, CaseIterable {
        case draft
        case executing
        case closed
    }

    public var month: MonthLabel
    public var status: Status
    public var startedAt: Date?
    public var completedAt: Date?
    public var canUndoUntil: Date?
    public var snapshot: String?
    public var completed: String?
}

struct ExecutionRecordRow: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "execution_record"
    var monthLabel: String
    var status: String
    var startedAt: String?
    var completedAt: String?
    var canUndoUntil: String?
    var snapshot: String?
    var baselineRows: String?
    var completed: String?
    var createdAt: String
    var updatedAt: String

    enum CodingKeys: String, CodingKey {
        case status, snapshot, completed
        case monthLabel = "month_label"
        case startedAt = "started_at"
        case completedAt = "completed_at"
        case canUndoUntil = "can_undo_until"
        case baselineRows = "baseline_rows"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    func record() throws -> ExecutionRecord {
        try StoreKey.decoding("execution \(monthLabel)") {
            guard let status = ExecutionRecord.Status(rawValue: status) else { throw StoreError.corrupt("status \(status)") }
            return ExecutionRecord(
                month: try MonthLabel(parsing: monthLabel), status: status,
                startedAt: try startedAt.map { try Timestamp.parse($0, field: "started_at") },
                completedAt: try completedAt.map { try Timestamp.parse($0, field: "completed_at") },
                canUndoUntil: try canUndoUntil.map { try Timestamp.parse($0, field: "can_undo_until") },
                snapshot: snapshot, completed: completed)
        }
    }
}

extension SavingsDatabase {
    public func execution(_ month: MonthLabel) async throws -> ExecutionRecord? {
        try await read { db in try ExecutionRecordRow.fetchOne(db, key: month.description)?.record() }
    }

    public func closedExecutions(from: MonthLabel?, to: MonthLabel?) async throws -> [ExecutionRecord] {
        try await read { db in
            var request = ExecutionRecordRow.filter(Column("status") == "closed")
            if let from { request = request.filter(Column("month_label") >= from.description) }
            if let to { request = request.filter(Column("month_label") <= to.description) }
            return try request.order(Column("month_label")).fetchAll(db).map { try $0.record() }
        }
    }

    /// Months before `current` still executing: reported, never closed automatically.
    public func overdueExecutions(current: MonthLabel) async throws -> [MonthLabel] {
        try await read { db in
            try String.fetchAll(db, sql: "SELECT month_label FROM execution_record WHERE status = 'executing' AND month_label < ? ORDER BY month_label",
                                arguments: [current.description]).map { try MonthLabel(parsing: $0) }
        }
    }

    /// draft -> executing: plans lock, baseline history rows are written at `now` for every
    /// allocation of the tracked goals, and the snapshot is stored.
    public func startExecution(_ month: MonthLabel, snapshot: String, goalIDs: [UUID], now: Date, undoWindow: TimeInterval,
                               timeZone: TimeZone) async throws -> ExecutionRecord {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            let existing = try ExecutionRecordRow.fetchOne(db, key: month.description)
            if let existing, existing.status != "draft" {
                throw DomainError(.invalidState, "\(month) is already \(existing.status)", details: ["status": existing.status])
            }
            var baseline: [String] = []
            let goals = Set(goalIDs.map(StoreKey.id))
            for record in try AllocationRecord.fetchAll(db) where goals.contains(record.goalID) {
                let id = try Self.applyAllocationDelta(assetID: try StoreKey.uuid(record.assetID), goalID: try StoreKey.uuid(record.goalID),
                                                       delta: 0, at: now, now: now, timeZone: timeZone, db)
                baseline.append(StoreKey.id(id))
            }
            try Self.setPlanStates(month, to: .executing, db)
            let row = ExecutionRecordRow(
                monthLabel: month.description, status: "executing", startedAt: Timestamp.format(now), completedAt: nil,
                canUndoUntil: Timestamp.format(now.addingTimeInterval(undoWindow)), snapshot: snapshot,
                baselineRows: baseline.joined(separator: ","), completed: nil,
                createdAt: existing?.createdAt ?? Timestamp.format(now), updatedAt: Timestamp.format(now))
            try row.save(db)
            return try row.record()
        }
    }

    /// executing -> closed with the frozen result; the undo window restarts.
    public func completeExecution(_ month: MonthLabel, frozen: String, completedAt: Date, undoWindow: TimeInterval) async throws
        -> ExecutionRecord {
        try await write { db in
            guard var row = try ExecutionRecordRow.fetchOne(db, key: month.description), row.status == "executing" else {
                throw DomainError(.invalidState, "\(month) is not being executed")
            }
            row.status = "closed"
            row.completedAt = Timestamp.format(completedAt)
            row.canUndoUntil = Timestamp.format(completedAt.addingTimeInterval(undoWindow))
            row.completed = frozen
            row.updatedAt = Timestamp.format(completedAt)
            try row.update(db)
            try Self.setPlanStates(month, to: .completed, db)
            return try row.record()
        }
    }

    /// executing -> draft (removing the baseline rows), or closed -> executing (dropping the
    /// frozen result), within the undo window.
    public func undoExecution(_ month: MonthLabel, from status: ExecutionRecord.Status, now: Date, undoWindow: TimeInterval)
        async throws -> ExecutionRecord {
        let now = Timestamp.truncatedToMilliseconds(now)
        return try await write { db in
            guard var row = try ExecutionRecordRow.fetchOne(db, key: month.description), row.status == status.rawValue else {
                throw DomainError(.invalidState, "\(month) is not \(status.rawValue)")
            }
            if let until = row.canUndoUntil, try Timestamp.parse(until, field: "can_undo_until") < now {
                throw DomainError(.undoExpired, "the undo window of \(month) ended at \(until)", details: ["expired_at": until])
            }
            switch status {
            case .executing:
                for id in (row.baselineRows ?? "").split(separator: ",").map(String.init) {
                    guard let uuid = UUID(uuidString: id), let history = try HistoryRecord.fetchOne(publicID: uuid, db) else { continue }
                    try HistoryTable.delete(ref: history.ref, db)
                    try Self.syncAllocation(assetID: try StoreKey.uuid(history.assetID), goalID: try StoreKey.uuid(history.goalID),
                                            now: now, db)
                }
                row = ExecutionRecordRow(monthLabel: row.monthLabel, status: "draft", startedAt: nil, completedAt: nil, canUndoUntil: nil,
                                         snapshot: nil, baselineRows: nil, completed: nil, createdAt: row.createdAt,
                                         updatedAt: Timestamp.format(now))
                try Self.setPlanStates(month, to: .draft, db)
            case .closed:
                row.status = "executing"
                row.completed = nil
                row.completedAt = nil
                row.canUndoUntil = Timestamp.format(now.addingTimeInterval(undoWindow))
                row.updatedAt = Timestamp.format(now)
                try Self.setPlanStates(month, to: .executing, db)
            case .draft:
                throw DomainError(.invalidState, "nothing to undo")
            }
            try row.update(db)
            return try row.record()
        }
    }

    /// Every asset's state at `start` and its change points in (start, end], read with range
    /// queries; the derived-contribution calculator does the rest. An asset whose reading the
    /// caller has (`known`, by stamp) and that no write has touched at or before that reading's
    /// end comes back as that reading, with the points dated after its end if there are any
    /// (`WindowCache`); assets with nothing in the window are left out. With `remember` false
    /// the readings are not kept (a look at past months need not push out the live one).
    public func timelines(start: Date, end: Date, known: [UUID: UInt64] = [:], remember: Bool = true) async throws -> [WindowTimeline] {
        let version = windows.version
        return try await read { db in
            let from = Timestamp.format(start), to = Timestamp.format(end)
            let startMilliseconds = Timestamp.milliseconds(start), endMilliseconds = Timestamp.milliseconds(end)
            var result: [WindowTimeline] = []
            // The statements run once per asset or per pair: prepared once, not once per use
            // (compiling them was most of the cost with many goals).
            // The goals of an asset's pairs, one index seek each (`goal > ?`, the next one), not
            // a walk over the asset's whole history.
            let nextGoal = try db.cachedStatement(sql: "SELECT goal FROM allocation_history WHERE asset = ? AND goal > ? ORDER BY goal LIMIT 1")
            let inForce = try db.cachedStatement(sql: """
                SELECT h.amount, g.id AS goal_id FROM allocation_history h JOIN goal_ref g ON g.ref = h.goal
                 WHERE h.asset = ? AND h.goal = ? AND h.timestamp <= ? ORDER BY h.timestamp DESC, h.created_at DESC LIMIT 1
                """)
            let balances = try db.cachedStatement(sql: "SELECT total FROM asset_balance WHERE asset_id = ?")
            // Every transaction after the start: the ones up to `end` are the window's changes, and
            // all of them come off the maintained total to give the balance at the start.
            // In time order (the index's order), so the calculator finds them sorted.
            let later = try db.cachedStatement(sql: "SELECT date, amount FROM asset_transaction WHERE asset = ? AND date > ? ORDER BY date")
            let targetChanges = try db.cachedStatement(sql: """
                SELECT \(HistoryTable.columns) FROM \(HistoryTable.from)
                 WHERE h.asset = ? AND h.timestamp > ? AND h.timestamp <= ? ORDER BY h.timestamp, h.created_at
                """)
            // The first target row dated after this reading's end.
            let nextTarget = try db.cachedStatement(sql: "SELECT MIN(timestamp) FROM allocation_history WHERE asset = ? AND timestamp > ?")
            // Until when nothing of the asset is dated after this reading's end: its first
            // transaction after the end (read with the others) or its first target row after it.
            func quietUntil(_ firstLater: Int64?, _ ref: Int64) throws -> String {
                let target = try Int64.fetchOne(nextTarget, arguments: [ref, endMilliseconds])
                return [firstLater, target].compactMap { $0 }.min().map { Timestamp.format(milliseconds: $0) } ?? WindowCache.never
            }
            // Target rows of an asset in (after, end], in time order.
            func targetRows(_ ref: Int64, after: Int64) throws -> [AssetTimeline.Change] {
                try HistoryRecord.fetchAll(targetChanges, arguments: [ref, after, endMilliseconds]).map { row in
                    let entry = try row.entry()
                    return .target(at: entry.timestamp, createdAt: entry.createdAt, goalID: entry.goalID, amount: entry.amount)
                }
            }
            let assets = try Row.fetchAll(db, sql: "SELECT a.id, r.ref FROM asset a JOIN asset_ref r ON r.id = a.id ORDER BY a.rowid")
                .map { (id: $0[0] as String, ref: $0[1] as Int64) }
            // The snapshot is taken: entries still here are valid for it.
            let previous = windows.entries(start: from)
            windows.afterSnapshot.withLock { $0 }?()
            var entries: [String: WindowCache.Entry] = [:]
            for (id, ref) in assets {
                let assetID = try StoreKey.uuid(id)
                if var entry = previous[id], entry.empty || known[assetID] == entry.stamp, entry.end <= to {
                    // Still true up to its end: the same, or the same plus the points dated since.
                    var since: [AssetTimeline.Change] = []
                    // Nothing dated up to this end since the reading's: no look at the rows.
                    if entry.end < to, entry.quietUntil.map({ $0 <= to }) ?? true {
                        let readTo = Timestamp.milliseconds(try Timestamp.parse(entry.end, field: "end"))
                        var firstLater: Int64?
                        try later.forEachStoredTransaction(arguments: [ref, readTo]) { point in
                            if point.milliseconds <= endMilliseconds {
                                since.append(.transaction(at: point.date, amount: point.amount, units: point.units))
                            } else if firstLater == nil {
                                firstLater = point.milliseconds
                            }
                        }
                        since += try targetRows(ref, after: readTo)
                        entry.quietUntil = try quietUntil(firstLater, ref)
                    }
                    if since.isEmpty {
                        entry.end = to
                        entries[id] = entry
                        if !entry.empty { result.append(WindowTimeline(assetID: assetID, stamp: entry.stamp, reading: .unchanged)) }
                        continue
                    }
                    if !entry.empty {
                        let stamp = windows.nextStamp()
                        entries[id] = WindowCache.Entry(stamp: stamp, end: to, empty: false, quietUntil: entry.quietUntil)
                        result.append(WindowTimeline(assetID: assetID, stamp: stamp, reading: .extended(since: entry.stamp, later: since)))
                        continue
                    }
                    // An account with nothing in the window before: read whole (it is small).
                }
                var afterStart = RunningTotal(0)
                var changes: [AssetTimeline.Change] = []
                let expected = windows.size(of: id)
                changes.reserveCapacity(expected + expected / 8)  // room for what came since
                var firstLater: Int64?
                try later.forEachStoredTransaction(arguments: [ref, startMilliseconds]) { point in
                    afterStart.add(point.amount, units: point.units)
                    if point.milliseconds <= endMilliseconds {
                        changes.append(.transaction(at: point.date, amount: point.amount, units: point.units))
                    } else if firstLater == nil {
                        firstLater = point.milliseconds
                    }
                }
                let total = try String.fetchOne(balances, arguments: [id]).map { try Amount.parse($0) } ?? 0
                let balance = total - afterStart.value
                // Each pair's row in force at the start: one index lookup per goal (a correlated
                // NOT EXISTS here was quadratic in a pair's history).
                var targets: [UUID: Decimal] = [:]
                var goal: Int64 = .min
                while let next = try Int64.fetchOne(nextGoal, arguments: [ref, goal]) {
                    goal = next
                    guard let row = try Row.fetchOne(inForce, arguments: [ref, goal, startMilliseconds]) else { continue }
                    targets[try StoreKey.uuid(row["goal_id"])] = try Amount.parse(row["amount"])
                }
                changes += try targetRows(ref, after: startMilliseconds)
                windows.noteSize(changes.count, of: id)
                let empty = balance == 0 && targets.isEmpty && changes.isEmpty
                let stamp = windows.nextStamp()
                entries[id] = WindowCache.Entry(stamp: stamp, end: to, empty: empty, quietUntil: try quietUntil(firstLater, ref))
                guard !empty else { continue }
                result.append(WindowTimeline(assetID: assetID, stamp: stamp, reading: .full(AssetTimeline(
                    assetID: assetID, balanceAtStart: balance, targetsAtStart: targets, changes: changes))))
            }
            if remember { windows.keep(start: from, entries, version: version) }
            return result
        }
    }

    static func setPlanStates(_ month: MonthLabel, to state: MonthlyPlan.State, _ db: Database) throws {
        try db.execute(sql: "UPDATE monthly_plan SET state = ? WHERE month_label = ?", arguments: [state.rawValue, month.description])
    }
}
