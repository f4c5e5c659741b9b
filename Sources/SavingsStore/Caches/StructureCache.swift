import Foundation
import GRDB
import SavingsCore
import Synchronization

/// The parts of the figures' snapshot that change only with writes to their own table: goals,
/// assets, allocations and newest rates, decoded; and a month's plans (read after every write
/// for the month's progress). A deposit changes balances (and, into an
/// account reserved for one goal, that allocation), so the snapshot read after it takes the
/// goals and everything else unchanged from here instead of reading and decoding every goal
/// again (at a thousand goals, most of the snapshot's cost).
///
/// Never stale: an observer on the writer moves a table's version at the first change a write
/// transaction makes to it (while it is still in progress) and again when the transaction
/// ends, committed or not. A reading uses a kept part only if the table's version it read
/// before its read transaction began, the kept part's version and the version once its
/// snapshot is taken are all the same: then no write to that table ended or began in between,
/// and what is kept is what its snapshot holds. A part read is kept only if its version did
/// not move from before the read transaction began to after the read.
final class StructureCache: Sendable {
    struct Structure: Sendable {
        var goals: [Goal]
        var assets: [Asset]
        var allocations: [Allocation]
        var rates: [ExchangeRate]
    }

    /// The tables (a case's name is its table's); `Versions` is indexed by the raw value. Rows
    /// of one deleted with a row of another (allocations with their goal or asset) are reported
    /// as changes of their own table.
    enum Table: Int, CaseIterable {
        case goal, asset, allocation, rate, monthlyPlan

        var name: String { self == .monthlyPlan ? "monthly_plan" : "\(self)" }

        private static let byName = Dictionary(uniqueKeysWithValues: allCases.map { ($0.name, $0) })

        init?(name: String) {
            guard let table = Self.byName[name] else { return nil }
            self = table
        }
    }

    typealias Versions = [UInt64]

    private struct State {
        var versions: Versions = Array(repeating: 0, count: Table.allCases.count)
        var goals: (version: UInt64, value: [Goal])?
        var assets: (version: UInt64, value: [Asset])?
        var allocations: (version: UInt64, value: [Allocation])?
        var rates: (version: UInt64, value: [ExchangeRate])?
        var plans: (version: UInt64, value: MonthPlans)?
    }

    /// One month's plans.
    struct MonthPlans: Sendable {
        var month: MonthLabel
        var plans: [MonthlyPlan]
    }

    private let state = Mutex(State())
    /// How many times each table was read (tests).
    private let readCounts = Mutex(Array(repeating: 0, count: Table.allCases.count))

    /// Run on the writer connection only.
    func install(on db: Database) {
        db.add(transactionObserver: StructureWrites(cache: self), extent: .databaseLifetime)
    }

    /// Taken before a read transaction begins.
    var versions: Versions { state.withLock { $0.versions } }

    func reads(of table: Table) -> Int { readCounts.withLock { $0[table.rawValue] } }

    /// The structure as of `db`'s snapshot: each part kept, or read (and kept if it may be).
    /// `before` is what `versions` gave before the read transaction began; the snapshot must
    /// already be taken (a statement has read from it).
    func structure(_ db: Database, before: Versions) throws -> Structure {
        let goals = try part(.goal, \.goals, before: before) {
            try GoalRecord.order(Column("name_key")).fetchAll(db).map { try $0.goal() }
        }
        let assets = try part(.asset, \.assets, before: before) {
            try AssetRecord.order(Column("name_key")).fetchAll(db).map { try $0.asset() }
        }
        let allocations = try part(.allocation, \.allocations, before: before) {
            // Read again after every deposit into an account reserved for one goal: a cached statement.
            try AllocationRecord.fetchAll(db.cachedStatement(sql: "SELECT * FROM allocation")).map { try $0.allocation() }
        }
        let rates = try part(.rate, \.rates, before: before) {
            // Only each pair's newest rate matters here; history stays on disk.
            try RateRecord.fetchAll(db, sql: """
                SELECT r.* FROM rate r WHERE r.id = (SELECT id FROM rate WHERE base = r.base AND quote = r.quote ORDER BY as_of DESC, id DESC LIMIT 1)
                """).map { try $0.exchangeRate() }
        }
        return Structure(goals: goals, assets: assets, allocations: allocations, rates: rates)
    }

    /// `month`'s plans, kept or read (`read`) as the structure's parts are, under the version
    /// `before` gave. One month is kept.
    func plans(of month: MonthLabel, before: Versions, read: () throws -> [MonthlyPlan]) rethrows -> [MonthlyPlan] {
        try part(.monthlyPlan, \.plans, before: before, where: { $0.month == month }) {
            MonthPlans(month: month, plans: try read())
        }.plans
    }

    /// A part kept under the version `before` gives (and that `matches`), else read.
    private func part<Value: Sendable>(_ table: Table, _ kept: WritableKeyPath<State, (version: UInt64, value: Value)?>,
                                       before: Versions, where matches: (Value) -> Bool = { _ in true },
                                       read: () throws -> Value) rethrows -> Value {
        let version = before[table.rawValue]
        let known: Value? = state.withLock { state in
            guard state.versions[table.rawValue] == version, let kept = state[keyPath: kept], kept.version == version,
                  matches(kept.value) else { return nil }
            return kept.value
        }
        if let known { return known }
        readCounts.withLock { $0[table.rawValue] += 1 }
        let value = try read()
        state.withLock { state in
            if state.versions[table.rawValue] == version { state[keyPath: kept] = (version, value) }
        }
        return value
    }

    /// A write changed, or ended after changing, the table: what is kept of it is no longer
    /// used (its version no longer matches) and is replaced by the next read.
    fileprivate func moved(_ table: Table) {
        state.withLock { $0.versions[table.rawValue] &+= 1 }
    }
}

/// Tells the cache about the writer's transactions that change its tables.
private final class StructureWrites: TransactionObserver {
    let cache: StructureCache
    /// The tables the transaction in progress has changed (touched on the writer's queue only).
    private var changing: Set<StructureCache.Table> = []

    init(cache: StructureCache) { self.cache = cache }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { StructureCache.Table(name: eventKind.tableName) != nil }

    func databaseDidChange(with event: DatabaseEvent) {
        guard let table = StructureCache.Table(name: event.tableName), changing.insert(table).inserted else { return }
        cache.moved(table)
    }

    func databaseDidCommit(_ db: Database) { end() }
    func databaseDidRollback(_ db: Database) { end() }

    private func end() {
        for table in changing { cache.moved(table) }
        changing = []
    }
}
