import Foundation
import GRDB
import SavingsCore
import Synchronization

/// What the store knows about each asset's execution-window timeline it has read: the
/// reading's stamp and the end it was read up to. A reading stays true of everything up to
/// that end until a write changes a row of the asset dated at or before it. Its reader is then
/// told "unchanged since stamp", or, when rows dated after that end exist (a deposit made
/// since, a dated transaction whose time has come), "that reading plus these later points".
/// After a write to one account a month's figures read that account alone, and a deposit made
/// now reads that deposit alone, however busy the accounts are.
///
/// Never stale: every asset and date of a row a write changes is reported (`touch`, during the
/// write: readings reaching that date go at once and none of the asset comes back until the
/// transaction has ended) by the writer's triggers, and for transactions inserted by the two
/// places that insert them (`touching`: a trigger per inserted row was a third of a bulk
/// INSERT's time in SQLite), and every write transaction ends with
/// `invalidate`, on the writer right after its commit or rollback, before the next write. A
/// reading is kept only if no write ended since before its read transaction began, and an
/// entry is used only if it was still there after that transaction's snapshot was taken.
final class WindowCache: Sendable {
    struct Entry: Sendable {
        var stamp: UInt64
        /// The window's end the reading went up to (stored timestamp text).
        var end: String
        /// The asset had nothing in this window (no balance, no targets, no change).
        var empty: Bool
        /// No transaction or target row of the asset is dated after `end` and before this
        /// (stored timestamp text; nil: not known). A reading taken up to an end before it
        /// needs no look at the database: the rows dated after a reading's end at the time it
        /// was read give its first value, and each write touching the asset later than the end
        /// brings it down to that date.
        var quietUntil: String?
    }

    private struct State {
        var version: UInt64 = 0
        var stamps: UInt64 = 0
        /// Assets the write transaction in progress has touched, with the earliest date touched.
        var touched: [String: String] = [:]
        /// Window start (stored timestamp text) → asset id → entry.
        var windows: [String: [String: Entry]] = [:]
        /// Window starts, least recently used first.
        var recent: [String] = []
        /// Change points of each asset's last whole reading (kept through writes): the next
        /// whole reading reserves that much at once instead of growing step by step.
        var sizes: [String: Int] = [:]
    }

    /// `Entry.quietUntil` of an asset with nothing dated after the reading's end.
    static let never = "~"

    /// Windows remembered: the executing month's and a few others (a goal's monthly history).
    static let windowLimit = 4

    private let state = Mutex(State())

    /// Tests only: runs inside a reading once its snapshot is taken, before anything is kept
    /// (to commit a write in between).
    let afterSnapshot = Mutex<(@Sendable () -> Void)?>(nil)

    /// The name of the SQL function the writer's triggers call.
    static let functionName = "savingsd_touch_asset"

    /// Run on the writer connection only, after migrations: temporary triggers (they exist for
    /// this connection alone and never in the file) report each changed asset, and an observer
    /// ends each write transaction.
    ///
    /// Temporary storage is set to memory first, for good: changing `temp_store` drops every
    /// temporary trigger of the connection. (Memory is also where a large write wants its
    /// statement journals, rather than in temporary files.)
    func install(on db: Database) throws {
        try db.execute(sql: "PRAGMA temp_store = MEMORY")
        db.add(transactionObserver: TransactionEnd(cache: self), extent: .databaseLifetime)
        db.add(function: DatabaseFunction(Self.functionName, argumentCount: 2, pure: false) { [self] values in
            // Dates are integer milliseconds (text in a database from before schema v13).
            guard let id = String.fromDatabaseValue(values[0]) else { return nil }
            if let millis = Int64.fromDatabaseValue(values[1]) {
                touch(id, date: Timestamp.format(milliseconds: millis))
            } else if let date = String.fromDatabaseValue(values[1]) {
                touch(id, date: date)
            }
            return nil
        })
        // Rows are inserted by `SavingsDatabase.insertRow`, `ImportChunk` and
        // `HistoryTable.insert` alone, which touch their asset themselves (`touching`), once
        // for a bulk insert.
        var sql = "CREATE TEMP TABLE \(Self.marker) (installed INTEGER);\n"
        for (table, date) in [("asset_transaction", "date"), ("allocation_history", "timestamp")] {
            let touch = { (row: String) in
                "SELECT \(Self.functionName)((SELECT id FROM main.asset_ref WHERE ref = \(row).asset), \(row).\(date));"
            }
            sql += """
                CREATE TEMP TRIGGER \(table)_touch_delete AFTER DELETE ON main.\(table) BEGIN \(touch("OLD")) END;
                CREATE TEMP TRIGGER \(table)_touch_update AFTER UPDATE ON main.\(table) BEGIN \(touch("OLD")) \(touch("NEW")) END;

                """
        }
        try db.execute(sql: sql)
    }

    /// The temporary table whose presence says the cache is installed on a connection.
    private static let marker = "window_cache_installed"

    /// Runs an insert of transactions into one asset, then touches the asset once at the
    /// earliest date `body` returns (integer milliseconds; nil: nothing went in). On a
    /// connection without the cache installed it is just `body`.
    static func touching(_ db: Database, assetID: String, _ body: () throws -> Int64?) throws {
        let earliest = try body()
        guard let earliest, try db.tableExists(marker, in: "temp") else { return }
        try db.cachedStatement(sql: "SELECT \(functionName)(?, ?)").execute(arguments: [assetID, earliest])
    }

    /// A row of an asset dated `date` changes in the write in progress: the asset's readings
    /// that reach that date go at once (a reader whose snapshot already holds the change must
    /// not find them), and none of the asset is kept again until the transaction has ended.
    func touch(_ assetID: String, date: String) {
        state.withLock { state in
            if let earliest = state.touched[assetID], earliest <= date { return }
            state.touched[assetID] = date
            Self.forget(assetID, from: date, in: &state)
        }
    }

    private static func forget(_ assetID: String, from date: String, in state: inout State) {
        for start in state.windows.keys {
            guard let entry = state.windows[start]?[assetID] else { continue }
            if entry.end >= date {
                state.windows[start]?[assetID] = nil
            } else if let quiet = entry.quietUntil, quiet > date {
                state.windows[start]?[assetID]?.quietUntil = date
            }
        }
    }

    /// After every write transaction, committed or not (on the writer, before the next one).
    func invalidate() {
        state.withLock { state in
            state.version &+= 1
            guard !state.touched.isEmpty else { return }
            for (id, date) in state.touched { Self.forget(id, from: date, in: &state) }
            state.touched = [:]
        }
    }

    /// Taken before a read transaction begins.
    var version: UInt64 { state.withLock { $0.version } }

    func nextStamp() -> UInt64 { state.withLock { $0.stamps += 1; return $0.stamps } }

    /// How many change points the asset's last whole reading had (0 if none).
    func size(of assetID: String) -> Int { state.withLock { $0.sizes[assetID] ?? 0 } }

    func noteSize(_ count: Int, of assetID: String) { state.withLock { $0.sizes[assetID] = count } }

    /// The entries of a window; call it once the read transaction's snapshot is taken.
    func entries(start: String) -> [String: Entry] {
        state.withLock { $0.windows[start] ?? [:] }
    }

    /// Keeps a window's entries if no write ended since `version` was taken, except those of
    /// assets a write in progress has touched.
    func keep(start: String, _ entries: [String: Entry], version: UInt64) {
        state.withLock { state in
            guard state.version == version else { return }
            state.windows[start] = state.touched.isEmpty ? entries : entries.filter { state.touched[$0.key] == nil }
            state.recent.removeAll { $0 == start }
            state.recent.append(start)
            while state.recent.count > Self.windowLimit { state.windows[state.recent.removeFirst()] = nil }
        }
    }
}

/// Ends each write transaction of the writer connection for the cache.
private final class TransactionEnd: TransactionObserver {
    let cache: WindowCache

    init(cache: WindowCache) { self.cache = cache }

    func observes(eventsOfKind eventKind: DatabaseEventKind) -> Bool { false }
    func databaseDidChange(with event: DatabaseEvent) {}
    func databaseDidCommit(_ db: Database) { cache.invalidate() }
    func databaseDidRollback(_ db: Database) { cache.invalidate() }
}

/// One asset's timeline for a window, or how it follows from a reading the caller has.
public struct WindowTimeline: Sendable {
    public enum Reading: Sendable {
        /// The whole timeline.
        case full(AssetTimeline)
        /// The same as the reading `stamp`, which the caller said it has.
        case unchanged
        /// The reading `since` (which the caller has) followed by these points, all dated after
        /// every point of it.
        case extended(since: UInt64, later: [AssetTimeline.Change])
    }

    public let assetID: UUID
    /// Names this reading: the same stamp always means the same timeline.
    public let stamp: UInt64
    public let reading: Reading
}
