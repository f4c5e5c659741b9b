import Foundation
import GRDB
import SavingsCore

/// The `goal` table row. Amounts are exact decimal text; dates are ISO text.
struct GoalRecord: Codable, FetchableRecord, PersistableRecord {
    static let databaseTableName = "goal"

    var id: String
    var name: String
    var nameKey: String
    var currency: String
    var targetAmount: String
    var deadline: String
    var startDate: String
    var archived: Bool
    var notes: String?
    var createdAt: String
    var updatedAt: String

    enum CodingKeys: String, CodingKey {
        case id, name, currency, deadline, archived, notes
        case nameKey = "name_key"
        case targetAmount = "target_amount"
        case startDate = "start_date"
        case createdAt = "created_at"
        case updatedAt = "updated_at"
    }

    enum Columns {
        static let id = Column(CodingKeys.id)
        static let nameKey = Column(CodingKeys.nameKey)
        static let archived = Column(CodingKeys.archived)
    }

    init(_ goal: Goal) {
        id = StoreKey.id(goal.id)
        name = goal.name
        nameKey = Goal.nameKey(goal.name)
        currency = goal.currency.code
        targetAmount = Amount.plainText(goal.targetAmount)
        deadline = goal.deadline.description
        startDate = goal.startDate.description
        archived = goal.archived
        notes = goal.notes
        createdAt = Timestamp.format(goal.createdAt)
        updatedAt = Timestamp.format(goal.updatedAt)
    }

    /// Read by column name (the portfolio reads every goal after each write; Decodable is slower).
    init(row: Row) throws {
        id = row["id"]
        name = row["name"]
        nameKey = row["name_key"]
        currency = row["currency"]
        targetAmount = row["target_amount"]
        deadline = row["deadline"]
        startDate = row["start_date"]
        archived = row["archived"]
        notes = row["notes"]
        createdAt = row["created_at"]
        updatedAt = row["updated_at"]
    }

    /// Converts back to the domain type; a row that does not parse is storage corruption.
    func goal() throws -> Goal {
        try StoreKey.decoding("goal \(id)") {
            Goal(id: try StoreKey.uuid(id), name: name, currency: try CurrencyCode(currency),
                 targetAmount: try Amount.parse(targetAmount),
                 deadline: try CalendarDate(parsing: deadline, field: "deadline"),
                 startDate: try CalendarDate(parsing: startDate, field: "start_date"),
                 archived: archived, notes: notes,
                 createdAt: try Timestamp.parse(createdAt, field: "created_at"),
                 updatedAt: try Timestamp.parse(updatedAt, field: "updated_at"))
        }
    }
}
