import GRDB
import GRDBSQLite
import SavingsCore

extension StoredTransaction {
    /// The row `statement` is on, whose first two columns are a transaction's `date` and
    /// `amount`: read from SQLite's own bytes of them, or from Strings when they are not in
    /// the stored form.
    init(row: Row, of statement: Statement) throws {
        let raw = statement.sqliteStatement
        if let point = StoredTransaction(date: Self.text(raw, 0), amount: Self.text(raw, 1)) {
            self = point
        } else {
            try self.init(date: row[0] as String, amount: row[1] as String)
        }
    }

    /// A column's text, valid until the statement moves (SQLite's rule: text, then its size).
    private static func text(_ statement: SQLiteStatement, _ column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let text = sqlite3_column_text(statement, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column)))
    }
}
