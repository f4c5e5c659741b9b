import Foundation
import GRDB
import SavingsCore

/// The rows of an export document, section by section, read again as often as asked: a
/// document too large to hold is read from its file one row at a time.
public protocol TransferSource: Sendable {
    /// Calls `body` with each row of `section` and its index, in document order (nothing for a
    /// section the document lacks).
    func forEachRow(in section: String, _ body: (_ index: Int, _ row: TransferRow) throws -> Void) throws
}

/// A document held in memory.
public struct TransferSections: TransferSource {
    public let sections: [String: [TransferRow]]

    public init(_ sections: [String: [TransferRow]]) { self.sections = sections }

    public func forEachRow(in section: String, _ body: (Int, TransferRow) throws -> Void) throws {
        for (index, row) in (sections[section] ?? []).enumerated() { try body(index, row) }
    }
}

/// What every row of an export document must hold, and what the check of a document found so
/// far: its sections, their rows, the largest refs their ids derive from. A document is checked
/// row by row before anything is written, so a row missing a key, holding a value of the wrong
/// type or shape, or an unknown field is refused by its place (`goals[0]: 'name' is missing`)
/// with the database untouched. (References between rows are checked as they go in.)
public struct TransferDocumentCheck: Sendable {
    struct Field: Sendable, Equatable {
        var required: Bool
        var integer: Bool
    }

    /// Per section, its fields.
    let fields: [String: [String: Field]]
    /// The rows of each section seen so far (a section the document has is here, even empty).
    public private(set) var counts: [String: Int] = [:]
    /// Per section whose ids may derive from refs, the largest such ref.
    private(set) var largestRefs: [String: Int64] = [:]

    init(fields: [String: [String: Field]]) { self.fields = fields }

    /// A section is about to be read: refused unless an export has it.
    public mutating func section(_ name: String) throws {
        guard fields[name] != nil else {
            throw DomainError.invalidField("document", "unknown section '\(name)' (an export has \(SavingsDatabase.transferSections.map(\.section).joined(separator: ", ")))")
        }
        counts[name] = counts[name] ?? 0
    }

    /// Checks the `index`th row of `section` (its keys, their types, the shape of their values).
    public mutating func row(_ row: TransferRow, section: String, index: Int) throws {
        guard let fields = fields[section] else { throw DomainError.invalidField("document", "unknown section '\(section)'") }
        let place = "\(section)[\(index)]"
        if let unknown = row.keys.sorted().first(where: { fields[$0] == nil }) {
            throw DomainError.invalidField("document", "\(place): unknown field '\(unknown)'")
        }
        let missing = fields.filter { $0.value.required && row[$0.key] == nil }.keys.sorted()
        if !missing.isEmpty {
            let names = missing.map { "'\($0)'" }.joined(separator: ", ")
            throw DomainError.invalidField("document", "\(place): \(names) \(missing.count == 1 ? "is" : "are") missing")
        }
        for (name, field) in fields.sorted(by: { $0.key < $1.key }) {
            switch row[name] {
            case .null? where field.required:
                throw DomainError.invalidField("document", "\(place).\(name) must not be null")
            case .text? where field.integer:
                throw DomainError.invalidField("document", "\(place).\(name) must be a number, not a string")
            case .integer? where !field.integer:
                throw DomainError.invalidField("document", "\(place).\(name) must be a string (amounts, times and ids are text)")
            default:
                break
            }
        }
        try SavingsDatabase.validate(row, table: SavingsDatabase.transferTable(section), place: place)
        if let refs = SavingsDatabase.derivedRefTables[section], case .text(let text)? = row["id"], let id = UUID(uuidString: text),
           let ref = refs.scheme.ref(id) {
            largestRefs[section] = max(largestRefs[section] ?? ref, ref)
        }
        counts[section, default: 0] += 1
    }
}

extension SavingsDatabase {
    /// The stored table behind a section.
    static func transferTable(_ section: String) -> String {
        transferSections.first { $0.section == section }?.table ?? section
    }

    /// The check of a document for this database's schema.
    public func transferDocumentCheck() async throws -> TransferDocumentCheck {
        try await read { db in
            var fields: [String: [String: TransferDocumentCheck.Field]] = [:]
            for (section, table, _) in Self.transferSections {
                if let given = Self.documentFields[section] {
                    fields[section] = given
                    continue
                }
                // A table a document holds as stored: its columns as the schema has them.
                var columns: [String: TransferDocumentCheck.Field] = [:]
                for row in try Row.fetchAll(db, sql: "SELECT name, type, \"notnull\", dflt_value, pk FROM pragma_table_info(?)", arguments: [table]) {
                    let name: String = row["name"], type = (row["type"] as String? ?? "").uppercased()
                    let rowid = (row["pk"] as Int? ?? 0) > 0 && type == "INTEGER"
                    let required = (row["notnull"] as Int? ?? 0) == 1 && (row["dflt_value"] as String?) == nil && !rowid
                    columns[name] = .init(required: required, integer: type.contains("INT"))
                }
                fields[section] = columns
            }
            return TransferDocumentCheck(fields: fields)
        }
    }

    /// The fields of sections whose rows a document holds in another shape than their table's
    /// (public ids for integer keys): every one text, except where said.
    static let documentFields: [String: [String: TransferDocumentCheck.Field]] = {
        func text(_ required: [String], optional: [String] = []) -> [String: TransferDocumentCheck.Field] {
            var fields: [String: TransferDocumentCheck.Field] = [:]
            for name in required { fields[name] = .init(required: true, integer: false) }
            for name in optional { fields[name] = .init(required: false, integer: false) }
            return fields
        }
        var plans = text(["id", "goal_id", "month_label", "currency", "required_monthly", "remaining_amount", "status", "state",
                          "created_at", "updated_at"], optional: ["custom_amount"])
        for name in ["months_remaining", "is_protected", "is_skipped", "needs_review"] { plans[name] = .init(required: true, integer: true) }
        return [
            "transactions": text(["id", "asset_id", "amount", "date", "source", "created_at"], optional: ["note", "external_id"]),
            "allocation_history": text(["id", "asset_id", "goal_id", "amount", "timestamp", "created_at", "month_label"]),
            "plans": plans,
            "contributions": text(["id", "goal_id", "asset_id", "amount", "date", "created_at"],
                                  optional: ["transaction_id", "history_id", "undone_at"]),
            "legacy_contributions": text(["id", "goal_id", "amount", "currency", "date", "month_label", "created_at"],
                                         optional: ["asset_id", "plan_id", "source_type"]),
        ]
    }()
}
