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

    /// How a row is keyed: worked out apart from the chunk (on the import's reading thread).
    struct Key: Sendable {
        /// The external_id the caller gave (the file's own, or a numbered content key); nil
        /// for a row keyed by its content hash alone.
        fileprivate var given: String?
        fileprivate var hash: (UInt64, UInt64)
        /// Whether the row is keyed by its content (derived, or the file's id is that key).
        fileprivate var contentKeyed: Bool

        /// The external_id `key` for `row`.
        static func given(_ key: String, _ row: TransactionCSVRow) -> Key {
            let contentKeyed = ExternalKeys.stored(key, dateText: row.dateText, amountText: row.amountText, note: row.note).contentKeyed
            return Key(given: key, hash: (0, 0), contentKeyed: contentKeyed)
        }

        /// The row's content hash (the first of the import's rows with that hash).
        static func content(_ hash: (UInt64, UInt64)) -> Key { Key(given: nil, hash: hash, contentKeyed: true) }
    }

    struct Entry {
        var row: TransactionCSVRow
        private var keyed: Key
        /// Whether `key` is the row's own content key, made for a row without an external_id
        /// (unique among the import's rows of this asset).
        var derived: Bool { keyed.given == nil }
        /// Whether the row is keyed by its content (derived, or the file's id is that key).
        var contentKeyed: Bool { keyed.contentKeyed }
        var milliseconds: Int64 { row.milliseconds }

        init(row: TransactionCSVRow, key: Key) {
            self.row = row
            keyed = key
        }

        /// The row's external_id: the one given, or its content key (made only when asked for:
        /// most rows of a history never need it as text).
        var key: String { keyed.given ?? TransactionCSVRow.contentKey(keyed.hash) }
    }

    private(set) var entries: [Entry] = []
    /// Content-keyed rows dated after this cannot be stored yet; nil until the first flush.
    private var newestBefore: Int64?
    /// Whether the asset holds a row whose own external_id text has the form of a content
    /// key, which a content-keyed row of the same key must also meet; nil until a flush has a
    /// content-keyed row (finding out reads every keyed row of the asset: a sync, whose rows
    /// all have ids of their own, read its whole account again at every page).
    private var contentKeyTexts: Bool?

    /// The INSERT statements used, by their rows and whether they are keyless (a cached
    /// statement is found by hashing its SQL, a full chunk's some 12 KB).
    private var prepared: [Int: Statement] = [:]
    /// The texts of the rows an INSERT binds.
    private var texts: [UInt8] = []

    init() { entries.reserveCapacity(Self.capacity) }

    var isFull: Bool { entries.count >= Self.capacity }

    /// Adds a row keyed by `key` (taken, not copied: an import's rows pass through here once).
    mutating func append(_ row: consuming TransactionCSVRow, _ key: consuming Key) {
        entries.append(Entry(row: row, key: key))
    }

    /// Adds a row with the external_id `key`.
    mutating func append(_ row: TransactionCSVRow, key: String) {
        append(row, .given(key, row))
    }

    /// Inserts the entries into the asset (its id and `asset_ref`), adds what went in to its
    /// total, and empties the chunk. Calls `body` with each entry in file order, and whether it
    /// was inserted (false: its external_id was already there, from before or from an earlier
    /// row of the file).
    mutating func flush(into db: Database, asset: (id: String, ref: Int64), source: AssetTransaction.Source = .import, createdAt: Date,
                        refs block: inout RefBlock, _ body: (Entry, _ inserted: Bool) throws -> Void) throws {
        guard !entries.isEmpty else { return }
        if newestBefore == nil {
            newestBefore = try Int64.fetchOne(db.cachedStatement(sql: "SELECT MAX(date) FROM asset_transaction WHERE asset = ?"),
                                              arguments: [asset.ref]) ?? .min
        }
        if contentKeyTexts == nil, entries.contains(where: \.contentKeyed) {
            contentKeyTexts = try Bool.fetchOne(db.cachedStatement(sql: """
                SELECT EXISTS (SELECT 1 FROM asset_transaction WHERE asset = ? AND external_key IS NOT NULL
                                  AND length(external_id) = \(ExternalKeys.contentKeyLength) AND external_id GLOB 'csv-*')
                """), arguments: [asset.ref]) ?? true
        }
        let keyTexts = contentKeyTexts ?? false
        // Rows already stored, by content: each keeps its place, with the ref it has.
        var present = [Int64?](repeating: nil, count: entries.count)
        let everyRow = entries.contains { $0.contentKeyed && !$0.derived }
        var inChunk = Set<String>()
        // By index: an entry bound by a loop would be copied out of the array, for every row.
        for index in entries.indices where entries[index].contentKeyed {
            if everyRow {
                guard inChunk.insert(entries[index].key).inserted else {
                    present[index] = 0
                    continue
                }
            } else if entries[index].milliseconds > newestBefore!, !keyTexts {
                continue
            }
            let entry = entries[index]
            present[index] = try ExternalKeys.findContent(asset: asset.ref, date: entry.milliseconds, amountText: entry.row.amountText,
                                                          note: entry.row.note, db)
            if present[index] == nil, keyTexts { present[index] = try ExternalKeys.find(entry.key, asset: asset.ref, db) }
        }
        let fresh = entries.count - present.count { $0 != nil }
        var next = fresh > 0 ? try block.take(fresh, db) : 0
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
        var newest = Int64.min
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
                var start = 0
                while start < rows.count {
                    let run = InsertRuns.rows(rows.count - start, largest: Self.capacity)
                    try Self.insert(entries, rows: rows[start..<start + run], refs: refs, asset: asset.ref, source: source, createdAt: created,
                                    statement(db, rows: run, keyless: keyless), texts: &texts) { inserted.insert($0) }
                    start += run
                }
                allWent = keyless
            }
            // Of rows sharing an external key, the first went in. Any other either meets its
            // external_id already stored (the same id: already present) or collided with another
            // id's key and goes in on its own at the next free key of its block.
            var earliest: Int64?
            for index in entries.indices {
                var went = present[index] == nil && (allWent || inserted.contains(refs[index]))
                if present[index] == nil, !went, !entries[index].contentKeyed, try ExternalKeys.find(entries[index].key, asset: asset.ref, db) == nil {
                    let entry = entries[index]
                    guard let free = try ExternalKeys.freeKey(asset: asset.ref, home: ExternalKeys.home(entry.key), db) else {
                        throw DomainError.invalidField("external_id", "'\(entry.key)' cannot be stored: too many ids of this asset share its key")
                    }
                    try db.cachedStatement(sql: TransactionTable.insertOne).execute(arguments: [
                        try block.take(1, db), asset.ref, entry.row.amountText, entry.milliseconds,
                        TransactionKind(source: source, contentKeyed: false).code, entry.row.note, free, entry.key, created, nil,
                    ])
                    went = true
                }
                if went {
                    added.add(entries[index].row.amount, units: entries[index].row.units)
                    let milliseconds = entries[index].milliseconds
                    if earliest.map({ milliseconds < $0 }) ?? true { earliest = milliseconds }
                    newest = max(newest, milliseconds)
                    if !entries[index].derived {
                        if !entries[index].contentKeyed, ExternalKeys.looksLikeContentKey(entries[index].key) { contentKeyTexts = true }
                        // A content key a file gave may be met again by a later row of this import.
                        if entries[index].contentKeyed { newestBefore = .max }
                    }
                }
                results.append(went)
            }
            return earliest
        }
        for index in entries.indices { try body(entries[index], results[index]) }
        if newest > .min { try SavingsDatabase.addToBalance(assetID: asset.id, amount: added.plainText, newest: newest, db) }
        entries.removeAll(keepingCapacity: true)
    }

    /// The INSERT of `rows` rows (a size `InsertRuns` gives).
    private mutating func statement(_ db: Database, rows: Int, keyless: Bool) throws -> Statement {
        let key = 2 * rows + (keyless ? 1 : 0)
        if let kept = prepared[key] { return kept }
        let made = try db.cachedStatement(sql: (keyless ? Self.keylessSQL : Self.keyedSQL)[rows]!)
        prepared[key] = made
        return made
    }

    /// Binds and runs the INSERT of the entries at `rows` (with their `refs`), calling `inserted`
    /// with each ref it returns. The
    /// rows' texts are copied into `texts` first and bound where they lie there, so SQLite
    /// takes no copy of its own (an allocation and a free per text).
    private static func insert(_ entries: [Entry], rows: ArraySlice<Int>, refs: [Int64], asset: Int64, source: AssetTransaction.Source,
                               createdAt: Int64, _ statement: Statement, texts: inout [UInt8], inserted: (Int64) -> Void) throws {
        let raw = statement.sqliteStatement
        sqlite3_reset(raw)
        defer {
            sqlite3_reset(raw)
            sqlite3_clear_bindings(raw)
        }
        func check(_ code: Int32) throws { guard code == SQLITE_OK else { throw Self.error(raw, code: code, statement) } }
        // Where each row's amount, note and external_id lie in `texts` (-1: NULL).
        var spans: [(start: Int32, count: Int32)] = []
        spans.reserveCapacity(rows.count * 3)
        texts.removeAll(keepingCapacity: true)
        func keep(_ text: String?) {
            guard var text else { return spans.append((-1, 0)) }
            spans.append((Int32(texts.count), Int32(text.utf8.count)))
            text.withUTF8 { texts.append(contentsOf: $0) }
        }
        for row in rows {
            keep(entries[row].row.amountText)
            keep(entries[row].row.note)
            keep(entries[row].contentKeyed ? nil : entries[row].key)
        }
        // A byte past the texts, so that even an empty one has an address.
        texts.append(0)
        try texts.withUnsafeBufferPointer { buffer in
            let base = UnsafeRawPointer(buffer.baseAddress!).assumingMemoryBound(to: CChar.self)
            func bind(_ index: Int32, _ span: (start: Int32, count: Int32)) throws {
                guard span.start >= 0 else { return try check(sqlite3_bind_null(raw, index)) }
                // No destructor (SQLITE_STATIC): SQLite reads the text where it lies until the
                // bindings are cleared.
                try check(sqlite3_bind_text(raw, index, base + Int(span.start), span.count, nil))
            }
            try check(sqlite3_bind_int64(raw, 1, asset))
            try check(sqlite3_bind_int64(raw, 2, createdAt))
            for (index, row) in rows.enumerated() {
                let first = Int32(3 + 7 * index), contentKeyed = entries[row].contentKeyed
                try check(sqlite3_bind_int64(raw, first, refs[row]))
                try bind(first + 1, spans[3 * index])
                try check(sqlite3_bind_int64(raw, first + 2, entries[row].milliseconds))
                try bind(first + 3, spans[3 * index + 1])
                try check(sqlite3_bind_int64(raw, first + 4, TransactionKind(source: source, contentKeyed: contentKeyed).code))
                if contentKeyed {
                    try check(sqlite3_bind_null(raw, first + 5))
                } else {
                    try check(sqlite3_bind_int64(raw, first + 5, ExternalKeys.home(entries[row].key)))
                }
                try bind(first + 6, spans[3 * index + 2])
            }
            while true {
                let code = sqlite3_step(raw)
                if code == SQLITE_DONE { return }
                guard code == SQLITE_ROW else { throw Self.error(raw, code: code, statement) }
                inserted(sqlite3_column_int64(raw, 0))
            }
        }
    }

    private static let keylessSQL = Dictionary(uniqueKeysWithValues: InsertRuns.sizes(upTo: capacity).map { ($0, sql(rows: $0, keyless: true)) })
    private static let keyedSQL = Dictionary(uniqueKeysWithValues: InsertRuns.sizes(upTo: capacity).map { ($0, sql(rows: $0, keyless: false)) })

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

    private static func error(_ raw: SQLiteStatement, code: Int32, _ statement: Statement) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(raw))), sql: statement.sql)
    }
}
