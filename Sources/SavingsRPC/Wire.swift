import Foundation
import SavingsCore

/// Wire forms of domain objects and their schemas, shared by the daemon, savingsctl and tests.
public enum Wire {
    /// A figure in `currency`, rounded to its minor units.
    public static func money(_ value: Decimal, _ currency: CurrencyCode) -> JSONValue {
        .string(Amount.format(value, scale: currency.minorUnits))
    }

    public static func timestamp(_ date: Date) -> JSONValue { .string(Timestamp.format(date)) }

    public static func goal(_ goal: Goal) -> JSONValue {
        [
            "id": .string(goal.id.uuidString.lowercased()),
            "name": .string(goal.name),
            "currency": .string(goal.currency.code),
            "target_amount": money(goal.targetAmount, goal.currency),
            "deadline": .string(goal.deadline.description),
            "start_date": .string(goal.startDate.description),
            "archived": .bool(goal.archived),
            "notes": .optional(goal.notes),
            "created_at": timestamp(goal.createdAt),
            "updated_at": timestamp(goal.updatedAt),
        ]
    }

    public static let decimalSchema: JSONValue = ["type": "string", "pattern": "^-?[0-9]+(\\.[0-9]+)?$"]
    public static let timestampSchema: JSONValue = ["type": "string", "format": "date-time"]

    public static let goalSchema: JSONValue = [
        "type": "object",
        "required": ["id", "name", "currency", "target_amount", "deadline", "start_date", "archived", "created_at", "updated_at"],
        "properties": [
            "id": ["type": "string", "format": "uuid"],
            "name": ["type": "string"],
            "currency": ["type": "string"],
            "target_amount": decimalSchema,
            "deadline": ["type": "string", "format": "date"],
            "start_date": ["type": "string", "format": "date"],
            "archived": ["type": "boolean"],
            "notes": ["type": ["string", "null"]],
            "created_at": timestampSchema,
            "updated_at": timestampSchema,
        ],
    ]
}
