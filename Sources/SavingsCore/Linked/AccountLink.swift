import Foundation

/// The services a linked account reads (issue 50): two exchanges' read-only API keys, Coinbase's
/// CDP keys, and banks through SimpleFIN Bridge.
public enum LinkedService: String, Sendable, CaseIterable, Codable {
    case kraken, binance, coinbase, simplefin

    public init(name: String) throws(DomainError) {
        guard let service = LinkedService(rawValue: name.lowercased()) else {
            throw DomainError.invalidField("service", "'\(name.prefix(40))' is not a service savingsd links (\(Self.names))")
        }
        self = service
    }

    public static let names = allCases.map(\.rawValue).joined(separator: ", ")

    /// How a person calls it.
    public var title: String {
        switch self {
        case .kraken: "Kraken"
        case .binance: "Binance"
        case .coinbase: "Coinbase"
        case .simplefin: "SimpleFIN"
        }
    }

    /// What `account` names at this service, for messages and help.
    public var accountMeaning: String {
        switch self {
        case .kraken: "Kraken's asset code (XXBT, XETH, ZEUR, ...)"
        case .binance: "the coin (BTC, ETH, ...)"
        case .coinbase: "the account's id, or its currency when that is unambiguous (BTC)"
        case .simplefin: "the account's id in SimpleFIN"
        }
    }

    /// Links to a bank hold fiat; the others, the asset's own currency.
    public var holdsFiat: Bool { self == .simplefin }

    /// The currency an account name says it holds, where the name says (Kraken's and Binance's
    /// codes); nil where only the service knows (Coinbase's and SimpleFIN's account ids).
    public func currency(ofAccount account: String) -> String? {
        switch self {
        case .kraken: Self.krakenCurrency(account)
        case .binance: account.uppercased()
        case .coinbase: account.count <= 10 && !account.contains("-") ? account.uppercased() : nil
        case .simplefin: nil
        }
    }

    /// Kraken's asset codes as currencies: its older four-letter codes carry an X (crypto) or
    /// Z (fiat) in front (`XXBT`, `XETH`, `ZEUR`), bitcoin is `XBT` and dogecoin `XDG`; a
    /// suffix names a view of the same asset (`ETH2.S` staked, `USD.M`, `DOT.F`), and `ETH2`
    /// is staked ether (https://support.kraken.com/hc/en-us/articles/360001185506).
    public static func krakenCurrency(_ code: String) -> String {
        var base = code.uppercased()
        if let dot = base.firstIndex(of: ".") { base = String(base[..<dot]) }
        if base.count == 4, base.first == "X" || base.first == "Z" {
            let rest = String(base.dropFirst())
            if ["XBT", "XDG", "ETH", "EUR", "USD", "GBP", "CAD", "JPY", "CHF", "AUD", "LTC", "XRP", "XLM", "ZEC", "XMR", "ETC", "MLN", "REP"]
                .contains(rest) { base = rest }
        }
        switch base {
        case "XBT": return "BTC"
        case "XDG": return "DOGE"
        case "ETH2": return "ETH"
        default: return base
        }
    }
}

/// One asset's link to an account at a service: which account, which credential signs for it,
/// and how its last sync went. The secret itself is never here, only the credential's name.
public struct AccountLink: Sendable, Equatable {
    public var assetID: UUID
    public var service: LinkedService
    /// The account or currency at the service (see `LinkedService.accountMeaning`).
    public var account: String
    /// The credential's name in the credentials directory.
    public var credential: String
    public var createdAt: Date
    public var lastSyncAt: Date?
    public var lastError: String?
    /// The service's balance of the account at the last sync.
    public var reportedBalance: Decimal?
    public var reconciled: Bool?
    /// Where an unfinished first sync goes on (service-specific).
    public var cursor: String?

    public init(assetID: UUID, service: LinkedService, account: String, credential: String, createdAt: Date,
                lastSyncAt: Date? = nil, lastError: String? = nil, reportedBalance: Decimal? = nil, reconciled: Bool? = nil,
                cursor: String? = nil) {
        self.assetID = assetID
        self.service = service
        self.account = account
        self.credential = credential
        self.createdAt = createdAt
        self.lastSyncAt = lastSyncAt
        self.lastError = lastError
        self.reportedBalance = reportedBalance
        self.reconciled = reconciled
        self.cursor = cursor
    }

    /// A credential's name: a plain file name in the credentials directory (letters, digits,
    /// '.', '-' and '_', at most 64, not starting with a dot).
    public static func checkCredentialName(_ name: String) throws(DomainError) -> String {
        guard (1...64).contains(name.utf8.count), name.first != ".",
              name.unicodeScalars.allSatisfy({ $0.isASCII && (CharacterSet.alphanumerics.contains($0) || "._-".unicodeScalars.contains($0)) }) else {
            throw DomainError.invalidField("credential", "'\(name.prefix(64))' is not a credential's name (letters, digits, '.', '-' and '_', at most 64)")
        }
        return name
    }

    /// An account name as a service writes it: printable ASCII without spaces, at most 128.
    public static func checkAccount(_ account: String) throws(DomainError) -> String {
        let trimmed = account.trimmingCharacters(in: .whitespaces)
        guard (1...128).contains(trimmed.utf8.count), trimmed.utf8.allSatisfy({ (0x21...0x7E).contains($0) }) else {
            throw DomainError.invalidField("account", "a service's name for the account: 1-128 printable characters without spaces")
        }
        return trimmed
    }
}

/// One row of a service's history as savingsd stores it: the service's own id (the row's
/// external_id), when, and what it moved net of fees.
public struct LinkedRow: Sendable, Equatable {
    public var id: String
    public var date: Date
    public var amount: Decimal
    public var note: String?

    public init(id: String, date: Date, amount: Decimal, note: String? = nil) {
        self.id = id
        self.date = date
        self.amount = amount
        self.note = note
    }
}

/// What one sync of a link found and did.
public struct LinkSyncOutcome: Sendable, Equatable {
    public var added = 0
    public var removed: [String] = []
    public var balance: Decimal = 0
    public var reportedBalance: Decimal = 0
    public var reconciled = true

    public init() {}
}

/// The rules a sync follows whatever the service (pure).
public enum LinkSyncPlan {
    /// The stored rows of a window the service no longer lists: removed, as chain rows are.
    /// `listed` is every id the service gave for the window, `stored` the stored ids in it.
    /// Only rows from `coveredFrom` on count, the oldest row the service gave in this read: a
    /// service that keeps a limited history (a bank's, through SimpleFIN) says nothing of what
    /// is older; nil (it gave none) removes nothing.
    public static func removed(stored: [String: Date], listed: Set<String>, since: Date?, coveredFrom: Date?) -> [String] {
        guard let coveredFrom else { return [] }
        return stored.filter { id, date in !listed.contains(id) && date >= coveredFrom && (since.map { date > $0 } ?? true) }.map(\.key).sorted()
    }

    /// An incremental sync reads again this far back, so a row the service changed or counted
    /// late is seen: a deposit credited, a withdrawal approved, a card payment posted, a bank
    /// transfer settled (days, at most a few weeks later).
    public static let overlap: TimeInterval = 35 * 86_400

    /// Where a sync starts, in whole seconds as services take them: everything on a link's
    /// first sync (`lastSync` nil); after, `overlap` before the newest stored row, or before
    /// the last sync when none is stored (so an account without rows is not read from its
    /// beginning each time).
    public static func since(newest: Date?, lastSync: Date?) -> Date? {
        guard let lastSync else { return nil }
        let anchor = newest.map { min($0, lastSync) } ?? lastSync
        return Date(timeIntervalSince1970: anchor.addingTimeInterval(-overlap).timeIntervalSince1970.rounded(.down))
    }

    /// Stored and reported agree to the last digit.
    public static func reconciled(stored: Decimal, reported: Decimal) -> Bool { stored == reported }
}
