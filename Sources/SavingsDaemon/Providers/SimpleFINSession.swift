import Foundation
import NIOHTTP1
import SavingsCore
import SavingsRPC
import SavingsStore

/// A linked bank account through a SimpleFIN server (SimpleFIN Bridge): `GET /accounts` with
/// the access URL's credentials as Basic authentication (https://www.simplefin.org/protocol.html,
/// "GET /accounts": `start-date`, `end-date`, `pending`, `account`, `balances-only`). The key
/// is read-only by design, so no powers are asked for.
///
/// The Bridge answers at most 90 days of transactions a request (a longer range is capped, with
/// the warning "Requested date range exceeds limit of 90 days and was capped" among the errors)
/// and expects at most 24 requests a day (the Bridge's developer guide, "Limits",
/// https://bridge.simplefin.org/info/developers): a first read goes back one
/// year, in four 90-day windows and a short one; an incremental read is one window; the
/// balance after the history is the one the last window's answer gave, so a sync costs one
/// request more than its windows (the balance asked for before them).
struct SimpleFINSession: LinkedSession {
    /// The access URL without its credentials, without a trailing slash.
    let base: String
    /// `Basic …` of the access URL's credentials.
    let authorization: String
    let accountID: String
    let http: ProviderHTTP
    /// The linked account's balance as the last history window gave it.
    let latest = Latest()
    /// The errors the answers listed beside the account (the Bridge asks that they be shown).
    let said = Said()

    actor Said {
        var errors: [String] = []
        func add(_ more: [String]) { errors += more.filter { !errors.contains($0) } }
    }

    func notices() async -> [String] { Array(await said.errors.prefix(5)) }

    actor Latest {
        var balance: (Decimal, String)?
        func set(_ balance: Decimal, _ currency: String) { self.balance = (balance, currency) }
        func take() -> (Decimal, String)? {
            defer { balance = nil }
            return balance
        }
    }

    /// Each request's span: `end-date` − `start-date` of at most 90 days.
    static let window: Int64 = 90 * 86_400
    /// How far back a first read goes: a year (the Bridge keeps what the bank gives, often less).
    static let firstRead: Int64 = 365 * 86_400

    private func accounts(_ query: [(String, String)]) async throws -> (accounts: [SimpleFINAnswers.Account], errors: [String]) {
        let text = query.map { "\($0.0)=\(ServiceText.escape($0.1))" }.joined(separator: "&")
        let answer = try await http.send(.GET, base + "/accounts?" + text, headers: [("Authorization", authorization)])
        guard answer.status == 200 else { throw SimpleFINAnswers.failure(status: answer.status) }
        let body = answer.body
        return try await OffPool.run { try SimpleFINAnswers.accountSet(try SimpleFINAnswers.json(body)) }
    }

    func powers() async throws -> [String]? { nil }

    func account() async throws -> (balance: Decimal, currency: String?) {
        if let latest = await latest.take() { return latest }
        let account = try SimpleFINAnswers.linked(try await accounts([("balances-only", "1"), ("account", accountID)]), id: accountID)
        return (account.balance, account.currency)
    }

    /// 90-day windows from `since` (a year back when nil) to now, each one request; the rows
    /// kept are the linked account's posted ones dated within the window.
    func history(since: Date?, resume: String?, store: @escaping @Sendable ([LinkedRow], _ cursor: String?) async throws -> Void) async throws -> Set<String>? {
        let now = Int64(Date().timeIntervalSince1970)
        var cursor = resume.flatMap(Cursor.init) ?? Cursor(start: since.map { Int64($0.timeIntervalSince1970) } ?? now - Self.firstRead, end: now + 1)
        var listed = Set<String>()
        while cursor.start < cursor.end {
            let windowEnd = min(cursor.start + Self.window, cursor.end)
            let set = try await accounts([("start-date", String(cursor.start)), ("end-date", String(windowEnd)), ("pending", "0"),
                                          ("account", accountID)])
            let account = try SimpleFINAnswers.linked(set, id: accountID)
            await latest.set(account.balance, account.currency)
            await said.add(set.errors)
            let start = cursor.start
            let rows = account.transactions.filter { (start..<windowEnd).contains(Int64($0.date.timeIntervalSince1970)) }
            listed.formUnion(rows.map(\.id))
            cursor.start = windowEnd
            try await store(rows, cursor.start < cursor.end ? cursor.text : nil)
        }
        // An answer with errors (a range capped, a connection to sign in again) may have left
        // rows out: nothing is removed on its word.
        let errors = await said.errors
        return resume == nil && errors.isEmpty ? listed : nil
    }

    /// Where a stopped read goes on: the next window's start and the read's end (Unix seconds).
    struct Cursor: Equatable {
        var start: Int64
        var end: Int64

        init(start: Int64, end: Int64) {
            (self.start, self.end) = (start, end)
        }

        init?(_ text: String) {
            let fields = Dictionary(text.split(separator: ";").compactMap { part -> (String, Int64)? in
                let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2, let value = Int64(pair[1]) else { return nil }
                return (pair[0], value)
            }, uniquingKeysWith: { $1 })
            guard let start = fields["start"], let end = fields["end"], start >= 0, end >= start else { return nil }
            self.init(start: start, end: end)
        }

        var text: String { "start=\(start);end=\(end)" }
    }

    /// Claims a setup token (`POST` to the claim URL it holds, no body): the answer is the
    /// access URL, the secret to keep. A 403 means the token was claimed already, perhaps by
    /// someone else: the protocol asks that the person be told it may be compromised.
    static func claim(setupToken: String, http: ProviderHTTP) async throws -> String {
        let url: URL
        do {
            url = try SimpleFINAccess.claimURL(setupToken: setupToken)
        } catch {
            throw ProviderFailure(error.description)
        }
        let answer = try await http.send(.POST, url.absoluteString, headers: [], body: [])
        switch answer.status {
        case 200:
            return try SimpleFINAnswers.accessURL(answer.body)
        case 403:
            throw ProviderFailure("SimpleFIN refused the setup token: it was claimed already or does not exist. If you did not claim it yourself, someone else may have: disable it in SimpleFIN Bridge and make a new one")
        default:
            throw SimpleFINAnswers.failure(status: answer.status)
        }
    }
}
