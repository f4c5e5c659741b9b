import GRDB
import GRDBSQLite
import SavingsCore

extension Statement {
    /// Runs this statement, whose first two columns are a transaction's `date` and `amount`,
    /// and hands each row's values to `body`, read from SQLite's own bytes of them (from
    /// Strings when they are not in the stored form). A busy account's month is read this way:
    /// the statement is stepped directly (SQLite's C API, as GRDB exposes it), with no row
    /// object per step.
    func forEachStoredTransaction(arguments: StatementArguments, _ body: (StoredTransaction) throws -> Void) throws {
        try setArguments(arguments)
        let raw = sqliteStatement
        defer { sqlite3_reset(raw) }
        while true {
            switch sqlite3_step(raw) {
            case SQLITE_DONE:
                return
            case SQLITE_ROW:
                let date = Self.text(raw, 0), amount = Self.text(raw, 1)
                if let point = StoredTransaction(date: date, amount: amount) {
                    try body(point)
                } else {
                    try body(StoredTransaction(date: String(decoding: date, as: UTF8.self), amount: String(decoding: amount, as: UTF8.self)))
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
