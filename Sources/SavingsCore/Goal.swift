import Foundation

/// A savings goal: reach `targetAmount` in `currency` by `deadline`.
public struct Goal: Sendable, Equatable, Identifiable {
    public var id: UUID
    public var name: String
    public var currency: CurrencyCode
    public var targetAmount: Decimal
    public var deadline: CalendarDate
    public var startDate: CalendarDate
    public var archived: Bool
    public var notes: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(
        id: UUID, name: String, currency: CurrencyCode, targetAmount: Decimal, deadline: CalendarDate,
        startDate: CalendarDate, archived: Bool, notes: String?, createdAt: Date, updatedAt: Date
    ) {
        self.id = id
        self.name = name
        self.currency = currency
        self.targetAmount = targetAmount
        self.deadline = deadline
        self.startDate = startDate
        self.archived = archived
        self.notes = notes
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// The key names are unique under: case-insensitive, surrounding whitespace ignored.
    public static func nameKey(_ name: String) -> String {
        name.trimmingCharacters(in: .whitespacesAndNewlines).lowercased()
    }
}

/// The rules every goal obeys, applied on create and on every update.
public enum GoalRules {
    public static let maxNameLength = 200
    public static let maxNotesLength = 10_000

    public static func validName(_ raw: String) throws -> String {
        let name = raw.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !name.isEmpty else { throw DomainError.invalidField("name", "must not be empty") }
        guard name.count <= maxNameLength else {
            throw DomainError.invalidField("name", "must be at most \(maxNameLength) characters (got \(name.count))")
        }
        guard !name.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) else {
            throw DomainError.invalidField("name", "must not contain control characters")
        }
        return name
    }

    public static func validTarget(_ text: String, currency: CurrencyCode) throws -> Decimal {
        let value = try Amount.parse(text, field: "target_amount")
        guard value > 0 else {
            throw DomainError(.invalidAmount, "target_amount: must be greater than zero (got \(text))",
                              details: ["field": "target_amount"])
        }
        guard Amount.fractionDigits(of: value) <= currency.minorUnits else {
            throw DomainError(.invalidAmount,
                              "target_amount: \(currency) allows at most \(currency.minorUnits) decimal places (got \(text))",
                              details: ["field": "target_amount"])
        }
        return value
    }

    public static func validNotes(_ notes: String?) throws -> String? {
        guard let notes else { return nil }
        // No more bytes than the limit: no more characters either (counting them walks the text).
        guard notes.utf8.count <= maxNotesLength || notes.count <= maxNotesLength else {
            throw DomainError.invalidField("notes", "must be at most \(maxNotesLength) characters")
        }
        return notes.isEmpty ? nil : notes
    }

    public static func checkDates(start: CalendarDate, deadline: CalendarDate) throws {
        guard deadline >= start else {
            throw DomainError.invalidField("deadline", "\(deadline) is before the start date \(start)")
        }
    }
}

/// A validated request to create a goal.
public struct NewGoal: Sendable, Equatable {
    public var name: String
    public var currency: CurrencyCode
    public var targetAmount: Decimal
    public var deadline: CalendarDate
    public var startDate: CalendarDate
    public var notes: String?

    /// Validates raw client input. `today` is the default start date.
    public init(name: String, currency: String, targetAmount: String, deadline: String,
                startDate: String?, notes: String?, today: CalendarDate) throws {
        self.name = try GoalRules.validName(name)
        self.currency = try CurrencyCode(currency)
        self.targetAmount = try GoalRules.validTarget(targetAmount, currency: self.currency)
        self.deadline = try CalendarDate(parsing: deadline, field: "deadline")
        self.startDate = try startDate.map { try CalendarDate(parsing: $0, field: "start_date") } ?? today
        self.notes = try GoalRules.validNotes(notes)
        try GoalRules.checkDates(start: self.startDate, deadline: self.deadline)
    }
}

/// A partial update of a goal; `nil` leaves a field as it is. Notes may be cleared with "".
public struct GoalChanges: Sendable, Equatable {
    public var name: String?
    public var currency: String?
    public var targetAmount: String?
    public var deadline: String?
    public var startDate: String?
    public var notes: String?

    public init(name: String? = nil, currency: String? = nil, targetAmount: String? = nil,
                deadline: String? = nil, startDate: String? = nil, notes: String? = nil) {
        self.name = name
        self.currency = currency
        self.targetAmount = targetAmount
        self.deadline = deadline
        self.startDate = startDate
        self.notes = notes
    }

    public var isEmpty: Bool {
        name == nil && currency == nil && targetAmount == nil && deadline == nil && startDate == nil && notes == nil
    }

    /// Returns `goal` with the changes applied and every rule re-checked.
    public func applied(to goal: Goal, at now: Date) throws -> Goal {
        var updated = goal
        if let name { updated.name = try GoalRules.validName(name) }
        if let currency { updated.currency = try CurrencyCode(currency) }
        if let targetAmount {
            updated.targetAmount = try GoalRules.validTarget(targetAmount, currency: updated.currency)
        } else if currency != nil, Amount.fractionDigits(of: updated.targetAmount) > updated.currency.minorUnits {
            throw DomainError(.invalidAmount,
                              "target_amount: \(Amount.plainText(updated.targetAmount)) has more decimal places than \(updated.currency) allows; give a new target_amount",
                              details: ["field": "target_amount"])
        }
        if let deadline { updated.deadline = try CalendarDate(parsing: deadline, field: "deadline") }
        if let startDate { updated.startDate = try CalendarDate(parsing: startDate, field: "start_date") }
        if let notes { updated.notes = try GoalRules.validNotes(notes) }
        try GoalRules.checkDates(start: updated.startDate, deadline: updated.deadline)
        if updated != goal { updated.updatedAt = now }
        return updated
    }
}
