import Foundation
import NIOHTTP1
import SavingsCore
import SavingsRPC
import SavingsStore

/// A linked Coinbase account through the Coinbase App API (v2) with a CDP API key: the account
/// named by its id or its currency (https://docs.cdp.coinbase.com/coinbase-app/track-apis/accounts),
/// its transactions, newest first (https://docs.cdp.coinbase.com/coinbase-app/track-apis/transactions),
/// and what the key may do (https://docs.cdp.coinbase.com/api-reference/advanced-trade-api/rest-api/data-api/get-api-key-permissions).
/// Each request carries its own ES256 JWT, whose `uri` claim is the method, the host and the
/// path without the query (https://docs.cdp.coinbase.com/coinbase-app/authentication-authorization/api-key-authentication).
struct CoinbaseSession: LinkedSession {
    let base: String
    /// The account's id, or a currency code (`BTC`).
    let accountName: String
    let keyName: String
    let privateKey: String
    let http: ProviderHTTP
    /// The account found by the first call of this sync.
    let found = Found()

    actor Found {
        var id: String?
        func set(_ id: String) { self.id = id }
    }

    /// The JWT's host: the base URL's host, with its port when one is written (a test server).
    static func host(of base: String) -> String {
        guard let parts = URLComponents(string: base), let host = parts.host else { return "api.coinbase.com" }
        return parts.port.map { "\(host):\($0)" } ?? host
    }

    /// A GET of `pathAndQuery` (from the API's root), signed for its path.
    private func get<T: Sendable>(_ pathAndQuery: String, what: String, read: @escaping @Sendable (JSONValue) throws -> T) async throws -> T {
        let path = String(pathAndQuery.prefix { $0 != "?" })
        let token: String
        do {
            token = try ServiceSigning.coinbase(keyName: keyName, privateKeyPEM: privateKey, method: "GET", host: Self.host(of: base), path: path,
                                                now: Date(), nonce: Self.nonce())
        } catch {
            throw ProviderFailure("the credential's Coinbase key cannot sign: \(error)")
        }
        let answer = try await http.send(.GET, base + pathAndQuery, headers: [("Authorization", "Bearer " + token)])
        guard answer.status == 200 else { throw CoinbaseAnswers.failure(status: answer.status, body: answer.body, what: what) }
        let body = answer.body
        return try await OffPool.run { try read(try CoinbaseAnswers.json(body, what: what)) }
    }

    static func nonce() -> String {
        (0..<16).map { _ in String(format: "%02x", UInt8.random(in: 0...255)) }.joined()
    }

    /// Coinbase shows a key's permissions through the Advanced Trade API; a key or an address
    /// that does not serve it leaves the question open (nil), a refused key fails.
    func powers() async throws -> [String]? {
        do {
            return try await get("/api/v3/brokerage/key_permissions", what: "key permission") { try CoinbaseAnswers.powers($0) }
        } catch let failure as ProviderFailure where failure.retryAfter == nil && failure.description.hasPrefix("Coinbase has no such") {
            return nil
        }
    }

    func account() async throws -> (balance: Decimal, currency: String?) {
        let account = try await resolved()
        return (account.balance, account.currency)
    }

    /// The linked account now: by its id once known (Show Account), else found among all of them.
    private func resolved() async throws -> CoinbaseAnswers.Account {
        let known = await found.id ?? (Self.looksLikeID(accountName) ? accountName.lowercased() : nil)
        if let known {
            let account = try await get("/v2/accounts/\(known)", what: "account") { answer in
                guard let data = answer["data"] else { throw ProviderFailure("Coinbase's account answer has no data") }
                return try CoinbaseAnswers.account(data)
            }
            await found.set(account.id)
            return account
        }
        var accounts: [CoinbaseAnswers.Account] = []
        var next: String? = "/v2/accounts?limit=100"
        while let page = next {
            let answer = try await get(page, what: "accounts") { answer in
                let page = try CoinbaseAnswers.page(answer, what: "accounts")
                return (try page.items.map(CoinbaseAnswers.account), page.next)
            }
            accounts += answer.0
            next = answer.1
            guard accounts.count <= 10_000 else { throw ProviderFailure("Coinbase lists more than 10 000 accounts") }
        }
        let account = try CoinbaseAnswers.resolve(accountName, among: accounts)
        await found.set(account.id)
        return account
    }

    /// The linked account's id without asking for it where it is known (found, or given).
    private func accountID() async throws -> String {
        if let id = await found.id { return id }
        return Self.looksLikeID(accountName) ? accountName.lowercased() : try await resolved().id
    }

    /// The most pages one read follows (100 transactions each: ten million).
    static let maxPages = 100_000

    /// A UUID (Coinbase's account ids).
    static func looksLikeID(_ name: String) -> Bool { name.utf8.count == 36 && UUID(uuidString: name) != nil }

    /// Pages of 100, newest first, by `next_uri`; a read from `since` stops at the first page
    /// that reaches rows older than it.
    func history(since: Date?, resume: String?, store: @escaping @Sendable ([LinkedRow], _ cursor: String?) async throws -> Void) async throws -> Set<String>? {
        let id = try await accountID()
        let prefix = "/v2/accounts/\(id)/transactions"
        var next: String? = prefix + "?limit=100"
        if let resume {
            guard CoinbaseAnswers.nextURI(resume, under: prefix) else { throw ProviderFailure("the stored place to go on from is not a page of this account") }
            next = resume
        }
        let bound = resume == nil ? since : nil
        var listed = Set<String>()
        // A hostile or broken answer could send the read round in circles, or on for ever
        // with empty pages: a page seen before ends it, and so does the page bound.
        var asked = Set<String>()
        while let page = next {
            guard asked.insert(page).inserted else { throw ProviderFailure("Coinbase's pages lead back to one already read") }
            guard asked.count <= Self.maxPages else { throw ProviderFailure("Coinbase's history goes on beyond \(Self.maxPages) pages") }
            let answer = try await get(page, what: "transactions") { answer in
                let page = try CoinbaseAnswers.page(answer, what: "transactions")
                return (try page.items.map(CoinbaseAnswers.transaction), page.next)
            }
            let transactions = answer.0.filter { transaction in bound.map { transaction.date > $0 } ?? true }
            let rows = CoinbaseAnswers.rows(transactions)
            listed.formUnion(rows.map(\.id))
            next = transactions.count < answer.0.count ? nil : answer.1
            if let following = next, !CoinbaseAnswers.nextURI(following, under: prefix) {
                throw ProviderFailure("Coinbase's next page is not one of this account's")
            }
            try await store(rows, next)
            guard listed.count <= 10_000_000 else { throw ProviderFailure("Coinbase's history goes on beyond ten million transactions") }
        }
        return resume == nil ? listed : nil
    }
}
