import Foundation
import GRDB
import SavingsCore

/// A table whose rows are keyed by `ref` and whose public ids derive from it (`DerivedID`),
/// unless a row keeps 16 bytes of its own in `uuid`: transactions (schema v12), allocation
/// history (v14), monthly plans (v16), contributions (v17). Its counter table holds the last
/// ref handed out, so a ref is never given twice, even after its row is deleted.
struct RefTable: Sendable {
    let table: String
    let counter: String
    let scheme: DerivedID

    static let transactions = RefTable(table: "asset_transaction", counter: "transaction_counter", scheme: DerivedID.transactions)
    static let history = RefTable(table: "allocation_history", counter: "history_counter", scheme: DerivedID.history)
    static let plans = RefTable(table: "monthly_plan", counter: "plan_counter", scheme: DerivedID.plans)
    static let contributions = RefTable(table: "contribution", counter: "contribution_counter", scheme: DerivedID.contributions)

    /// The first of `count` new refs.
    func take(_ count: Int, _ db: Database) throws -> Int64 {
        guard let last = try Int64.fetchOne(db.cachedStatement(sql: "UPDATE \(counter) SET last = last + ? RETURNING last"),
                                            arguments: [count]) else {
            throw StoreError.corrupt("\(counter) has no row")
        }
        return last - Int64(count) + 1
    }

    /// A row put back at a ref given before: later refs come after it.
    func pass(_ ref: Int64, _ db: Database) throws {
        try db.cachedStatement(sql: "UPDATE \(counter) SET last = MAX(last, ?)").execute(arguments: [ref])
    }

    /// Where a row whose public id is `id` goes: a new row (not `keepID`) at the next ref, under
    /// the id derived from it; a row keeping its id at the ref that id was derived from, or at
    /// the next ref with the id's 16 bytes in `uuid`.
    func place(_ id: UUID, keepID: Bool, _ db: Database) throws -> (ref: Int64, uuid: Data?, id: UUID) {
        if keepID, let derived = scheme.ref(id) {
            try pass(derived, db)
            return (derived, nil, id)
        }
        let ref = try take(1, db)
        return keepID ? (ref, StoreKey.bytes(id), id) : (ref, nil, scheme.derived(ref: ref))
    }

    /// SQL naming the row `id` names (`alias` standing for this table): the ref the id
    /// derives, on a row without bytes of its own, or the row holding those bytes.
    func condition(_ id: UUID, alias: String) -> (sql: String, argument: any DatabaseValueConvertible) {
        if let ref = scheme.ref(id) { return ("\(alias).ref = ? AND \(alias).uuid IS NULL", ref) }
        return ("\(alias).uuid = ?", StoreKey.bytes(id))
    }

    /// SQL: the public id of the row `alias` (NULL without one).
    func publicIDSQL(_ alias: String) -> String { "public_row_id(\(scheme.tag), \(alias).ref, \(alias).uuid)" }

    /// SQL: the ref of the row a public id names, the id bound twice (a document's link).
    var refSQL: String {
        """
        (SELECT ref FROM \(table) WHERE ref = derived_row_ref(\(scheme.tag), ?) AND uuid IS NULL
         UNION ALL SELECT ref FROM \(table) WHERE uuid = uuid_blob(?) LIMIT 1)
        """
    }

    /// SQL functions of documents (added to every connection with `decimal_add`).
    static let functions: [DatabaseFunction] = [
        DatabaseFunction("public_row_id", argumentCount: 3, pure: true) { values in
            guard let tag = Int64.fromDatabaseValue(values[0]), let ref = Int64.fromDatabaseValue(values[1]) else { return nil }
            return try StoreKey.id(StoreKey.publicID(ref: ref, stored: Data.fromDatabaseValue(values[2]),
                                                     scheme: DerivedID(tag: UInt8(truncatingIfNeeded: tag))))
        },
        DatabaseFunction("derived_row_ref", argumentCount: 2, pure: true) { values in
            guard let tag = Int64.fromDatabaseValue(values[0]), let text = String.fromDatabaseValue(values[1]),
                  let id = UUID(uuidString: text) else { return nil }
            return DerivedID(tag: UInt8(truncatingIfNeeded: tag)).ref(id)
        },
    ]
}

/// Refs of a `RefTable` taken ahead for a bulk write, a block at a time: one update of the
/// counter per block instead of one per chunk of rows (an import of 5,000 rows took 20). A
/// block taken right after the last continues it, and what is left at the end goes back
/// (`finish`). When a ref was taken apart in between, what the block had left stays unused:
/// a gap, as a deleted row leaves, never a ref given twice.
struct RefBlock {
    let table: RefTable
    static let size = 4096
    /// The refs taken and not handed out yet: `next...last`.
    private var next: Int64 = 1, last: Int64 = 0

    init(_ table: RefTable) { self.table = table }

    /// The first of `count` consecutive new refs.
    mutating func take(_ count: Int, _ db: Database) throws -> Int64 {
        if last - next + 1 < Int64(count) {
            let first = try table.take(max(count, Self.size), db)
            // A new block right after this one continues it; otherwise its rest is left unused.
            if first != last + 1 { next = first }
            last = first + Int64(max(count, Self.size)) - 1
        }
        defer { next += Int64(count) }
        return next
    }

    /// Gives the refs not handed out back to the counter, when it still stands at this block's end.
    mutating func finish(_ db: Database) throws {
        guard next <= last else { return }
        try db.cachedStatement(sql: "UPDATE \(table.counter) SET last = ? WHERE last = ?").execute(arguments: [next - 1, last])
        last = next - 1
    }
}

/// A row of a `RefTable` as its readers select it: `columns` from `from`, the table itself
/// under `alias`, in `order` unless asked otherwise.
protocol RefRecord {
    static var table: RefTable { get }
    var ref: Int64 { get }
    /// The row's own 16 bytes, when its public id is not derived from its ref.
    var uuid: Data? { get }
    static var alias: String { get }
    static var columns: String { get }
    static var from: String { get }
    static var order: String { get }
    init(row: Row)
}

extension RefRecord {
    /// The row's public id: its own bytes, or the id its ref derives.
    var publicID: UUID { get throws { try StoreKey.publicID(ref: ref, stored: uuid, scheme: Self.table.scheme) } }

    /// The rows of `where` (SQL over `alias` and the joined tables), in `order`.
    static func fetchAll(where condition: String, order: String = Self.order, limit: String = "", arguments: StatementArguments = [],
                         _ db: Database) throws -> [Self] {
        try Row.fetchAll(db.cachedStatement(sql: "SELECT \(columns) FROM \(from) WHERE \(condition) ORDER BY \(order) \(limit)"),
                         arguments: arguments).map(Self.init(row:))
    }

    /// The row a public id names: derived from its ref, or its own stored bytes.
    static func fetchOne(publicID: UUID, _ db: Database) throws -> Self? {
        let row = table.condition(publicID, alias: alias)
        return try fetchAll(where: row.sql, arguments: [row.argument], db).first
    }
}
