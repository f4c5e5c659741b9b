import GRDB
import GRDBSQLite
import SavingsCore

extension Statement {
    /// Runs this statement, whose first two columns are a transaction's `date` (integer
    /// milliseconds) and `amount`, and hands each row's values to `body`, the amount read from
    /// SQLite's own bytes of it (from a String when it is not in the stored form). A busy
    /// account's month is read this way: the statement is stepped directly (SQLite's C API, as
    /// GRDB exposes it), with no row object per step.
    func forEachStoredTransaction(arguments: StatementArguments, _ body: (StoredTransaction) throws -> Void) throws {
        try setArguments(arguments)
        let raw = sqliteStatement
        defer { sqlite3_reset(raw) }
        while true {
            switch sqlite3_step(raw) {
            case SQLITE_DONE:
                return
            case SQLITE_ROW:
                guard sqlite3_column_type(raw, 0) == SQLITE_INTEGER else { throw StoreError.corrupt("a transaction dated other than by an integer") }
                let milliseconds = sqlite3_column_int64(raw, 0), amount = Self.text(raw, 1)
                if let point = StoredTransaction(milliseconds: milliseconds, amount: amount) {
                    try body(point)
                } else {
                    try body(StoredTransaction(milliseconds: milliseconds, amount: String(decoding: amount, as: UTF8.self)))
                }
            case let code:
                throw DatabaseError(resultCode: ResultCode(rawValue: code), message: String(cString: sqlite3_errmsg(sqlite3_db_handle(raw))),
                                    sql: sql, arguments: arguments)
            }
        }
    }

    /// A column's text, valid until the statement moves (SQLite's rule: text, then its size).
    private static func text(_ statement: SQLiteStatement, _ column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let text = sqlite3_column_text(statement, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column)))
    }
}
