import Foundation
import SavingsCore
import SavingsRPC

/// The Coinbase App API (v2) as a linked account reads it with a CDP API key (issue 50): the
/// key's credential, the answers of the account list, one account, its transactions and the
/// key's permissions, read as hostile input. Every shape here is from Coinbase's documentation:
/// https://docs.cdp.coinbase.com/coinbase-app/track-apis/accounts,
/// https://docs.cdp.coinbase.com/coinbase-app/track-apis/transactions,
/// https://docs.cdp.coinbase.com/coinbase-app/api-architecture/pagination (`pagination.next_uri`,
/// newest first, `limit` up to 100), errors as `{"errors": [{"id", "message"}]}`, and
/// https://docs.cdp.coinbase.com/api-reference/advanced-trade-api/rest-api/data-api/get-api-key-permissions.
public enum CoinbaseAnswers {
    /// A CDP key as Coinbase hands it out: the downloaded `cdp_api_key.json`
    /// (`{"name": "organizations/…/apiKeys/…", "privateKey": "-----BEGIN EC PRIVATE KEY-----\n…"}`),
    /// or the name on the first line and the PEM after it (with line breaks, or `\n` written out).
    static func credential(_ text: String, name credentialName: String) throws -> (name: String, pem: String) {
        let trimmed = text.trimmingCharacters(in: .whitespacesAndNewlines)
        let wrong = ProviderFailure("the credential '\(credentialName)' is not a Coinbase key: save Coinbase's cdp_api_key.json as it is, or write the key's name on the first line and its private key (PEM) after it")
        var name: String, pem: String
        if trimmed.hasPrefix("{") {
            guard trimmed.utf8.count <= 16_384, let object = try? JSONParser.parse(Array(trimmed.utf8)) else { throw wrong }
            guard let keyName = object["name"]?.stringValue, let key = object["privateKey"]?.stringValue else {
                if object["id"] != nil {
                    throw ProviderFailure("the credential '\(credentialName)' is an Ed25519 Coinbase key: savingsd signs with ECDSA keys (choose ECDSA when making the key)")
                }
                throw wrong
            }
            (name, pem) = (keyName, key)
        } else {
            let lines = trimmed.split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
            guard lines.count >= 2 else { throw wrong }
            (name, pem) = (lines[0], lines.dropFirst().joined(separator: "\n"))
        }
        guard (1...256).contains(name.utf8.count), name.utf8.allSatisfy({ (0x21...0x7E).contains($0) }), pem.contains("PRIVATE KEY") else { throw wrong }
        return (name, pem)
    }

    /// The largest answer read (a page of 100 transactions is some tens of KiB).
    public static let maxAnswerBytes = 4 << 20
    /// The most entries one page may hold (`limit` is at most 100; more is refused).
    public static let maxPage = 1_000

    /// An answer's bytes as JSON, bounded first.
    static func json(_ bytes: [UInt8], what: String) throws -> JSONValue {
        guard bytes.count <= maxAnswerBytes else { throw ProviderFailure("Coinbase's \(what) answer is larger than 4 MiB") }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw ProviderFailure("Coinbase's \(what) answer is not JSON")
        }
    }

    /// Why a call failed, from its status and its `errors` (the v2 API) or `error` (the
    /// Advanced Trade API) body.
    static func failure(status: Int, body: [UInt8], what: String) -> ProviderFailure {
        if (500...599).contains(status) { return ProviderFailure("Coinbase answered HTTP \(status)", retryAfter: 60) }
        let answer = body.count <= 65_536 ? try? JSONParser.parse(body) : nil
        let first = answer?["errors"]?.arrayValue?.first
        let id = ServiceText.token(first?["id"] ?? answer?["error"], limit: 64)
        let message = ServiceText.sanitized((first ?? answer)?["message"]?.stringValue, limit: 120)
        switch (status, id) {
        case (401, _):
            return ProviderFailure("Coinbase refused the key (\(id ?? "HTTP 401")): check the key's name and private key in the credential, and the machine's clock (a token is good for two minutes)")
        case (403, _), (_, "invalid_scope"):
            return ProviderFailure("the Coinbase key may not read this: give it the View permission")
        case (404, _):
            return ProviderFailure("Coinbase has no such \(what)")
        default:
            return ProviderFailure("Coinbase answered HTTP \(status) to \(what)\((id ?? message).map { ": " + $0 } ?? "")")
        }
    }

    /// An account: its id, its currency's code, its balance.
    struct Account: Equatable {
        var id: String
        var currency: String
        var balance: Decimal
    }

    /// One account object (`data` of Show Account, an item of List Accounts). `currency` is an
    /// object with a `code` now, a plain string in older answers.
    static func account(_ item: JSONValue) throws -> Account {
        guard let id = ServiceText.id(item["id"]) else { throw ProviderFailure("a Coinbase account has no id") }
        guard let code = currencyCode(item["currency"]?["code"] ?? item["currency"]),
              let balance = ServiceText.decimal(item["balance"]?["amount"]) else {
            throw ProviderFailure("the Coinbase account \(id) lacks its currency or balance")
        }
        return Account(id: id, currency: code, balance: balance)
    }

    /// A list answer: its entries (at most `maxPage`) and where the next page is.
    static func page(_ answer: JSONValue, what: String) throws -> (items: [JSONValue], next: String?) {
        guard let items = answer["data"]?.arrayValue else { throw ProviderFailure("Coinbase's \(what) answer has no data") }
        guard items.count <= maxPage else { throw ProviderFailure("Coinbase's \(what) page holds more than \(maxPage) entries") }
        let next = answer["pagination"]?["next_uri"]?.stringValue.flatMap { $0.isEmpty ? nil : $0 }
        if let next, !nextURI(next) { throw ProviderFailure("Coinbase's \(what) answer names a next page that is not one of its own") }
        return (items, next)
    }

    /// A next page's path: `/v2/accounts…`, of letters, digits and `/?&=-_.%` only, at most 1 KiB.
    static func nextURI(_ path: String, under prefix: String = "/v2/accounts") -> Bool {
        path.hasPrefix(prefix) && path.utf8.count <= 1_024 && !path.contains("..") && !path.contains("//")
            && path.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || "/?&=-_.%".utf8.contains($0) }
    }

    /// The account a link names: its id (any case), or else the one account of that currency.
    static func resolve(_ name: String, among accounts: [Account]) throws -> Account {
        if let found = accounts.first(where: { $0.id.lowercased() == name.lowercased() }) { return found }
        let matching = accounts.filter { $0.currency == name.uppercased() }
        switch matching.count {
        case 1: return matching[0]
        case 0: throw ProviderFailure("no Coinbase account has the id or currency '\(name.prefix(64))'")
        default:
            let ids = matching.prefix(10).map(\.id).joined(separator: ", ")
            throw ProviderFailure("Coinbase has \(matching.count) \(name.uppercased()) accounts: link one by its id (\(ids))")
        }
    }

    /// A transaction as stored when it is `completed`: its id, when it was made, its type,
    /// and its signed amount in the account's currency.
    struct Transaction: Equatable {
        var id: String
        var date: Date
        var type: String
        var status: String
        var amount: Decimal
        var currency: String
    }

    /// An item of List Transactions.
    static func transaction(_ item: JSONValue) throws -> Transaction {
        guard let id = ServiceText.id(item["id"]) else { throw ProviderFailure("a Coinbase transaction has no id") }
        guard let status = ServiceText.token(item["status"], limit: 40), let amount = ServiceText.decimal(item["amount"]?["amount"]),
              let currency = currencyCode(item["amount"]?["currency"]), let date = ServiceText.iso8601(item["created_at"]) else {
            throw ProviderFailure("the Coinbase transaction \(id) lacks its status, amount or time")
        }
        return Transaction(id: id, date: date, type: ServiceText.token(item["type"], limit: 40) ?? "transaction", status: status,
                           amount: amount, currency: currency)
    }

    /// The completed transactions of a page as rows (pending, failed, expired, canceled and
    /// waiting ones have not moved the balance).
    static func rows(_ transactions: [Transaction]) -> [LinkedRow] {
        transactions.filter { $0.status == "completed" }.map { LinkedRow(id: $0.id, date: $0.date, amount: $0.amount, note: "Coinbase \($0.type)") }
    }

    /// `GET /api/v3/brokerage/key_permissions`: `trade` and `transfer` when the key has them.
    static func powers(_ answer: JSONValue) throws -> [String] {
        guard answer["can_view"]?.boolValue != nil else { throw ProviderFailure("Coinbase's key permission answer has no permissions") }
        return [("trade", "can_trade"), ("transfer", "can_transfer")].filter { answer[$0.1]?.boolValue != false }.map(\.0)
    }

    /// Currency codes: 1-16 letters and digits.
    static func currencyCode(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue, (1...16).contains(text.utf8.count),
              text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { return nil }
        return text.uppercased()
    }

    /// A transactions page as it came (what a sync stores, and what the fuzz target checks).
    public static func transactionPage(_ bytes: [UInt8]) throws -> (rows: [(id: String, date: Date, amount: Decimal)], next: String?) {
        let page = try page(try json(bytes, what: "transactions"), what: "transactions")
        return (rows(try page.items.map(transaction)).map { ($0.id, $0.date, $0.amount) }, page.next)
    }

    /// An accounts page as it came.
    public static func accountPage(_ bytes: [UInt8]) throws -> (accounts: [(id: String, currency: String, balance: Decimal)], next: String?) {
        let page = try page(try json(bytes, what: "accounts"), what: "accounts")
        return (try page.items.map(account).map { ($0.id, $0.currency, $0.balance) }, page.next)
    }
}
