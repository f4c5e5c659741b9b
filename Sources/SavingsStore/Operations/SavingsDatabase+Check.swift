import Foundation
import GRDB
import SavingsCore

/// What `db.check` found: SQLite's own checks and the domain invariants.
public struct CheckReport: Sendable, Equatable {
    public struct Invariant: Sendable, Equatable {
        public var name: String
        public var problems: [String]
    }

    /// `PRAGMA integrity_check` lines; `["ok"]` when the file is sound.
    public var integrity: [String]
    /// `PRAGMA foreign_key_check` violations, one line each.
    public var foreignKeys: [String]
    public var invariants: [Invariant]

    public var ok: Bool { integrity == ["ok"] && foreignKeys.isEmpty && invariants.allSatisfy(\.problems.isEmpty) }

    /// The failures as one readable text (empty when everything is fine).
    public var summary: String {
        var lines: [String] = []
        if integrity != ["ok"] { lines += integrity.map { "integrity: \($0)" } }
        lines += foreignKeys.map { "foreign key: \($0)" }
        for invariant in invariants { lines += invariant.problems.map { "\(invariant.name): \($0)" } }
        return lines.joined(separator: "\n")
    }
}

extension SavingsDatabase {
    /// Checks the file, its references and the domain invariants. Reads one snapshot.
    public func check() async throws -> CheckReport {
        try await read { db in try Self.check(db) }
    }

    /// Most problems listed per check; the count of the rest is reported.
    static let problemLimit = 50

    static func check(_ db: Database, integrity: Bool = true) throws -> CheckReport {
        let integrityLines = integrity ? try String.fetchAll(db, sql: "PRAGMA integrity_check") : ["ok"]
        let foreignKeys = try Row.fetchAll(db, sql: "PRAGMA foreign_key_check").map { row -> String in
            let table: String = row[0]
            let rowid: Int64? = row[1]
            let parent: String = row[2]
            return "a row of \(table) (rowid \(rowid.map(String.init) ?? "?")) points to a missing \(parent)"
        }
        var invariants: [CheckReport.Invariant] = []
        func invariant(_ name: String, _ sql: String, _ describe: (Row) -> String) throws {
            let rows = try Row.fetchAll(db, sql: sql + " LIMIT \(problemLimit + 1)")
            var problems = rows.prefix(problemLimit).map(describe)
            if rows.count > problemLimit { problems.append("... and more") }
            invariants.append(.init(name: name, problems: problems))
        }
        try invariant("one plan per goal and month", """
            SELECT COALESCE(g.id, 'ref ' || p.goal) AS goal_id, p.month_label, COUNT(*) AS n FROM monthly_plan p
              LEFT JOIN goal_ref g ON g.ref = p.goal GROUP BY p.goal, p.month_label HAVING n > 1 OR g.id IS NULL
            """) { "goal \($0["goal_id"] as String) has \($0["n"] as Int) plans for \($0["month_label"] as String)" }
        try invariant("allocations have their goal and asset", """
            SELECT 'allocation' AS kind, asset_id, goal_id FROM allocation
             WHERE asset_id NOT IN (SELECT id FROM asset) OR goal_id NOT IN (SELECT id FROM goal)
            UNION ALL
            SELECT 'allocation history', COALESCE(r.id, 'ref ' || h.asset), COALESCE(g.id, 'ref ' || h.goal) FROM allocation_history h
              LEFT JOIN asset_ref r ON r.ref = h.asset LEFT JOIN goal_ref g ON g.ref = h.goal
             WHERE r.id IS NULL OR g.id IS NULL OR r.id NOT IN (SELECT id FROM asset) OR g.id NOT IN (SELECT id FROM goal)
            """) { "\($0["kind"] as String) row for asset \($0["asset_id"] as String) and goal \($0["goal_id"] as String)" }
        try invariant("each asset's newest date is at or after its newest transaction", """
            SELECT r.id, b.newest, (SELECT MAX(date) FROM asset_transaction t WHERE t.asset = r.ref) AS last
              FROM asset_ref r LEFT JOIN asset_balance b ON b.asset_id = r.id
             WHERE last IS NOT NULL AND (b.newest IS NULL OR b.newest < last)
            """) { "asset \($0["id"] as String): newest \(($0["newest"] as Int64?).map { Timestamp.format(milliseconds: $0) } ?? "none"), a transaction dated \(Timestamp.format(milliseconds: $0["last"]))" }
        try invariant("every asset and goal has its integer key", """
            SELECT 'asset' AS kind, id FROM asset WHERE id NOT IN (SELECT id FROM asset_ref)
            UNION ALL SELECT 'goal', id FROM goal WHERE id NOT IN (SELECT id FROM goal_ref)
            """) { "\($0["kind"] as String) \($0["id"] as String) has no integer key" }
        try invariant("closed months are frozen", """
            SELECT e.month_label, 'has no frozen result' AS problem FROM execution_record e
             WHERE e.status = 'closed' AND (e.completed IS NULL OR e.completed_at IS NULL)
            UNION ALL
            SELECT p.month_label, 'has a plan of goal ' || (SELECT id FROM goal_ref WHERE ref = p.goal) || ' in state ' || p.state FROM monthly_plan p
              JOIN execution_record e ON e.month_label = p.month_label
             WHERE e.status = 'closed' AND p.state <> 'completed'
            """) { "\($0["month_label"] as String) \($0["problem"] as String)" }
        try invariant("rates are positive", "SELECT base, quote, rate FROM rate WHERE NOT (CAST(rate AS REAL) > 0)") {
            "\($0["base"] as String)/\($0["quote"] as String) = \($0["rate"] as String)"
        }
        var amounts: [String] = []
        for (table, column) in [("asset_transaction", "amount"), ("allocation", "amount"), ("allocation_history", "amount"),
                                ("goal", "target_amount"), ("contribution", "amount"), ("monthly_plan", "required_monthly")] {
            // The transactions' table has no rowid: its rows are named by their ref.
            let key = table == "asset_transaction" ? "ref" : "rowid"
            let cursor = try Row.fetchCursor(db, sql: "SELECT \(key) AS key, \(column) AS value FROM \(table)")
            while let row = try cursor.next(), amounts.count <= problemLimit {
                let text: String = row["value"]
                if (try? Amount.parse(text)) == nil { amounts.append("\(table).\(column) of \(key) \(row["key"] as Int64) is '\(text)'") }
            }
        }
        invariants.append(.init(name: "amounts are exact decimals", problems: amounts))
        var sums: [String: Decimal] = [:]
        let transactions = try Row.fetchCursor(db, sql: "SELECT r.id AS asset_id, t.amount FROM asset_transaction t JOIN asset_ref r ON r.ref = t.asset")
        while let row = try transactions.next() { sums[row["asset_id"] as String, default: 0] += (try? Amount.parse(row["amount"] as String)) ?? 0 }
        var kept: [String: Decimal] = [:]
        for row in try Row.fetchAll(db, sql: "SELECT asset_id, total FROM asset_balance") {
            kept[row["asset_id"] as String] = (try? Amount.parse(row["total"] as String)) ?? -1
        }
        let mismatched = Set(sums.keys).union(kept.keys).filter { (sums[$0] ?? 0) != (kept[$0] ?? 0) }.sorted()
        invariants.append(.init(name: "asset balances match their transactions", problems: mismatched.prefix(problemLimit).map {
            "asset \($0): kept \(Amount.plainText(kept[$0] ?? 0)), transactions sum to \(Amount.plainText(sums[$0] ?? 0))"
        }))
        return CheckReport(integrity: integrityLines, foreignKeys: foreignKeys, invariants: invariants)
    }
}
