import Foundation
import NIOConcurrencyHelpers

/// A SimpleFIN server on loopback (https://www.simplefin.org/protocol.html: "POST /claim/:token",
/// "GET /accounts", the Account Set), at `/simplefin` like SimpleFIN Bridge. A setup token's
/// claim answers the access URL once and 403 after; `/accounts` wants the access URL's
/// credentials as Basic authentication (403 otherwise) and honours `start-date` (on or after),
/// `end-date` (before), `pending=1`, `account` and `balances-only=1`. Like the Bridge, a range of
/// more than 90 days is capped to its first 90 with a warning in `errors`; `requests` counts the
/// `/accounts` calls (the Bridge expects at most 24 a day). Plain http: the daemon takes http
/// for an access URL on the loopback only.
final class SimpleFINStub: Sendable {
    struct Transaction: Sendable {
        var id: String, posted: Int64, amount: String, description: String
        var pending = false
    }
    struct Account: Sendable {
        var id: String, name: String, currency: String, balance: String
        var transactions: [Transaction] = []
    }
    struct State: Sendable {
        var user = "user123", password = "pass456"
        var accounts: [Account] = []
        /// Errors every answer lists (`"You must reauthenticate."`).
        var errors: [String] = []
        /// Tokens not yet claimed.
        var tokens: Set<String> = ["demo"]
        var requests = 0
        var fail: StubRule?
    }

    let http: HTTPStub
    private let state: NIOLockedValueBox<State>

    init() throws {
        let state = NIOLockedValueBox(State())
        self.state = state
        let box = NIOLockedValueBox(0)
        http = try HTTPStub { request in state.withLockedValue { Self.answer(request, port: box.withLockedValue { $0 }, &$0) } }
        let port = http.port
        box.withLockedValue { $0 = port }
    }

    func update(_ change: (inout State) -> Void) { state.withLockedValue(change) }
    func failing(_ rule: StubRule?) { state.withLockedValue { $0.fail = rule } }
    var requests: Int { state.withLockedValue { $0.requests } }

    /// The access URL a claim answers (the credential's text).
    var accessURL: String {
        let state = state.withLockedValue { $0 }
        return "http://\(state.user):\(state.password)@127.0.0.1:\(http.port)/simplefin"
    }

    /// A setup token for `token`: the base64 of its claim URL.
    func setupToken(_ token: String = "demo") -> String {
        Data("http://127.0.0.1:\(http.port)/simplefin/claim/\(token)".utf8).base64EncodedString()
    }

    private static func answer(_ request: HTTPStub.Request, port: Int, _ state: inout State) -> HTTPStub.Response {
        if let response = state.fail?(request) { return response }
        if request.method == "POST", request.path.hasPrefix("/simplefin/claim/") {
            let token = String(request.path.dropFirst("/simplefin/claim/".count))
            guard state.tokens.remove(token) != nil else { return HTTPStub.Response(status: 403, body: "Forbidden") }
            return HTTPStub.Response(status: 200, headers: [("Content-Type", "text/plain")],
                                     body: "http://\(state.user):\(state.password)@127.0.0.1:\(port)/simplefin")
        }
        guard request.method == "GET", request.path == "/simplefin/accounts" else { return HTTPStub.Response(status: 404, body: "not found") }
        state.requests += 1
        let basic = "Basic " + Data("\(state.user):\(state.password)".utf8).base64EncodedString()
        guard request.headers["authorization"] == basic else { return HTTPStub.Response(status: 403, body: "Forbidden") }
        var errors = state.errors
        let start = Int64(request.query["start-date"] ?? "") ?? 0
        var end = Int64(request.query["end-date"] ?? "") ?? Int64.max
        if end != Int64.max, end - start > 90 * 86_400 {
            end = start + 90 * 86_400
            errors.append("Requested date range exceeds limit of 90 days and was capped.")
        }
        let pending = request.query["pending"] == "1", balancesOnly = request.query["balances-only"] == "1"
        let chosen = request.query["account"]
        let accounts: [[String: Any]] = state.accounts.filter { chosen == nil || $0.id == chosen }.map { account in
            var object: [String: Any] = [
                "org": ["domain": "mybank.com", "sfin-url": "https://sfin.mybank.com", "name": "My Bank"],
                "id": account.id, "name": account.name, "currency": account.currency, "balance": account.balance,
                "available-balance": account.balance, "balance-date": Int(Date().timeIntervalSince1970),
            ]
            if !balancesOnly {
                object["transactions"] = account.transactions
                    .filter { (start..<end).contains($0.posted) && (pending || !$0.pending) }
                    .sorted { $0.posted < $1.posted }
                    .map { transaction -> [String: Any] in
                        var item: [String: Any] = ["id": transaction.id, "posted": transaction.pending ? 0 : transaction.posted,
                                                   "amount": transaction.amount, "description": transaction.description]
                        if transaction.pending { item["pending"] = true }
                        return item
                    }
            }
            return object
        }
        return .json(200, ["errors": errors, "accounts": accounts])
    }
}
