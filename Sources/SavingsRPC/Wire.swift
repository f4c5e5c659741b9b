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
}
