import Foundation
import GRDB
import SavingsCore
import Synchronization

/// The part of the figures' snapshot that only writes to goals, assets, allocations and rates
/// change: those rows, decoded. A deposit, a withdrawal or an import changes balances alone, so
/// the snapshot read after it takes these from here instead of reading and decoding every goal
/// again (at a thousand goals, most of the snapshot's cost).
///
/// Never stale: an observer on the writer moves the version on at the first change a write
/// transaction makes to one of these tables (while it is still in progress) and again when it
/// ends, committed or not. A reading uses the kept structure only if the version it read
/// before its read transaction began, the kept structure's version and the version once its
/// snapshot is taken are all the same: then no such write ended or began in between, and what
/// is kept is what its snapshot holds. A structure read is kept only if the version did not
/// move from before its read transaction began to after the read.
final class StructureCache: Sendable {
    struct Structure: Sendable {
        var goals: [Goal]
        var assets: [Asset]
        var allocations: [Allocation]
        var rates: [ExchangeRate]
    }

    /// The tables the structure is read from. Rows of other tables deleted with one of these
    /// (allocations with their goal or asset) go with a change to these.
    static let tables: Set<String> = ["goal", "asset", "allocation", "rate"]

    private let state = Mutex<(version: UInt64, kept: (version: UInt64, structure: Structure)?)>((0, nil))
    /// How many times the structure was read from the database (tests).
    private let readCount = Atomic<Int>(0)

    /// Run on the writer connection only.
    func install(on db: Database) {
        db.add(transactionObserver: StructureWrites(cache: self), extent: .databaseLifetime)
    }

    /// Taken before a read transaction begins, and again once its snapshot is taken.
    var version: UInt64 { state.withLock { $0.version } }

    var reads: Int { readCount.load(ordering: .relaxed) }

    /// The structure as of `db`'s snapshot: kept, or read (and kept if it may be).
    /// `before` is the version read before the read transaction began; the snapshot must
    /// already be taken (a statement has read from it).
    func structure(_ db: Database, before: UInt64) throws -> Structure {
        let kept: Structure? = state.withLock { state in
            guard state.version == before, let kept = state.kept, kept.version == before else { return nil }
            return kept.structure
        }
        if let kept { return kept }
        readCount.add(1, ordering: .relaxed)
        let structure = try Self.read(db)
        state.withLock { state in
            if state.version == before { state.kept = (before, structure) }
        }
        return structure
    }

    private static func read(_ db: Database) throws -> Structure {
        let goals = try GoalRecord.order(Column("name_key")).fetchAll(db).map { try $0.goal() }
        let assets = try AssetRecord.order(Column("name_key")).fetchAll(db).map { try $0.asset() }
        let allocations = try AllocationRecord.fetchAll(db).map { try $0.allocation() }
        // Only each pair's newest rate matters here; history stays on disk.
        let rates = try RateRecord.fetchAll(db, sql: """
            SELECT r.* FROM rate r WHERE r.id = (SELECT id FROM rate WHERE base = r.base AND quote = r.quote ORDER BY as_of DESC, id DESC LIMIT 1)
            """).map { try $0.exchangeRate() }
        return Structure(goals: goals, assets: assets, allocations: allocations, rates: rates)
    }

    /// A write changed, or ended after changing, one of the tables.
    fileprivate func moved() {
        state.withLock { state in
            state.version &+= 1
            state.kept = nil
        }
    }
}

/// Tells the cache about the writer's transactions that change its tables.
private final class StructureWrites: TransactionObserver {
    let cache: StructureCache
    /// Touched on the writer's queue only.
    private var changing = false

    init(cache: StructureCache) { self.cache = cache }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { StructureCache.tables.contains(eventKind.tableName) }

    func databaseDidChange(with event: DatabaseEvent) {
        guard !changing else { return }
        changing = true
        cache.moved()
    }

    func databaseDidCommit(_ db: Database) { end() }
    func databaseDidRollback(_ db: Database) { end() }

    private func end() {
        guard changing else { return }
        changing = false
        cache.moved()
    }
}
