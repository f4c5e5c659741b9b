import Foundation
import GRDB
import SavingsCore

/// Rows of the funding tables. Amounts are exact decimal text, instants ISO 8601 text.
struct AssetRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "asset"
    var id: String
    var name: String
    var nameKey: String
    var currency: String
    var kind: String
    var address: String?
    var notes: String?
    var createdAt: String
    var updatedAt: String

    enum CodingKeys: String, CodingKey {
        case id, name, currency, kind, address, notes
        case nameKey = "name_key"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    init(_ asset: Asset) {
        id = StoreKey.id(asset.id)
        name = asset.name
        nameKey = Goal.nameKey(asset.name)
        currency = asset.currency.code
        kind = asset.kind.rawValue
        address = asset.address
        notes = asset.notes
        createdAt = Timestamp.format(asset.createdAt)
        updatedAt = Timestamp.format(asset.updatedAt)
    }

    /// Read by column name (the portfolio reads every asset after each write; Decodable is slower).
    init(row: Row) throws {
        id = row["id"]
        name = row["name"]
        nameKey = row["name_key"]
        currency = row["currency"]
        kind = row["kind"]
        address = row["address"]
        notes = row["notes"]
        createdAt = row["created_at"]
        updatedAt = row["updated_at"]
    }

    func asset() throws -> Asset {
        try StoreKey.decoding("asset \(id)") {
            Asset(id: try StoreKey.uuid(id), name: name, currency: try CurrencyCode(currency), kind: try Asset.kind(kind),
                  address: address, notes: notes, createdAt: try Timestamp.parse(createdAt, field: "created_at"),
                  updatedAt: try Timestamp.parse(updatedAt, field: "updated_at"))
        }
    }
}

/// A transaction row as read (`TransactionTable.columns`): its public id and external_id
/// are worked out from what is stored.
struct TransactionRecord {
    var ref: Int64
    var uuid: Data?
    var assetID: String
    var amount: String
    /// Milliseconds since 1970, as `date` and `created_at` are stored.
    var date: Int64
    var kind: Int64
    var note: String?
    var externalKey: Int64?
    var storedExternalID: String?
    var createdAt: Int64

    init(row: Row) {
        ref = row["ref"]
        uuid = row["uuid"]
        assetID = row["asset_id"]
        amount = row["amount"]
        date = row["date"]
        kind = row["kind"]
        note = row["note"]
        externalKey = row["external_key"]
        storedExternalID = row["external_id"]
        createdAt = row["created_at"]
    }

    var publicID: UUID { get throws { try StoreKey.publicID(ref: ref, stored: uuid) } }

    var dateText: String { Timestamp.format(milliseconds: date) }

    var source: AssetTransaction.Source { get throws {
        guard let kind = TransactionKind(code: kind) else { throw StoreError.corrupt("transaction \(ref) is of kind \(kind)") }
        return kind.source
    } }

    /// The stored text, or the row's own content key when it is keyed by its content.
    var externalID: String? {
        if let storedExternalID { return storedExternalID }
        guard TransactionKind(code: kind)?.contentKeyed == true else { return nil }
        return ExternalKeys.contentKey(dateText: dateText, amountText: amount, note: note)
    }

    func transaction() throws -> AssetTransaction {
        try StoreKey.decoding("transaction \(ref)") {
            AssetTransaction(id: try publicID, assetID: try StoreKey.uuid(assetID), amount: try Amount.parse(amount),
                             date: Timestamp.date(milliseconds: date), source: try source, note: note,
                             externalID: externalID, createdAt: Timestamp.date(milliseconds: createdAt))
        }
    }

    static func fetchOne(ref: Int64, _ db: Database) throws -> TransactionRecord? {
        try Row.fetchOne(db.cachedStatement(sql: "SELECT \(TransactionTable.columns) FROM \(TransactionTable.from) WHERE t.ref = ?"),
                         arguments: [ref]).map(TransactionRecord.init(row:))
    }

    /// The row a public id names: derived from its ref, or its own stored bytes.
    static func fetchOne(publicID: UUID, _ db: Database) throws -> TransactionRecord? {
        if let ref = DerivedID.transactions.ref(publicID) {
            return try fetchOne(ref: ref, db).flatMap { $0.uuid == nil ? $0 : nil }
        }
        return try Row.fetchOne(db.cachedStatement(sql: "SELECT \(TransactionTable.columns) FROM \(TransactionTable.from) WHERE t.uuid = ?"),
                                arguments: [StoreKey.bytes(publicID)]).map(TransactionRecord.init(row:))
    }
}

struct AllocationRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "allocation"
    var assetID: String
    var goalID: String
    var amount: String
    var updatedAt: String

    enum CodingKeys: String, CodingKey {
        case amount
        case assetID = "asset_id"
        case goalID = "goal_id"
        case updatedAt = "updated_at"
    }

    func allocation() throws -> Allocation {
        try StoreKey.decoding("allocation \(assetID)/\(goalID)") {
            Allocation(assetID: try StoreKey.uuid(assetID), goalID: try StoreKey.uuid(goalID), amount: try Amount.parse(amount))
        }
    }
}

struct RateRecord: Codable, FetchableRecord, MutablePersistableRecord {
    static let databaseTableName = "rate"
    var id: Int64?
    var base: String
    var quote: String
    var rate: String
    var asOf: String
    var provider: String
    var fetchedAt: String

    enum CodingKeys: String, CodingKey {
        case id, base, quote, rate, provider
        case asOf = "as_of"
        case fetchedAt = "fetched_at"
    }

    init(_ rate: ExchangeRate) {
        base = rate.base.code
        quote = rate.quote.code
        self.rate = Amount.plainText(rate.rate)
        asOf = Timestamp.format(rate.asOf)
        provider = rate.provider
        fetchedAt = Timestamp.format(rate.fetchedAt)
    }

    mutating func didInsert(_ inserted: InsertionSuccess) { id = inserted.rowID }

    func exchangeRate() throws -> ExchangeRate {
        try StoreKey.decoding("rate \(base)/\(quote)") {
            ExchangeRate(base: try CurrencyCode(base), quote: try CurrencyCode(quote), rate: try Amount.parse(rate),
                         asOf: try Timestamp.parse(asOf, field: "as_of"), provider: provider,
                         fetchedAt: try Timestamp.parse(fetchedAt, field: "fetched_at"))
        }
    }
}

extension AllocationRecord {
    /// Read by column name (the portfolio reads every allocation after each write; Decodable is slower).
    init(row: Row) throws {
        assetID = row["asset_id"]
        goalID = row["goal_id"]
        amount = row["amount"]
        updatedAt = row["updated_at"]
    }
}
