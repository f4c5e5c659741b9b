import Foundation
import GRDB
import GRDBSQLite
import SavingsCore

/// A run of an import's rows inserted with one statement: a multi-row INSERT whose RETURNING
/// names the rows that went in, so each row is known inserted or already present without a
/// statement (and its statement journal, CHECK and trigger set-up) per row.
struct ImportChunk {
    static let capacity = 256

    struct Entry {
        var row: TransactionCSVRow
        /// The row's external_id (the file's own, or its content key).
        var key: String
        /// Whether `key` is the row's own content key, which is not stored but worked out again.
        var derived: Bool
    }

    private(set) var entries: [Entry] = []

    init() { entries.reserveCapacity(Self.capacity) }

    var isFull: Bool { entries.count >= Self.capacity }

    mutating func append(_ row: TransactionCSVRow, key: String, derived: Bool = false) {
        entries.append(Entry(row: row, key: key, derived: derived))
    }

    /// Inserts the entries into the asset (its id and `asset_ref`), adds what went in to its
    /// total, and empties the chunk. Calls `body` with each entry in file order, and whether it
    /// was inserted (false: its external_id was already there, from before or from an earlier
    /// row of the file).
    mutating func flush(into db: Database, asset: (id: String, ref: Int64), source: AssetTransaction.Source = .import, createdAt: String,
                        _ body: (Entry, _ inserted: Bool) throws -> Void) throws {
        guard !entries.isEmpty else { return }
        let statement = try db.cachedStatement(sql: entries.count == Self.capacity ? Self.fullSQL : Self.sql(rows: entries.count))
        let raw = statement.sqliteStatement
        sqlite3_reset(raw)
        func bind(_ index: Int32, _ text: String?) throws {
            let code: Int32
            if var text, !text.isEmpty {
                code = text.withUTF8 { bytes in
                    bytes.withMemoryRebound(to: CChar.self) { sqlite3_bind_text(raw, index, $0.baseAddress, Int32(bytes.count), Self.transient) }
                }
            } else {
                code = text == nil ? sqlite3_bind_null(raw, index) : sqlite3_bind_text(raw, index, "", 0, Self.transient)
            }
            guard code == SQLITE_OK else { throw Self.error(raw, code: code, statement) }
        }
        func check(_ code: Int32) throws { guard code == SQLITE_OK else { throw Self.error(raw, code: code, statement) } }
        try check(sqlite3_bind_int64(raw, 1, asset.ref))
        try bind(2, createdAt)
        try bind(3, source.rawValue)
        var homes = [Int64]()
        homes.reserveCapacity(entries.count)
        for (index, entry) in entries.enumerated() {
            let first = Int32(4 + 5 * index)
            let home = ExternalKeys.home(entry.key)
            homes.append(home)
            try bind(first, entry.row.amountText)
            try bind(first + 1, entry.row.dateText)
            try bind(first + 2, entry.row.note)
            try check(sqlite3_bind_int64(raw, first + 3, home))
            try bind(first + 4, entry.derived ? nil : entry.key)
        }
        var added: Decimal = 0
        var results: [Bool] = []
        results.reserveCapacity(entries.count)
        try WindowCache.touchingOnce(db, assetID: asset.id) {
            var fresh = Set<Int64>(minimumCapacity: entries.count)
            defer { sqlite3_reset(raw) }
            while true {
                let code = sqlite3_step(raw)
                if code == SQLITE_DONE { break }
                guard code == SQLITE_ROW else { throw Self.error(raw, code: code, statement) }
                fresh.insert(sqlite3_column_int64(raw, 0))
            }
            sqlite3_reset(raw)
            // Of rows sharing a key, the first went in. Any other either meets its external_id
            // already stored (the same id: already present) or collided with another id's key
            // and goes in on its own at the next free key of its block.
            var earliest: String?
            for (entry, home) in zip(entries, homes) {
                var inserted = fresh.remove(home) != nil
                if !inserted, try ExternalKeys.find(entry.key, asset: asset.ref, db) == nil {
                    guard let free = try ExternalKeys.freeKey(asset: asset.ref, home: home, db) else {
                        throw DomainError.invalidField("external_id", "'\(entry.key)' cannot be stored: too many ids of this asset share its key")
                    }
                    try db.cachedStatement(sql: CompactTransactions.insertOne).execute(arguments: [
                        nil, asset.ref, entry.row.amountText, entry.row.dateText, source.rawValue, entry.row.note, free, entry.key, createdAt, nil,
                    ])
                    inserted = true
                }
                if inserted {
                    added += entry.row.amount
                    if earliest.map({ entry.row.dateText < $0 }) ?? true { earliest = entry.row.dateText }
                }
                results.append(inserted)
            }
            return earliest
        }
        for (entry, inserted) in zip(entries, results) { try body(entry, inserted) }
        if added != 0 { try SavingsDatabase.addToBalance(assetID: asset.id, amount: Amount.plainText(added), db) }
        entries.removeAll(keepingCapacity: true)
    }

    private static let fullSQL = sql(rows: capacity)

    /// `?1` is the asset's ref, `?2` created_at, `?3` the source; five parameters a row follow.
    private static func sql(rows: Int) -> String {
        var sql = "INSERT INTO asset_transaction (amount, date, note, external_key, external_id, asset, source, created_at) VALUES "
        for index in 0..<rows {
            let first = 4 + 5 * index
            if index > 0 { sql += "," }
            sql += "(?\(first),?\(first + 1),?\(first + 2),?\(first + 3),?\(first + 4),?1,?3,?2)"
        }
        return sql + " ON CONFLICT(asset, external_key) DO NOTHING RETURNING external_key"
    }

    /// SQLite copies the text before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private static func error(_ raw: SQLiteStatement, code: Int32, _ statement: Statement) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(raw))), sql: statement.sql)
    }
}
