import Foundation
import GRDB
import SavingsCore

/// Resolves an id-or-name reference for any table with `id` and `name_key` columns: an id of
/// one row that is the name of another is ambiguous; no match is not_found.
enum Reference {
    static func resolve<Record: FetchableRecord & TableRecord>(
        _ type: Record.Type, _ reference: String, what: String, id: (Record) -> String, _ db: Database
    ) throws -> Record {
        let byID = try UUID(uuidString: reference).flatMap { try Record.fetchOne(db, key: StoreKey.id($0)) }
        let byName = try Record.filter(Column("name_key") == Goal.nameKey(reference)).fetchOne(db)
        switch (byID, byName) {
        case let (record?, other?) where id(record) != id(other):
            throw DomainError(.ambiguous, "'\(reference)' is the id of one \(what) and the name of another; use the id",
                              details: ["reference": reference])
        case let (record?, _), let (nil, record?):
            return record
        case (nil, nil):
            throw DomainError.notFound(what, reference)
        }
    }

    /// A name is unique per table, case-insensitively.
    static func ensureNameFree<Record: FetchableRecord & TableRecord>(
        _ type: Record.Type, _ name: String, except: String?, what: String, id: (Record) -> String, displayName: (Record) -> String,
        _ db: Database
    ) throws {
        if let existing = try Record.filter(Column("name_key") == Goal.nameKey(name)).fetchOne(db), id(existing) != except {
            throw DomainError(.conflict, "\(what == "asset" ? "an" : "a") \(what) named '\(displayName(existing))' already exists",
                              details: ["field": "name"])
        }
    }
}
