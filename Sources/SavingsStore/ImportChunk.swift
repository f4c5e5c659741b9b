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
    }

    private(set) var entries: [Entry] = []

    init() { entries.reserveCapacity(Self.capacity) }

    var isFull: Bool { entries.count >= Self.capacity }

    mutating func append(_ row: TransactionCSVRow, key: String) { entries.append(Entry(row: row, key: key)) }

    /// Inserts the entries into the asset and empties the chunk. Calls `body` with each entry in
    /// file order, and whether it was inserted (false: its external_id was already there, from
    /// before or from an earlier row of the file).
    mutating func flush(into db: Database, assetID: String, source: AssetTransaction.Source = .import, createdAt: String,
                        ids: inout StoreKey.TimeOrderedSequence, _ body: (Entry, _ inserted: Bool) throws -> Void) throws {
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
        try bind(1, assetID)
        try bind(2, createdAt)
        try bind(3, source.rawValue)
        for (index, entry) in entries.enumerated() {
            let first = Int32(4 + 5 * index)
            try bind(first, ids.next())
            try bind(first + 1, entry.row.amountText)
            try bind(first + 2, entry.row.dateText)
            try bind(first + 3, entry.row.note)
            try bind(first + 4, entry.key)
        }
        var fresh = Set<String>(minimumCapacity: entries.count)
        defer { sqlite3_reset(raw) }
        while true {
            let code = sqlite3_step(raw)
            if code == SQLITE_DONE { break }
            guard code == SQLITE_ROW else { throw Self.error(raw, code: code, statement) }
            // By its length: an external_id may hold any character, NUL too.
            if let text = sqlite3_column_text(raw, 0) {
                fresh.insert(String(decoding: UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(raw, 0))), as: UTF8.self))
            }
        }
        // Of rows sharing an external_id, the first went in and the others met it.
        for entry in entries { try body(entry, fresh.remove(entry.key) != nil) }
        entries.removeAll(keepingCapacity: true)
    }

    private static let fullSQL = sql(rows: capacity)

    /// `?1` is the asset, `?2` created_at, `?3` the source; five parameters a row follow.
    private static func sql(rows: Int) -> String {
        var sql = "INSERT INTO asset_transaction (id, asset_id, amount, date, source, note, external_id, created_at) VALUES "
        for index in 0..<rows {
            let first = 4 + 5 * index
            if index > 0 { sql += "," }
            sql += "(?\(first),?1,?\(first + 1),?\(first + 2),?3,?\(first + 3),?\(first + 4),?2)"
        }
        return sql + " ON CONFLICT(asset_id, external_id) DO NOTHING RETURNING external_id"
    }

    /// SQLite copies the text before the call returns.
    private static let transient = unsafeBitCast(OpaquePointer(bitPattern: -1), to: sqlite3_destructor_type.self)

    private static func error(_ raw: SQLiteStatement, code: Int32, _ statement: Statement) -> DatabaseError {
        DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(raw))), sql: statement.sql)
    }
}
