import Foundation
import GRDB
import SavingsCore

/// The daemon's database: owns the GRDB writer, its migrations, and every named operation.
/// SQL lives here and nowhere else. Every write is one transaction, committed before return.
public struct SavingsDatabase: Sendable {
    let writer: any DatabaseWriter
    let figures = FigureCache()
    let windows = WindowCache()
    let structure = StructureCache()

    /// Opens (creating if needed) the database file, refusing one written by a newer schema.
    ///
    /// The file is created with mode 0600; WAL, `synchronous=FULL` and foreign keys are on.
    /// With a backup policy, a database that is about to be migrated is first copied into the
    /// backup directory, so an upgrade can always be undone.
    public static func open(path: String, backups: BackupPolicy? = nil, now: Date = Date()) throws -> SavingsDatabase {
        let existed = try DatabaseFile.preparePrivateFile(at: path)
        var applied: Set<String> = []
        if existed {
            applied = try refuseNewerSchema(path: path)
            if let backups, !applied.isEmpty, applied.count < Schema.migrator.migrations.count {
                try backupBeforeMigration(path: path, applied: applied, policy: backups, now: now)
            }
        }
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.busyMode = .timeout(5)
        // A daemon has no user waiting on an interface: GRDB's default (user-initiated) makes
        // libdispatch raise its threads' priority, which an unprivileged service may not do.
        configuration.qos = .default
        configuration.prepareDatabase { db in
            try db.execute(sql: "PRAGMA synchronous = FULL")
            for function in Schema.functions { db.add(function: function) }
        }
        let pool: DatabasePool
        do {
            pool = try DatabasePool(path: path, configuration: configuration)
        } catch {
            throw StoreError(message: "cannot open database \(path): \(error)")
        }
        let database = SavingsDatabase(writer: pool)
        try database.migrate()
        // Rewriting the transactions' table (v12, v13, v18) leaves the old rows' pages free:
        // the file is rewritten once, so an upgraded database takes what one written new takes.
        if !applied.isEmpty, !applied.contains(TransactionTable.linkedMigration) {
            do {
                try pool.writeWithoutTransaction { db in
                    try db.execute(sql: "VACUUM")
                    try db.checkpoint(.truncate)
                }
            } catch {
                throw StoreError(message: "cannot compact \(path) after its upgrade: \(error)")
            }
        }
        return database
    }

    /// A private in-memory database with the full schema, for tests.
    public static func inMemory() throws -> SavingsDatabase {
        var configuration = Configuration()
        configuration.foreignKeysEnabled = true
        configuration.prepareDatabase { db in for function in Schema.functions { db.add(function: function) } }
        let database = SavingsDatabase(writer: try DatabaseQueue(configuration: configuration))
        try database.migrate()
        return database
    }

    /// The migration identifiers this build knows, in order.
    public static var knownMigrations: [String] { Schema.migrator.migrations }

    private func migrate() throws {
        do {
            try Schema.migrator.migrate(writer)
        } catch {
            throw StoreError(message: "database migration failed: \(error)")
        }
        try writer.writeWithoutTransaction { db in
            try windows.install(on: db)
            structure.install(on: db)
        }
    }

    /// Reads the applied migrations without writing anything; unknown ones mean a newer build
    /// wrote this file, and we must not touch it.
    private static func backupBeforeMigration(path: String, applied: Set<String>, policy: BackupPolicy, now: Date) throws {
        var configuration = Configuration()
        configuration.readonly = true
        let next = Schema.migrator.migrations.first { !applied.contains($0) } ?? "migration"
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            _ = try automaticBackup(from: queue, reason: "before-\(next)", policy: policy, now: now)
        } catch {
            throw StoreError(message: "cannot back up \(path) before migrating it (\(reason(error))); the file was not modified")
        }
    }

    @discardableResult
    private static func refuseNewerSchema(path: String) throws -> Set<String> {
        var configuration = Configuration()
        configuration.readonly = true
        let applied: Set<String>
        do {
            let queue = try DatabaseQueue(path: path, configuration: configuration)
            defer { try? queue.close() }
            applied = try queue.read { db in
                try db.tableExists("grdb_migrations")
                    ? Set(try String.fetchAll(db, sql: "SELECT identifier FROM grdb_migrations"))
                    : []
            }
        } catch {
            throw StoreError(message: "cannot read database \(path): \(error)")
        }
        let unknown = applied.subtracting(Schema.migrator.migrations)
        if !unknown.isEmpty {
            throw StoreError(message: """
                database \(path) was written by a newer savingsd (unknown schema migrations: \
                \(unknown.sorted().joined(separator: ", "))); refusing to open it. \
                Upgrade savingsd or point --database at another file. The file was not modified.
                """)
        }
        return applied
    }

    /// Number of applied schema migrations.
    public func schemaVersion() async throws -> Int {
        try await read { db in try Schema.migrator.appliedMigrations(db).count }
    }

    /// A trivial read proving the database answers (used by the watchdog).
    public func ping() async throws {
        _ = try await read { db in try Int.fetchOne(db, sql: "SELECT 1") }
    }

    /// Entity counts for `daemon.status`.
    public func counts() async throws -> [String: Int] {
        try await read { db in
            [
                "goals": try GoalRecord.filter(GoalRecord.Columns.archived == false).fetchCount(db),
                "archived_goals": try GoalRecord.filter(GoalRecord.Columns.archived == true).fetchCount(db),
                "assets": try AssetRecord.fetchCount(db),
                "transactions": try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM asset_transaction") ?? 0,
                "allocations": try AllocationRecord.fetchCount(db),
                "rates": try RateRecord.fetchCount(db),
            ]
        }
    }

    public func close() throws {
        if let pool = writer as? DatabasePool { try pool.close() }
        if let queue = writer as? DatabaseQueue { try queue.close() }
    }

    // MARK: - Transactions with client-facing errors

    func read<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            return try await writer.read(body)
        } catch {
            throw StoreError.clientFacing(error)
        }
    }

    func write<T: Sendable>(_ body: @escaping @Sendable (Database) throws -> T) async throws -> T {
        do {
            // Invalidate after the commit (and also after a failed attempt: harmless).
            defer { figures.invalidate() }
            return try await writer.write(body)
        } catch {
            throw StoreError.clientFacing(error)
        }
    }

    /// The page cache SQLite gives a connection (its default, 2 MiB), kept outside bulk writes.
    static let defaultCacheBytes = 2_048_000

    /// The page cache for writing a file's rows: as many bytes as the file has, from the 2 MiB
    /// default to 12 MiB. Rows of one account whose dates go back and forth (a file of several
    /// exports one after another) land all over its part of the table, and a small cache reads
    /// the same pages again and again. A million such rows in one file by path, alternating
    /// runs: a median 10.0 s with 2 MiB (peak RSS 52 MB), 7.4 s with 12 MiB (67 MB), 6.7 s
    /// with 16 MiB (72-80 MB: at the 80 MB an import may take). (A 64 MiB cache took the
    /// daemon to 152 MB.) SQLite takes the cache's pages only as it reads them.
    static func importCacheBytes(fileBytes: Int?) -> Int {
        min(12 << 20, max(defaultCacheBytes, fileBytes ?? 0))
    }

    /// A write transaction of many rows, committed or rolled back as its body says, with a page
    /// cache of `cacheBytes` while it runs (the default again after). (Statement journals are
    /// in memory on the writer anyway: `WindowCache.install`.)
    ///
    /// `durable: false` commits without waiting for the disk (`synchronous = NORMAL` for this
    /// transaction alone): for a page of a sync, whose rows no one has been told are stored.
    /// WAL keeps the order of commits, so a power loss can only take the last pages with it
    /// (and the cursor saying where the walk goes on, in the same transactions); the sync's
    /// last transaction, durable, makes every page before it durable too, before the sync
    /// answers.
    func bulkWrite<T: Sendable>(durable: Bool = true, cacheBytes: Int = defaultCacheBytes,
                                _ body: @escaping @Sendable (Database) throws -> BulkWriteOutcome<T>) async throws -> T {
        do {
            defer { figures.invalidate() }
            return try await writer.writeWithoutTransaction { db in
                if !durable { try db.execute(sql: "PRAGMA synchronous = NORMAL") }
                let larger = cacheBytes > Self.defaultCacheBytes
                if larger { try db.execute(sql: "PRAGMA cache_size = -\(cacheBytes / 1024)") }
                let outcome = Result { () throws -> T in
                    var result: T?
                    try db.inTransaction(.immediate) {
                        switch try body(db) {
                        case .commit(let value):
                            result = value
                            return .commit
                        case .rollback(let value):
                            result = value
                            return .rollback
                        }
                    }
                    guard let result else { throw StoreError(message: "the transaction ended without a result") }
                    return result
                }
                if !durable { try db.execute(sql: "PRAGMA synchronous = FULL") }
                // Back to the default: SQLite frees the pages beyond it.
                if larger { try db.execute(sql: "PRAGMA cache_size = -\(Self.defaultCacheBytes / 1024)") }
                return try outcome.get()
            }
        } catch {
            throw StoreError.clientFacing(error)
        }
    }
}

/// What a `bulkWrite` body returns: its result, and whether its changes stay.
enum BulkWriteOutcome<T: Sendable>: Sendable {
    case commit(T)
    case rollback(T)
}
