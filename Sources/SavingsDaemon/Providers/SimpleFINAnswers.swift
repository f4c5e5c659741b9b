import Foundation
import SavingsCore
import SavingsRPC

/// The SimpleFIN protocol's `GET /accounts` answer (an Account Set) as a linked account reads
/// it (issue 50), as hostile input. The shapes are the protocol's:
/// https://www.simplefin.org/protocol.html (simplefin/simplefin.github.com `protocol.md`:
/// "Account Set", "Account", "Transaction", "Custom Currencies", "GET /accounts"), whose
/// checklist asks that the `errors` be shown to the person and sanitized first. A server that
/// speaks the protocol's second version lists `errlist` (`{"code", "message"}`) as well or
/// instead; its messages are read the same way.
public enum SimpleFINAnswers {
    /// The largest answer read: a Bridge answer holds every account of the access, each with
    /// up to 90 days of transactions.
    public static let maxAnswerBytes = 4 << 20
    /// The most accounts, and transactions of one account, an answer may list.
    public static let maxAccounts = 1_000
    public static let maxTransactions = 100_000

    /// An answer's bytes as JSON, bounded first.
    static func json(_ bytes: [UInt8]) throws -> JSONValue {
        guard bytes.count <= maxAnswerBytes else { throw ProviderFailure("SimpleFIN's answer is larger than 4 MiB") }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw ProviderFailure("SimpleFIN's answer is not JSON")
        }
    }

    /// Why a call failed, by the statuses the protocol names (402, 403).
    static func failure(status: Int) -> ProviderFailure {
        switch status {
        case 402: ProviderFailure("SimpleFIN asks for payment: the Bridge subscription has lapsed")
        case 403: ProviderFailure("SimpleFIN refused the access URL (revoked, or not the one the claim gave): claim a new setup token")
        case 500...599: ProviderFailure("SimpleFIN answered HTTP \(status)", retryAfter: 1_800)
        default: ProviderFailure("SimpleFIN answered HTTP \(status)")
        }
    }

    /// One account of the set: its id, ISO currency, balance, and posted transactions.
    struct Account: Equatable {
        var id: String
        var currency: String
        var balance: Decimal
        var transactions: [LinkedRow]
    }

    /// An Account Set: its accounts, and its errors (sanitized, at most five).
    static func accountSet(_ answer: JSONValue) throws -> (accounts: [Account], errors: [String]) {
        guard answer.objectValue != nil else { throw ProviderFailure("SimpleFIN's answer is not an account set") }
        var errors = (answer["errors"]?.arrayValue ?? []).prefix(5).compactMap { ServiceText.sanitized($0.stringValue) }
        errors += (answer["errlist"]?.arrayValue ?? []).prefix(5).compactMap { ServiceText.sanitized($0["message"]?.stringValue) }
        errors = Array(errors.enumerated().filter { !errors.prefix($0.offset).contains($0.element) }.map(\.element).prefix(5))
        guard let items = answer["accounts"]?.arrayValue else {
            if !errors.isEmpty { throw ProviderFailure("SimpleFIN: " + errors.joined(separator: "; ")) }
            throw ProviderFailure("SimpleFIN's answer has no accounts")
        }
        guard items.count <= maxAccounts else { throw ProviderFailure("SimpleFIN's answer lists more than \(maxAccounts) accounts") }
        return (try items.map(account), errors)
    }

    /// One account. Its currency is an ISO 4217 code, or for a custom currency (miles,
    /// points) a URL, which savingsd does not hold.
    static func account(_ item: JSONValue) throws -> Account {
        guard let id = ServiceText.token(item["id"], limit: 128) else { throw ProviderFailure("a SimpleFIN account has no id") }
        guard let currency = item["currency"]?.stringValue, let balance = ServiceText.decimal(item["balance"]) else {
            throw ProviderFailure("the SimpleFIN account \(id) lacks its currency or balance")
        }
        let code = iso4217(currency)
        let rows = try (item["transactions"]?.arrayValue ?? []).prefix(maxTransactions + 1).compactMap(row)
        guard rows.count <= maxTransactions else { throw ProviderFailure("the SimpleFIN account \(id) lists more than \(maxTransactions) transactions") }
        return Account(id: id, currency: code ?? "", balance: balance, transactions: rows)
    }

    /// A posted transaction as a row: its id, `posted` (Unix seconds), amount, and description
    /// as the note; nil for a pending one (`pending` true, or `posted` 0).
    static func row(_ item: JSONValue) throws -> LinkedRow? {
        guard let id = ServiceText.token(item["id"], limit: 128) else { throw ProviderFailure("a SimpleFIN transaction has no id") }
        if item["pending"]?.boolValue == true || item["posted"]?.intValue == 0 { return nil }
        guard let date = ServiceText.seconds(item["posted"]), let amount = ServiceText.decimal(item["amount"]) else {
            throw ProviderFailure("the SimpleFIN transaction \(id) lacks its posting time or amount")
        }
        return LinkedRow(id: id, date: date, amount: amount, note: ServiceText.sanitized(item["description"]?.stringValue, limit: 200))
    }

    /// Three capital letters, or nil (a custom currency's URL, anything else).
    static func iso4217(_ text: String) -> String? {
        text.utf8.count == 3 && text.utf8.allSatisfy({ (0x41...0x5A).contains($0) }) ? text : nil
    }

    /// The linked account of a set, or why it is not there: the set's errors when it has any
    /// (the Bridge's "You must reauthenticate."), else that the account is missing.
    static func linked(_ set: (accounts: [Account], errors: [String]), id: String) throws -> Account {
        guard let account = set.accounts.first(where: { $0.id == id }) else {
            if !set.errors.isEmpty { throw ProviderFailure("SimpleFIN: " + set.errors.joined(separator: "; ")) }
            throw ProviderFailure("SimpleFIN lists no account '\(id.prefix(64))' for this access URL")
        }
        guard !account.currency.isEmpty else {
            throw ProviderFailure("the SimpleFIN account '\(id.prefix(64))' holds a custom currency (points, miles), which savingsd does not hold")
        }
        return account
    }

    /// An answer as it came (what a sync stores, and what the fuzz target checks): each
    /// account's id, balance and rows.
    public static func accountSetPage(_ bytes: [UInt8]) throws -> [(id: String, balance: Decimal, rows: [LinkedRow])] {
        try accountSet(try json(bytes)).accounts.map { ($0.id, $0.balance, $0.transactions) }
    }

    /// A claim's answer: the access URL, https (or loopback http) with credentials, as text.
    static func accessURL(_ body: [UInt8]) throws -> String {
        guard body.count <= 2_048, let text = String(bytes: body, encoding: .utf8)?.trimmingCharacters(in: .whitespacesAndNewlines),
              (try? SimpleFINAccess.split(accessURL: text)) != nil else {
            throw ProviderFailure("SimpleFIN's claim did not answer with an access URL (https://USER:PASSWORD@HOST/PATH)")
        }
        return text
    }
}
