import GRDB
import GRDBSQLite
import SavingsCore

extension Statement {
    /// Runs this statement, whose first two columns are a transaction's `date` and `amount`,
    /// and hands each row's values to `body`, read from SQLite's own bytes of them (from
    /// Strings when they are not in the stored form). A busy account's month is read this way.
    func forEachStoredTransaction(arguments: StatementArguments, _ body: (StoredTransaction) throws -> Void) throws {
        let raw = sqliteStatement
        try Row.fetchCursor(self, arguments: arguments).forEach { row in
            if let point = StoredTransaction(date: Self.text(raw, 0), amount: Self.text(raw, 1)) {
                try body(point)
            } else {
                try body(StoredTransaction(date: row[0] as String, amount: row[1] as String))
            }
        }
    }

    /// A column's text, valid until the statement moves (SQLite's rule: text, then its size).
    private static func text(_ statement: SQLiteStatement, _ column: Int32) -> UnsafeBufferPointer<UInt8> {
        guard let text = sqlite3_column_text(statement, column) else { return UnsafeBufferPointer(start: nil, count: 0) }
        return UnsafeBufferPointer(start: text, count: Int(sqlite3_column_bytes(statement, column)))
    }
}
