import Foundation
import GRDB
import GRDBSQLite
import SavingsCore

/// A run of an import's rows inserted with one statement: a multi-row INSERT (whose RETURNING
/// names the rows that went in, where a row's external key can meet another's), so each row is
/// known inserted or already present without a statement (and its statement journal and CHECK
/// set-up) per row.
///
/// A row keyed by its own content (`TransactionKind`) is looked for first, by its asset, date,
/// amount and note, but only where one can be: at or before the newest date the asset had
/// when the import began. A history imported into an account, oldest first, looks for none.
/// (Identical rows of one file are already told apart by the caller, numbered by their
/// order; only an external_id a file gives that is its row's own content key can meet one of
/// the same import, and such a chunk looks for every row.)
struct ImportChunk {
    static let capacity = 256

    struct Entry {
        var row: TransactionCSVRow
        /// The external_id the caller gave (the file's own, or a numbered content key); nil
        /// for a row keyed by its content hash alone.
        private var given: String?
        private var hash: (UInt64, UInt64)
        /// Whether `key` is the row's own content key, made for a row without an external_id
        /// (unique among the import's rows of this asset).
        var derived: Bool { given == nil }
        /// Whether the row is keyed by its content (derived, or the file's id is that key).
        var contentKeyed: Bool
        var milliseconds: Int64

        init(row: TransactionCSVRow, given: String?, hash: (UInt64, UInt64), contentKeyed: Bool) {
            self.row = row
            self.given = given
            self.hash = hash
            self.contentKeyed = contentKeyed
            milliseconds = Timestamp.milliseconds(row.date)
        }

        /// The row's external_id: the one given, or its content key (made only when asked for:
        /// most rows of a history never need it as text).
        var key: String { given ?? TransactionCSVRow.contentKey(hash) }
    }

    private(set) var entries: [Entry] = []
    /// Content-keyed rows dated after this cannot be stored yet; nil until the first flush.
    private var newestBefore: Int64?
    /// Whether the asset holds a row whose own external_id text has the form of a content
    /// key, which a content-keyed row of the same key must also meet.
    private var contentKeyTexts = false

    init() { entries.reserveCapacity(Self.capacity) }

    var isFull: Bool { entries.count >= Self.capacity }

    /// Adds a row with the external_id `key`.
    mutating func append(_ row: TransactionCSVRow, key: String) {
        let contentKeyed = ExternalKeys.stored(key, dateText: row.dateText, amountText: row.amountText, note: row.note).contentKeyed
        entries.append(Entry(row: row, given: key, hash: (0, 0), contentKeyed: contentKeyed))
    }

    /// Adds a row keyed by its content hash (the first of the import's rows with that hash).
    mutating func append(_ row: TransactionCSVRow, contentHash: (UInt64, UInt64)) {
        entries.append(Entry(row: row, given: nil, hash: contentHash, contentKeyed: true))
    }

    /// Inserts the entries into the asset (its id and `asset_ref`), adds what went in to its
    /// total, and empties the chunk. Calls `body` with each entry in file order, and whether it
    /// was inserted (false: its external_id was already there, from before or from an earlier
    /// row of the file).
    mutating func flush(into db: Database, asset: (id: String, ref: Int64), source: AssetTransaction.Source = .import, createdAt: Date,
                        _ body: (Entry, _ inserted: Bool) throws -> Void) throws {
        guard !entries.isEmpty else { return }
        if newestBefore == nil {
            newestBefore = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(date) FROM asset_transaction WHERE asset = ?"),
                                              arguments: [asset.ref]) ?? .min
            contentKeyTexts = try Bool.fetchOne(db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM asset_transaction WHERE asset = ? AND external_key IS NOT NULL
                                  AND length(external_id) = \(ExternalKeys.contentKeyLength) AND external_id GLOB 'csv-*')
                """), arguments: [asset.ref]) ?? true
        }
        // Rows already stored, by content: each keeps its place, with the ref it has.
        var present = [Int64?](repeating: nil, count: entries.count)
        let everyRow = entries.contains { $0.contentKeyed && !$0.derived }
        var inChunk = Set<String>()
        for (index, entry) in entries.enumerated() where entry.contentKeyed {
            if everyRow {
                guard inChunk.insert(entry.key).inserted else {
                    present[index] = 0
                    continue
                }
            } else if entry.milliseconds > newestBefore!, !contentKeyTexts {
                continue
            }
            present[index] = try ExternalKeys.findContent(asset: asset.ref, date: entry.milliseconds, amountText: entry.row.amountText,
                                                          note: entry.row.note, db)
            if present[index] == nil, contentKeyTexts { present[index] = try ExternalKeys.find(entry.key, asset: asset.ref, db) }
        }
        let fresh = entries.count - present.count { $0 != nil }
        var next = fresh > 0 ? try TransactionTable.takeRefs(fresh, db) : 0
        var refs = [Int64](repeating: 0, count: entries.count)
        for index in entries.indices where present[index] == nil {
            refs[index] = next
            next += 1
        }
        let created = Timestamp.milliseconds(createdAt)
        // Summed in integer units where the amounts allow it (Decimal addition was a twentieth
        // of an import's time).
        var added = RunningTotal(0)
        var results: [Bool] = []
        results.reserveCapacity(entries.count)
        let rows = entries.indices.filter { present[$0] == nil }
        try WindowCache.touching(db, assetID: asset.id) {
            var inserted = Set<Int64>()
            var allWent = false
            if !rows.isEmpty {
                let entries = entries
                // Rows keyed by their content hold no external key, and their refs are new: none
                // can meet a stored row, and each goes in without a conflict clause or RETURNING
                // (which has SQLite keep the returned rows aside, a third of the INSERT's time).
                let keyless = rows.allSatisfy { entries[$0].contentKeyed }
                if !keyless { inserted.reserveCapacity(rows.count) }
                let statement = try db.cachedStatement(sql: rows.count < Self.capacity ? Self.sql(rows: rows.count, keyless: keyless)
                                                           : keyless ? Self.fullSQL : Self.fullKeyedSQL)
                try Self.insert(rows.lazy.map { (entries[$0], refs[$0]) }, asset: asset.ref, source: source, createdAt: created,
                                statement) { inserted.insert($0) }
                allWent = keyless
            }
            // Of rows sharing an external key, the first went in. Any other either meets its
            // external_id already stored (the same id: already present) or collided with another
            // id's key and goes in on its own at the next free key of its block.
            var earliest: Int64?
            for (index, entry) in entries.enumerated() {
                var went = present[index] == nil && (allWent || inserted.contains(refs[index]))
                if present[index] == nil, !went, !entry.contentKeyed, try ExternalKeys.find(entry.key, asset: asset.ref, db) == nil {
                    guard let free = try ExternalKeys.freeKey(asset: asset.ref, home: ExternalKeys.home(entry.key), db) else {
                        throw DomainError.invalidField("external_id", "'\(entry.key)' cannot be stored: too many ids of this asset share its key")
                    }
                    try db.cachedStatement(sql: TransactionTable.insertOne).execute(arguments: [
                        try TransactionTable.takeRefs(1, db), asset.ref, entry.row.amountText, entry.milliseconds,
                        TransactionKind(source: source, contentKeyed: false).code, entry.row.note, free, entry.key, created, nil,
                    ])
                    went = true
                }
                if went {
                    added.add(entry.row.amount, units: RunningTotal.units(entry.row.amountText))
                    if earliest.map({ entry.milliseconds < $0 }) ?? true { earliest = entry.milliseconds }
                    if !entry.contentKeyed, ExternalKeys.looksLikeContentKey(entry.key) { contentKeyTexts = true }
                    // A content key a file gave may be met again by a later row of this import.
                    if entry.contentKeyed, !entry.derived { newestBefore = .max }
                }
                results.append(went)
            }
            return earliest
        }
        for (entry, inserted) in zip(entries, results) { try body(entry, inserted) }
        if added.value != 0 { try SavingsDatabase.addToBalance(assetID: asset.id, amount: Amount.plainText(added.value), db) }
        entries.removeAll(keepingCapacity: true)
    }

    /// Binds and runs the INSERT of `rows`, calling `inserted` with each ref it returns.
    private static func insert(_ rows: some Sequence<(Entry, Int64)>, asset: Int64, source: AssetTransaction.Source, createdAt: Int64,
                               _ statement: Statement, inserted: (Int64) -> Void) throws {
        let raw = statement.sqliteStatement
        sqlite3_reset(raw)
        defer { sqlite3_reset(raw) }
        func check(_ code: Int32) throws { guard code == SQLITE_OK else { throw Self.error(raw, code: code, statement) } }
        func bind(_ index: Int32, _ text: String?) throws {
            guard var text else { return try check(sqlite3_bind_null(raw, index)) }
            guard !text.isEmpty else { return try check(sqlite3_bind_text(raw, index, "", 0, Self.transient)) }
            try check(text.withUTF8 { bytes in
                bytes.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(raw, index, $0.baseAddress, Int32(bytes.count), Self.transient) }
            })
        }
        try check(sqlite3_bind_int64(raw, 1, asset))
        try check(sqlite3_bind_int64(raw, 2, createdAt))
        for (index, (entry, ref)) in rows.enumerated() {
            let first = Int32(3 + 7 * index)
            try check(sqlite3_bind_int64(raw, first, ref))
            try bind(first + 1, entry.row.amountText)
            try check(sqlite3_bind_int64(raw, first + 2, entry.milliseconds))
            try bind(first + 3, entry.row.note)
            try check(sqlite3_bind_int64(raw, first + 4, TransactionKind(source: source, contentKeyed: entry.contentKeyed).code))
            if entry.contentKeyed {
                try check(sqlite3_bind_null(raw, first + 5))
                try check(sqlite3_bind_null(raw, first + 6))
            } else {
                try check(sqlite3_bind_int64(raw, first + 5, ExternalKeys.home(entry.key)))
                try bind(first + 6, entry.key)
            }
        }
        while true {
            let code = sqlite3_step(raw)
            if code == SQLITE_DONE { return }
            guard code == SQLITE_ROW else { throw Self.error(raw, code: code, statement) }
            inserted(sqlite3_column_int64(raw, 0))
        }
    }

    private static let fullSQL = sql(rows: capacity, keyless: true)
    private static let fullKeyedSQL = sql(rows: capacity, keyless: false)

    /// `?1` is the asset's ref, `?2` created_at; seven parameters a row follow. Unless the rows
    /// are all `keyless`, a row whose external key another row holds is left out (`DO NOTHING`),
    /// and the refs of those that went in are returned.
    private static func sql(rows: Int, keyless: Bool) -> String {
        var sql = "INSERT INTO asset_transaction (ref, amount, date, note, kind, external_key, external_id, asset, created_at) VALUES "
        for index in 0..<rows {
            let first = 3 + 7 * index
            if index > 0 { sql += "," }
            sql += "(?\(first),?\(first + 1),?\(first + 2),?\(first + 3),?\(first + 4),?\(first + 5),?\(first + 6),?1,?2)"
        }
        return keyless ? sql : sql + " ON CONFLICT DO NOTHING RETURNING ref"
    }

    /// SQLite copies the text before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private static func error(_ raw: SQLiteStatement, code: Int32, _ statement: Statement) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(raw))), sql: statement.sql)
    }
}
