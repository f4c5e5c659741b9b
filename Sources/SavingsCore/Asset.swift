import Foundation

/// Where money sits: a crypto holding or a fiat account, in its own currency's units.
public struct Asset: Sendable, Equatable, Identifiable {
    public enum Kind: String, Sendable, CaseIterable {
        case crypto
        case fiat
    }

    public var id: UUID
    public var name: String
    public var currency: CurrencyCode
    public var kind: Kind
    public var address: String?
    public var notes: String?
    public var createdAt: Date
    public var updatedAt: Date

    public init(id: UUID, name: String, currency: CurrencyCode, kind: Kind, address: String?, notes: String?,
                createdAt: Date, updatedAt: Date) {
        self.id = id
        self.name = name
        self.currency = currency
        self.kind = kind
        self.address = address
        self.notes = notes
        self.createdAt = createdAt
        self.updatedAt = updatedAt
    }

    /// Asset amounts print with at least the currency's minor units and never lose a digit.
    public func format(_ amount: Decimal) -> String {
        let plain = Amount.plainText(amount), digits = Amount.fractionDigits(ofPlain: plain)
        // Every digit fits: the text itself, padded (printing it again would give the same).
        guard digits > Amount.maxFractionDigits else { return Amount.padded(plain, scale: max(currency.minorUnits, digits)) }
        return Amount.format(amount, scale: max(currency.minorUnits, Amount.maxFractionDigits))
    }

    public static func kind(_ text: String) throws -> Kind {
        guard let kind = Kind(rawValue: text.lowercased()) else {
            throw DomainError.invalidField("kind", "must be \"crypto\" or \"fiat\", not '\(text)'")
        }
        return kind
    }

    /// The name of the fiat asset `goal.contribute` creates when a goal has none.
    public static func savingsAccountName(_ currency: CurrencyCode) -> String { "\(currency.code) savings" }
}

/// A validated request to create an asset.
public struct NewAsset: Sendable, Equatable {
    public var name: String
    public var currency: CurrencyCode
    public var kind: Asset.Kind
    public var address: String?
    public var notes: String?

    public init(name: String, currency: String, kind: String, address: String?, notes: String?) throws {
        self.name = try GoalRules.validName(name)
        self.currency = try CurrencyCode(currency)
        self.kind = try Asset.kind(kind)
        self.address = try GoalRules.validNotes(address)
        self.notes = try GoalRules.validNotes(notes)
    }
}

/// A partial update of an asset. The currency of an asset with history cannot change (its
/// amounts would change meaning), which the store enforces.
public struct AssetChanges: Sendable, Equatable {
    public var name: String?
    public var currency: String?
    public var kind: String?
    public var address: String?
    public var notes: String?

    public init(name: String? = nil, currency: String? = nil, kind: String? = nil, address: String? = nil, notes: String? = nil) {
        self.name = name
        self.currency = currency
        self.kind = kind
        self.address = address
        self.notes = notes
    }

    public var isEmpty: Bool { name == nil && currency == nil && kind == nil && address == nil && notes == nil }

    public func applied(to asset: Asset, at now: Date) throws -> Asset {
        var updated = asset
        if let name { updated.name = try GoalRules.validName(name) }
        if let currency { updated.currency = try CurrencyCode(currency) }
        if let kind { updated.kind = try Asset.kind(kind) }
        if let address { updated.address = try GoalRules.validNotes(address) }
        if let notes { updated.notes = try GoalRules.validNotes(notes) }
        if updated != asset { updated.updatedAt = now }
        return updated
    }
}

/// A movement of an asset's balance; negative amounts are withdrawals.
public struct AssetTransaction: Sendable, Equatable, Identifiable {
    public enum Source: String, Sendable, CaseIterable {
        case manual
        case onchain
        case `import`
        /// A linked account's service (issue 50).
        case kraken, binance, coinbase, simplefin

        /// The row came from a linked account at this service.
        public init(_ service: LinkedService) {
            switch service {
            case .kraken: self = .kraken
            case .binance: self = .binance
            case .coinbase: self = .coinbase
            case .simplefin: self = .simplefin
            }
        }

        /// The linked service the row came from, if it did.
        public var service: LinkedService? { LinkedService(rawValue: rawValue) }
    }

    public var id: UUID
    public var assetID: UUID
    public var amount: Decimal
    /// The effective time; may be backdated.
    public var date: Date
    public var source: Source
    public var note: String?
    public var externalID: String?
    public var createdAt: Date

    public init(id: UUID, assetID: UUID, amount: Decimal, date: Date, source: Source, note: String?, externalID: String?, createdAt: Date) {
        self.id = id
        self.assetID = assetID
        self.amount = amount
        self.date = date
        self.source = source
        self.note = note
        self.externalID = externalID
        self.createdAt = createdAt
    }

    /// Validates a transaction amount: non-zero, at most 18 decimals.
    public static func validAmount(_ text: String) throws -> Decimal {
        let amount = try Amount.parse(text)
        guard amount != 0 else {
            throw DomainError(.invalidAmount, "amount: a transaction of zero changes nothing", details: ["field": "amount"])
        }
        return amount
    }
}

/// The fixed target of an asset for a goal, in the asset's units.
public struct Allocation: Sendable, Equatable {
    public var assetID: UUID
    public var goalID: UUID
    public var amount: Decimal

    public init(assetID: UUID, goalID: UUID, amount: Decimal) {
        self.assetID = assetID
        self.goalID = goalID
        self.amount = amount
    }

    /// A target amount: zero or positive, at most 18 decimals.
    public static func validAmount(_ text: String, field: String = "amount") throws -> Decimal {
        let amount = try Amount.parse(text, field: field)
        guard amount >= 0 else {
            throw DomainError(.invalidAmount, "\(field): must not be negative (got \(text))", details: ["field": field])
        }
        return amount
    }
}

/// One point of an allocation's timeline: the target of (asset, goal) from `timestamp` on.
public struct AllocationHistoryEntry: Sendable, Equatable, Identifiable {
    public var id: UUID
    public var assetID: UUID
    public var goalID: UUID
    public var amount: Decimal
    public var timestamp: Date
    /// Tie-breaker between entries with the same timestamp.
    public var createdAt: Date
    public var monthLabel: MonthLabel

    public init(id: UUID, assetID: UUID, goalID: UUID, amount: Decimal, timestamp: Date, createdAt: Date, monthLabel: MonthLabel) {
        self.id = id
        self.assetID = assetID
        self.goalID = goalID
        self.amount = amount
        self.timestamp = timestamp
        self.createdAt = createdAt
        self.monthLabel = monthLabel
    }
}
