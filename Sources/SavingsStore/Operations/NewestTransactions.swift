import Foundation
import GRDB
import SavingsCore

/// The newest transactions across accounts, newest first (date, then ref). There is no index
/// of all transactions by date (a history import spread its rows over most of that index's
/// pages), so each account's rows come newest first from its own (asset, date) range, a
/// few keys at a time, and a merge takes the newest of them.
struct NewestTransactions {
    /// A transaction's place in the order, and its row.
    private struct Key {
        var date: Int64
        var ref: Int64
    }

    /// One account's keys read so far (the next one last) and whether it has more.
    private struct Account {
        var asset: Int64
        var keys: [Key]
        var more: Bool
        var batch: Int
    }

    private let db: Database
    /// SQL conditions on `date` ("" or " AND …") and their arguments.
    private let bounds: String
    private let boundArguments: [(any DatabaseValueConvertible)?]

    init(_ db: Database, from: Date?, to: Date?, search: String? = nil) {
        self.db = db
        var bounds = ""
        var arguments: [(any DatabaseValueConvertible)?] = []
        if let from {
            bounds += " AND date >= ?"
            arguments.append(Timestamp.milliseconds(from))
        }
        if let to {
            bounds += " AND date <= ?"
            arguments.append(Timestamp.milliseconds(to))
        }
        if let search, !search.isEmpty {
            // Text anywhere in the note or the external_id (`instr`: no LIKE wildcards to
            // escape), or the amount itself when the text is a number.
            bounds += " AND (instr(lower(COALESCE(note, '')), ?) > 0 OR instr(lower(COALESCE(external_id, '')), ?) > 0"
            // SQLite's lower() folds ASCII letters alone; so is the text searched for.
            let folded = String(search.unicodeScalars.map { $0.isASCII ? Character(String($0).lowercased()) : Character($0) })
            arguments += [folded, folded]
            if let number = try? Amount.parse(search) {
                bounds += " OR amount IN (?, ?)"
                arguments += [Amount.plainText(abs(number)), Amount.plainText(-abs(number))]
            }
            bounds += ")"
        }
        self.bounds = bounds
        boundArguments = arguments
    }

    /// The refs of the newest `limit` transactions of the `included` accounts (asset ids; nil:
    /// all), after `position` (a date and a transaction's public id) if given, in order.
    func refs(of included: Set<String>?, after cursor: (date: String, id: String)?, limit: Int) throws -> [Int64] {
        let position = try cursor.map { cursor -> (date: Int64, ref: Int64) in
            // A row gone since the page was read: rows of its date come again rather than not at all.
            let uuid = UUID(uuidString: cursor.id)
            let ref = try uuid.flatMap { uuid in try DerivedID.transactions.ref(uuid) ?? TransactionRecord.fetchOne(publicID: uuid, db)?.ref }
            return (Timestamp.milliseconds(try Timestamp.parse(cursor.date, field: "cursor")), ref ?? .max)
        }
        // Each account's newest date in bounds (one seek in its index, no row read), newest
        // first: an account is read only once its newest date is as new as the best row so
        // far, so a page reads the few busiest accounts, not all of them.
        var candidates: [(asset: Int64, newest: Int64)] = []
        // Only the accounts asked for are looked at (a search reads each one's rows).
        let only = included.map { " WHERE r.id IN (" + Array(repeating: "?", count: $0.count).joined(separator: ", ") + ")" } ?? ""
        let newest = try Row.fetchCursor(db, sql: """
            SELECT r.id, r.ref, (SELECT MAX(date) FROM asset_transaction WHERE asset = r.ref\(bounds)\(position == nil ? "" : " AND date <= ?")) FROM asset_ref r\(only)
            """, arguments: StatementArguments(boundArguments + (position.map { [$0.date] } ?? []) + (included.map { Array($0).sorted() } ?? [])))
        while let row = try newest.next() {
            let asset: String = row[0]
            if let date = row[2] as Int64?, included?.contains(asset) ?? true { candidates.append((row[1], date)) }
        }
        candidates.sort { $0.newest > $1.newest }
        var accounts: [Account] = []
        var chosen: [Int64] = []
        while chosen.count < limit {
            var pick = Self.best(accounts)
            while accounts.count < candidates.count,
                  pick.flatMap({ accounts[$0].keys.last }).map({ candidates[accounts.count].newest >= $0.date }) ?? true {
                let asset = candidates[accounts.count].asset
                let batch = min(limit - chosen.count, 8)
                let (keys, more) = try keys(asset, after: position, count: batch)
                accounts.append(Account(asset: asset, keys: keys, more: more, batch: batch))
                pick = Self.best(accounts)
            }
            guard let pick, let key = accounts[pick].keys.popLast() else { break }
            chosen.append(key.ref)
            // An account that keeps giving the newest rows is read in growing batches.
            let wanted = min(limit - chosen.count, 2 * accounts[pick].batch)
            if accounts[pick].keys.isEmpty, accounts[pick].more, wanted > 0 {
                (accounts[pick].keys, accounts[pick].more) = try keys(accounts[pick].asset, after: (key.date, key.ref), count: wanted)
                accounts[pick].batch = wanted
            }
        }
        return chosen
    }

    /// The account whose next key is the newest.
    private static func best(_ accounts: [Account]) -> Int? {
        var pick: Int?
        for index in accounts.indices {
            guard let head = accounts[index].keys.last else { continue }
            if let current = pick.flatMap({ accounts[$0].keys.last }), (head.date, head.ref) <= (current.date, current.ref) { continue }
            pick = index
        }
        return pick
    }

    /// Up to `count` of an account's keys after `position`, oldest first (the next is last).
    private func keys(_ asset: Int64, after position: (date: Int64, ref: Int64)?, count: Int) throws -> (keys: [Key], more: Bool) {
        let order = "ORDER BY date DESC, ref DESC LIMIT ?"
        let statement = position == nil
            ? try db.cachedStatement(sql: "SELECT date, ref FROM asset_transaction WHERE asset = ?\(bounds) \(order)")
            : try db.cachedStatement(sql: """
                SELECT date, ref FROM asset_transaction WHERE asset = ?\(bounds) AND date <= ? AND (date < ? OR ref < ?) \(order)
                """)
        var arguments: [(any DatabaseValueConvertible)?] = [asset] + boundArguments
        if let position { arguments += [position.date, position.date, position.ref] }
        arguments.append(count)
        let rows = try Row.fetchAll(statement, arguments: StatementArguments(arguments))
        return (rows.reversed().map { Key(date: $0[0], ref: $0[1]) }, rows.count == count)
    }
}
