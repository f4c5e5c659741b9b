import Foundation
import GRDB
import SavingsCore

/// One stored value as it crosses an export document: money, times and ids are text exactly
/// as stored, so a round trip reproduces every figure digit for digit.
public enum TransferCell: Sendable, Equatable {
    case null
    case integer(Int64)
    case text(String)
}

public typealias TransferRow = [String: TransferCell]

/// Receives exported rows one at a time, inside one read snapshot.
public protocol TransferSink: AnyObject, Sendable {
    func write(_ section: String, _ row: TransferRow) throws
}

extension SavingsDatabase {
    /// The sections of an export document, in the order they are written and restored
    /// (parents before children).
    public static let transferSections: [(section: String, table: String, order: String)] = [
        ("goals", "goal", "created_at, id"),
        ("assets", "asset", "created_at, id"),
        ("watches", "asset_watch", "asset_id"),
        // A link names its credential, never holds it: the secret is never in a document.
        ("links", "asset_link", "asset_id"),
        ("transactions", "asset_transaction", "ref"),
        ("allocations", "allocation", "asset_id, goal_id"),
        ("allocation_history", "allocation_history", "ref"),
        ("contributions", "contribution", "ref"),
        ("plans", "monthly_plan", "month_label, goal"),
        ("execution_records", "execution_record", "month_label"),
        ("legacy_contributions", "legacy_contribution", "date, id"),
        ("legacy_archive", "legacy_archive", "kind, legacy_id"),
        ("rates", "rate", "id"),
        ("metadata", "metadata", "key"),
    ]

    /// The schema an export was written with (the newest applied migration).
    public func schemaName() async throws -> String {
        try await read { db in let applied = try Schema.migrator.appliedIdentifiers(db); return Schema.migrator.migrations.last { applied.contains($0) } ?? "" }
    }

    /// Streams every row of every section from one consistent snapshot.
    public func export(into sink: some TransferSink) async throws {
        try await read { db in
            for (section, table, order) in Self.transferSections {
                let cursor = try Row.fetchCursor(db, sql: Self.exportSQL(section: section, table: table, order: order))
                while let row = try cursor.next() {
                    if section == "transactions" {
                        try sink.write(section, try Self.documentRow(TransactionRecord(row: row)))
                        continue
                    }
                    if section == "allocation_history" {
                        try sink.write(section, try Self.documentRow(HistoryRecord(row: row)))
                        continue
                    }
                    var cells: TransferRow = [:]
                    for (column, value) in row {
                        switch value.storage {
                        case .null: cells[column] = .null
                        case .int64(let n): cells[column] = .integer(n)
                        case .string(let s): cells[column] = .text(s)
                        case .double(let d): cells[column] = .text(String(describing: d))
                        case .blob: throw StoreError.corrupt("\(table).\(column) holds a blob")
                        }
                    }
                    try sink.write(section, cells)
                }
            }
        }
    }

    /// Rows an export writes (for progress displays).
    public func transferRowCount() async throws -> Int {
        try await read { db in
            try Self.transferSections.reduce(0) { $0 + (try Int.fetchOne(db, sql: "SELECT COUNT(*) FROM \($1.table)") ?? 0) }
        }
    }

    /// Whether anything a user entered is stored.
    public func isEmpty() async throws -> Bool {
        try await read { db in try Self.isEmpty(db) }
    }

    static func isEmpty(_ db: Database) throws -> Bool {
        try ["goal", "asset", "asset_transaction", "rate"].allSatisfy { table in
            try Int.fetchOne(db, sql: "SELECT EXISTS (SELECT 1 FROM \(table))") == 0
        }
    }

    /// Restores an export held in memory (checked row by row first, then imported as below).
    public func importData(_ sections: [String: [TransferRow]], replace: Bool) async throws -> [String: Int] {
        var check = try await transferDocumentCheck()
        for (section, rows) in sections {
            try check.section(section)
            for (index, row) in rows.enumerated() { try check.row(row, section: section, index: index) }
        }
        return try await importData(TransferSections(sections), checked: check, replace: replace)
    }

    /// Restores an export whose every row `checked` has seen: refuses a non-empty database
    /// unless `replace`, then (in one transaction) clears it, inserts every row as it was (read
    /// again from `source`, section by section, parents first), each row's references found
    /// among the rows already in, and checks references and invariants before committing. Any
    /// failure leaves the database exactly as before. One row is held at a time.
    public func importData(_ source: some TransferSource, checked: TransferDocumentCheck, replace: Bool) async throws -> [String: Int] {
        try await write { db in
            guard try Self.isEmpty(db) || replace else { throw Self.notEmpty }
            for (_, table, _) in Self.transferSections.reversed() { try db.execute(sql: "DELETE FROM \(table)") }
            var counts: [String: Int] = [:]
            for (section, table, _) in Self.transferSections {
                counts[section] = 0
                guard checked.counts[section] != nil else { continue }
                let columns = try Self.documentColumns(section: section, table: table, db)
                // Before a section whose ids may be derived from refs goes in, its counter passes
                // the largest such ref: a row keeping an id of its own then takes a ref after all
                // of them, and never the ref a later row of the document comes back to.
                if let largest = checked.largestRefs[section], let refs = Self.derivedRefTables[section] { try refs.pass(largest, db) }
                var count = 0
                try source.forEachRow(in: section) { index, row in
                    try Self.restore(row, section: section, table: table, columns: columns, place: "\(section)[\(index)]", db)
                    count += 1
                }
                counts[section] = count
            }
            let report = try Self.check(db, integrity: false)
            guard report.ok else {
                throw DomainError.invalidField("document", "the document is inconsistent: \(report.summary.prefix(600))")
            }
            return counts
        }
    }

    /// The refusal of a document for a database holding data, without `replace`.
    public static let notEmpty = DomainError(.conflict, "the database is not empty; pass replace: true to replace its data (a backup is made first)")

    /// Inserts one row of a document.
    static func restore(_ row: TransferRow, section: String, table: String, columns: Set<String>, place: String, _ db: Database) throws {
        if let unknown = row.keys.first(where: { !columns.contains($0) }) {
            throw DomainError.invalidField("document", "\(place): unknown field '\(unknown)'")
        }
        try Self.validate(row, table: table, place: place)
        // Transactions and history rows find their asset and goal as they go in.
        if section != "transactions", section != "allocation_history" { try Self.checkReferences(row, place: place, db) }
        if table == "asset_link" { try Self.checkNotWatched(row, place: place, db) }
        let names = row.keys.sorted()
        let values: [(any DatabaseValueConvertible)?] = names.map { name in
            switch row[name]! {
            case .null: nil
            case .integer(let n): n
            case .text(let s): s
            }
        }
        do {
            if section == "transactions" {
                try Self.restoreTransaction(row, place: place, db)
            } else if section == "allocation_history" {
                try Self.restoreHistory(row, place: place, db)
            } else if section == "contributions" {
                try Self.restoreContribution(Dictionary(uniqueKeysWithValues: zip(names, values)), place: place, db)
            } else if section == "plans" {
                try Self.restorePlan(row, values: Dictionary(uniqueKeysWithValues: zip(names, values)), place: place, db)
            } else {
                // A contribution's transaction_id and history_id are each looked up twice (a derived ref, stored bytes).
                let arguments = zip(names, values).flatMap { name, value in Self.refSQL[name] == nil ? [value] : [value, value] }
                try db.execute(sql: "INSERT INTO \(table) (\(names.map(Self.storedColumn).joined(separator: ", "))) VALUES (\(names.map { name in Self.refSQL[name] ?? "?" }.joined(separator: ", ")))",
                               arguments: StatementArguments(arguments))
            }
        } catch let error as DatabaseError where error.resultCode == .SQLITE_CONSTRAINT {
            throw DomainError.invalidField("document", "\(place): \(error.message ?? "violates a constraint")")
        }
    }

    /// The sections whose ids may derive from refs, and their tables.
    static let derivedRefTables: [String: RefTable] = ["transactions": .transactions, "allocation_history": .history, "plans": .plans,
                                                       "contributions": .contributions]

    /// The columns by which a row names another, what they name, and how it is found among the
    /// rows already in (a public id bound twice: a derived ref, or stored bytes).
    static let references: [String: (what: String, sql: String, twice: Bool)] = [
        "goal_id": ("goal", "SELECT EXISTS (SELECT 1 FROM goal WHERE id = ?)", false),
        "asset_id": ("asset", "SELECT EXISTS (SELECT 1 FROM asset WHERE id = ?)", false),
        "transaction_id": ("transaction", "SELECT \(RefTable.transactions.refSQL) IS NOT NULL", true),
        "history_id": ("allocation history row", "SELECT \(RefTable.history.refSQL) IS NOT NULL", true),
        "plan_id": ("plan", "SELECT \(RefTable.plans.refSQL) IS NOT NULL", true),
    ]

    /// Every id a row gives for another row must name one of the document (its parents are in
    /// already): a dangling one is refused by its place, never kept as a link to nothing.
    static func checkReferences(_ row: TransferRow, place: String, _ db: Database) throws {
        for (column, cell) in row {
            guard case .text(let id) = cell, let reference = references[column] else { continue }
            let arguments: StatementArguments = reference.twice ? [id, id] : [id]
            guard try Bool.fetchOne(db.cachedStatement(sql: reference.sql), arguments: arguments) == true else {
                throw DomainError.invalidField("document", "\(place).\(column): \(reference.what) \(id) is not in the document")
            }
        }
    }

    /// Values must have the shape the calculations rely on: exact decimals, timestamps, dates,
    /// months, currency codes.
    static func validate(_ row: TransferRow, table: String, place: String) throws {
        if table == "asset_watch" {
            // What is watched must pass the same checks as asset.watch.
            func text(_ column: String) -> String? { if case .text(let value)? = row[column] { return value } else { return nil } }
            var confirmations = 1
            if case .integer(let n)? = row["min_confirmations"] { confirmations = Int(n) }
            do {
                _ = try WatchTarget(chain: try Chain(name: text("chain") ?? ""), xpub: text("xpub"),
                                    addresses: (text("addresses") ?? "").split(separator: "\n").map(String.init), token: text("token"),
                                    minConfirmations: confirmations)
            } catch let error as DomainError {
                throw DomainError.invalidField("document", "\(place): \(error.message)")
            }
        }
        if table == "asset_link" { try checkLinkRow(row, place: place) }
        for (column, cell) in row {
            guard case .text(let text) = cell else { continue }
            let field = "\(place).\(column)"
            do {
                switch column {
                case "amount", "target_amount", "required_monthly", "remaining_amount", "custom_amount", "legacy_percentage":
                    _ = try Amount.parse(text, field: field)
                case "rate": _ = try ExchangeRate.validRate(text)
                case "reported_balance": _ = try Amount.parse(text, field: field)
                case "created_at", "updated_at", "date", "timestamp", "as_of", "fetched_at", "started_at", "completed_at",
                     "can_undo_until", "undone_at", "last_sync_at":
                    _ = try Timestamp.parse(text, field: field)
                case "deadline", "start_date": _ = try CalendarDate(parsing: text, field: field)
                case "month_label": _ = try MonthLabel(parsing: text, field: field)
                case "currency", "base", "quote": _ = try CurrencyCode(text, field: field)
                case "id" where table != "rate", "goal_id", "asset_id", "transaction_id", "history_id", "plan_id":
                    guard UUID(uuidString: text) != nil else { throw DomainError.invalidField(field, "'\(text)' is not an id") }
                default: break
                }
            } catch let error as DomainError {
                throw DomainError.invalidField("document", "\(field): \(error.message)")
            }
        }
    }

    // MARK: - Documents of schema v12 tables

    /// The document keeps the shape of earlier schemas: a transaction's `id` and `asset_id`
    /// and a contribution's `transaction_id` are the public ids, not the integer keys.
    static func exportSQL(section: String, table: String, order: String) -> String {
        switch section {
        case "transactions":
            "SELECT \(TransactionTable.columns) FROM \(TransactionTable.from) ORDER BY t.ref"
        case "allocation_history":
            "SELECT \(HistoryTable.columns) FROM \(HistoryTable.from) ORDER BY h.ref"
        case "plans":
            """
            SELECT \(RefTable.plans.publicIDSQL("p")) AS id, \(PlanTable.valueColumns.map { $0 == "goal_id" ? "g.id AS goal_id" : "p." + $0 }.joined(separator: ", "))
              FROM monthly_plan p JOIN goal_ref g ON g.ref = p.goal ORDER BY p.month_label, g.id
            """
        case "legacy_contributions":
            """
            SELECT l.id, l.goal_id, l.asset_id, \(RefTable.plans.publicIDSQL("p")) AS plan_id,
                   l.amount, l.currency, l.date, l.month_label, l.source_type, l.created_at
              FROM legacy_contribution l LEFT JOIN monthly_plan p ON p.ref = l.plan_ref ORDER BY l.date, l.id
            """
        case "contributions":
            ContributionTable.documentSQL
        default:
            "SELECT * FROM \(table) ORDER BY \(order)"
        }
    }

    static func documentColumns(section: String, table: String, _ db: Database) throws -> Set<String> {
        switch section {
        case "transactions": ["id", "asset_id", "amount", "date", "source", "note", "external_id", "created_at"]
        case "allocation_history": ["id", "asset_id", "goal_id", "amount", "timestamp", "created_at", "month_label"]
        case "plans": Set(["id"] + PlanTable.valueColumns)
        case "contributions": Set(ContributionTable.documentColumns)
        case "legacy_contributions": Set(try db.columns(in: table).map { storedToDocument[$0.name] ?? $0.name })
        default: Set(try db.columns(in: table).map(\.name))
        }
    }

    /// The integer-key columns a document gives as public ids.
    static let storedToDocument = ["transaction_ref": "transaction_id", "history_ref": "history_id", "plan_ref": "plan_id"]

    static func storedColumn(_ name: String) -> String { storedToDocument.first { $0.value == name }?.key ?? name }

    /// A document's links by public id (a contribution's transaction and history row, the
    /// earlier app's contribution's plan): the ref each names, the id bound twice.
    static let refSQL = ["transaction_id": RefTable.transactions.refSQL, "history_id": RefTable.history.refSQL,
                         "plan_id": RefTable.plans.refSQL]

    /// Writes a contribution of a document, keeping its id; its transaction and history row
    /// are found by their public ids.
    static func restoreContribution(_ values: [String: (any DatabaseValueConvertible)?], place: String, _ db: Database) throws {
        guard let idText = values["id"] as? String, let id = UUID(uuidString: idText) else {
            throw DomainError.invalidField("document", "\(place).id: missing, or not an id")
        }
        if try ContributionRecord.fetchOne(publicID: id, db) != nil {
            throw DomainError.invalidField("document", "\(place): id \(idText) appears twice")
        }
        func value(_ column: String) -> (any DatabaseValueConvertible)? { values[column] ?? nil }
        func text(_ column: String) throws -> String {
            guard let value = values[column] as? String else { throw DomainError.invalidField("document", "\(place).\(column): missing") }
            return value
        }
        try ContributionTable.insert(id: id, keepID: true, goalID: try text("goal_id"), assetID: try text("asset_id"),
                                     transaction: (refSQL["transaction_id"]!, [value("transaction_id"), value("transaction_id")]),
                                     history: (refSQL["history_id"]!, [value("history_id"), value("history_id")]),
                                     amount: try text("amount"), date: try text("date"), createdAt: try text("created_at"),
                                     undoneAt: values["undone_at"] as? String, db)
    }

    /// Writes a plan of a document: at the ref its id was derived from, or keeping its id.
    static func restorePlan(_ row: TransferRow, values: [String: (any DatabaseValueConvertible)?], place: String, _ db: Database) throws {
        guard case .text(let text)? = row["id"], let id = UUID(uuidString: text) else {
            throw DomainError.invalidField("document", "\(place).id: missing, or not an id")
        }
        if try PlanTable.ref(of: id, db) != nil { throw DomainError.invalidField("document", "\(place): id \(text) appears twice") }
        let spot = try RefTable.plans.place(id, keepID: true, db)
        try PlanTable.insertRow(ref: spot.ref, uuid: spot.uuid, PlanTable.valueColumns.map { values[$0] ?? nil }, db)
    }

    static func documentRow(_ record: HistoryRecord) throws -> TransferRow {
        ["id": .text(StoreKey.id(try record.publicID)), "asset_id": .text(record.assetID), "goal_id": .text(record.goalID),
         "amount": .text(record.amount), "timestamp": .text(Timestamp.format(milliseconds: record.timestamp)),
         "created_at": .text(Timestamp.format(milliseconds: record.createdAt)), "month_label": .text(record.monthLabel)]
    }

    /// Writes an allocation-history row of a document: at the ref its id was derived from, or keeping its id.
    static func restoreHistory(_ row: TransferRow, place: String, _ db: Database) throws {
        func required(_ column: String) throws -> String {
            guard case .text(let value)? = row[column] else { throw DomainError.invalidField("document", "\(place).\(column): missing, or not text") }
            return value
        }
        let entry = AllocationHistoryEntry(
            id: try StoreKey.uuid(try required("id")), assetID: try StoreKey.uuid(try required("asset_id")),
            goalID: try StoreKey.uuid(try required("goal_id")), amount: try Amount.parse(try required("amount")),
            timestamp: try Timestamp.parse(try required("timestamp"), field: "timestamp"),
            createdAt: try Timestamp.parse(try required("created_at"), field: "created_at"),
            monthLabel: try MonthLabel(parsing: try required("month_label")))
        guard let asset = try knownAssetRef(StoreKey.id(entry.assetID), db) else {
            throw DomainError.invalidField("document", "\(place): asset \(StoreKey.id(entry.assetID)) is not in the document")
        }
        guard let goal = try Int64.fetchOne(db, sql: "SELECT ref FROM goal_ref WHERE id = ?", arguments: [StoreKey.id(entry.goalID)]) else {
            throw DomainError.invalidField("document", "\(place): goal \(StoreKey.id(entry.goalID)) is not in the document")
        }
        if try HistoryRecord.fetchOne(publicID: entry.id, db) != nil {
            throw DomainError.invalidField("document", "\(place): id \(StoreKey.id(entry.id)) appears twice")
        }
        try HistoryTable.insert([entry], asset: asset, goal: goal, keepIDs: true, db)
    }

    static func documentRow(_ record: TransactionRecord) throws -> TransferRow {
        func text(_ value: String?) -> TransferCell { value.map(TransferCell.text) ?? .null }
        return ["id": .text(StoreKey.id(try record.publicID)), "asset_id": .text(record.assetID), "amount": .text(record.amount),
                "date": .text(record.dateText), "source": .text(try record.source.rawValue), "note": text(record.note),
                "external_id": text(record.externalID), "created_at": .text(Timestamp.format(milliseconds: record.createdAt))]
    }

    /// Writes a transaction of a document: at the ref its id was derived from, or keeping its id.
    static func restoreTransaction(_ row: TransferRow, place: String, _ db: Database) throws {
        func text(_ column: String) throws -> String? {
            switch row[column] {
            case .text(let value)?: return value
            case .null?, nil: return nil
            case .integer?: throw DomainError.invalidField("document", "\(place).\(column): expected text")
            }
        }
        func required(_ column: String) throws -> String {
            guard let value = try text(column) else { throw DomainError.invalidField("document", "\(place).\(column): missing") }
            return value
        }
        guard let source = AssetTransaction.Source(rawValue: try required("source")) else {
            throw DomainError.invalidField("document", "\(place).source: not \(AssetTransaction.Source.allCases.map(\.rawValue).joined(separator: ", "))")
        }
        let transaction = AssetTransaction(
            id: try StoreKey.uuid(try required("id")), assetID: try StoreKey.uuid(try required("asset_id")),
            amount: try Amount.parse(try required("amount")), date: try Timestamp.parse(try required("date"), field: "date"),
            source: source, note: try text("note"), externalID: try text("external_id"),
            createdAt: try Timestamp.parse(try required("created_at"), field: "created_at"))
        guard let asset = try knownAssetRef(StoreKey.id(transaction.assetID), db) else {
            throw DomainError.invalidField("document", "\(place): asset \(StoreKey.id(transaction.assetID)) is not in the document")
        }
        if let externalID = transaction.externalID, try ExternalKeys.find(transaction, asset: asset, db) != nil {
            throw DomainError.invalidField("document", "\(place): external_id '\(externalID)' appears twice for its asset")
        }
        _ = try insertRow(transaction, asset: asset, keepID: true, db)
    }
}
