import Crypto
import Foundation
import NIOConcurrencyHelpers

/// Loopback stand-ins for the linked services (issue 50), one `HTTPStub` each, checking every
/// request the way the service does and answering in its documented shapes. Each holds what it
/// serves in `state` (change it with `update`), and `failing` answers chosen requests otherwise
/// (`.rateLimited(after:)`, an error body): the rule sees each request first.
typealias StubRule = @Sendable (HTTPStub.Request) -> HTTPStub.Response?

extension HTTPStub.Response {
    /// 429 with `Retry-After` in seconds, as every service here sends it.
    static func rateLimited(after seconds: Int) -> HTTPStub.Response {
        HTTPStub.Response(status: 429, headers: [("Retry-After", String(seconds))], body: "")
    }

    static func json(_ status: Int, _ object: Any) -> HTTPStub.Response {
        HTTPStub.Response(status: status, headers: [("Content-Type", "application/json")],
                          body: String(decoding: try! JSONSerialization.data(withJSONObject: object, options: [.sortedKeys]), as: UTF8.self))
    }
}

/// Binance's signed API (https://github.com/binance/binance-spot-api-docs/blob/master/rest-api.md,
/// errors.md; https://developers.binance.com/docs/wallet/capital/deposite-history,
/// .../withdraw-history, .../account/api-key-permission): `X-MBX-APIKEY` must be the key, the
/// query must end with `signature`, the HMAC-SHA256 of the rest keyed with the secret, and
/// `timestamp` within `recvWindow` of the stub's clock (-2015, -1022, -1021 otherwise); the
/// histories take windows of less than 90 days (-1127) and page by `offset`/`limit`, newest
/// first. Every answer reports the minute's weight in the documented headers.
final class BinanceStub: Sendable {
    struct Deposit: Sendable { var id: String, coin: String, amount: String, status: Int, insertTime: Int64 }
    struct Withdrawal: Sendable { var id: String, coin: String, amount: String, fee: String, status: Int, applyTime: Int64 }
    struct State: Sendable {
        var key: String, secret: String
        var deposits: [Deposit] = [], withdrawals: [Withdrawal] = []
        /// Coin → (free, locked).
        var balances: [String: (String, String)] = [:]
        /// Permission flags besides `enableReading` (all false unless set).
        var permissions: [String: Bool] = [:]
        var weights: [String: (used: Int, minute: Int64)] = [:]
        /// Each path's weight (the docs'; lower one to walk many windows without waiting).
        var costs = ["/api/v3/account": 20, "/sapi/v1/capital/withdraw/history": 18_000]
        var fail: StubRule?
    }

    let http: HTTPStub
    private let state: NIOLockedValueBox<State>

    init(key: String, secret: String) throws {
        let state = NIOLockedValueBox(State(key: key, secret: secret))
        self.state = state
        http = try HTTPStub { request in state.withLockedValue { Self.answer(request, &$0) } }
    }

    var url: String { http.baseURL }
    func update(_ change: (inout State) -> Void) { state.withLockedValue(change) }
    func failing(_ rule: StubRule?) { state.withLockedValue { $0.fail = rule } }

    static func error(_ status: Int, _ code: Int, _ message: String) -> HTTPStub.Response { .json(status, ["code": code, "msg": message]) }

    private static func answer(_ request: HTTPStub.Request, _ state: inout State) -> HTTPStub.Response {
        if let response = state.fail?(request) { return response }
        guard request.headers["x-mbx-apikey"] == state.key else { return error(401, -2015, "Invalid API-key, IP, or permissions for action.") }
        guard let cut = request.rawQuery.range(of: "&signature=", options: .backwards),
              request.rawQuery[cut.upperBound...] == hmac(String(request.rawQuery[..<cut.lowerBound]), state.secret) else {
            return error(400, -1022, "Signature for this request is not valid.")
        }
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let window = min(Int64(request.query["recvWindow"] ?? "") ?? 5_000, 60_000)
        guard let timestamp = Int64(request.query["timestamp"] ?? ""), timestamp < now + 1_000, now - timestamp <= window else {
            return error(400, -1021, "Timestamp for this request is outside of the recvWindow.")
        }
        let header = switch request.path {
        case "/api/v3/account": "X-MBX-USED-WEIGHT-1M"
        case "/sapi/v1/capital/withdraw/history": "X-SAPI-USED-UID-WEIGHT-1M"
        default: "X-SAPI-USED-IP-WEIGHT-1M"
        }
        let cost = state.costs[request.path] ?? 1
        let minute = now / 60_000
        let used = (state.weights[header].map { $0.minute == minute ? $0.used : 0 } ?? 0) + cost
        state.weights[header] = (used, minute)
        var response = route(request, state)
        response.headers.append((header, String(used)))
        return response
    }

    private static func route(_ request: HTTPStub.Request, _ state: State) -> HTTPStub.Response {
        let coin = request.query["coin"]
        let start = Int64(request.query["startTime"] ?? "") ?? 0, end = Int64(request.query["endTime"] ?? "") ?? Int64.max
        if request.path.contains("/capital/"), end != Int64.max, end - start >= 90 * 86_400_000 {
            return error(400, -1127, "More than 2160 hours between startTime and endTime.")
        }
        let offset = Int(request.query["offset"] ?? "") ?? 0, limit = min(Int(request.query["limit"] ?? "") ?? 1_000, 1_000)
        func page(_ items: [[String: Any]]) -> HTTPStub.Response { .json(200, Array(items.dropFirst(offset).prefix(limit))) }
        switch request.path {
        case "/sapi/v1/account/apiRestrictions":
            var flags: [String: Any] = ["ipRestrict": false, "createTime": 1_698_645_219_000, "enableReading": true]
            for name in ["enableWithdrawals", "enableInternalTransfer", "enableMargin", "enableFutures", "permitsUniversalTransfer",
                         "enableVanillaOptions", "enableSpotAndMarginTrading"] { flags[name] = state.permissions[name] ?? false }
            return .json(200, flags)
        case "/api/v3/account":
            let omit = request.query["omitZeroBalances"] == "true"
            let balances = state.balances.sorted { $0.key < $1.key }
                .filter { !omit || Decimal(string: $0.value.0)! + Decimal(string: $0.value.1)! != 0 }
                .map { ["asset": $0.key, "free": $0.value.0, "locked": $0.value.1] }
            return .json(200, ["accountType": "SPOT", "canTrade": true, "balances": balances, "permissions": ["SPOT"]])
        case "/sapi/v1/capital/deposit/hisrec":
            return page(state.deposits.filter { (coin == nil || $0.coin == coin) && (start...end).contains($0.insertTime) }
                .sorted { $0.insertTime > $1.insertTime }.map {
                    ["id": $0.id, "amount": $0.amount, "coin": $0.coin, "network": $0.coin, "status": $0.status, "insertTime": $0.insertTime,
                     "txId": "tx" + $0.id, "transferType": 0, "confirmTimes": "1/1", "walletType": 0]
                })
        case "/sapi/v1/capital/withdraw/history":
            return page(state.withdrawals.filter { (coin == nil || $0.coin == coin) && (start...end).contains($0.applyTime) }
                .sorted { $0.applyTime > $1.applyTime }.map {
                    ["id": $0.id, "amount": $0.amount, "transactionFee": $0.fee, "coin": $0.coin, "status": $0.status,
                     "applyTime": utc($0.applyTime), "network": $0.coin, "transferType": 0, "walletType": 0]
                })
        default:
            return error(404, -1000, "not found")
        }
    }

    static func hmac(_ payload: String, _ secret: String) -> String {
        HMAC<SHA256>.authenticationCode(for: Data(payload.utf8), using: SymmetricKey(data: Data(secret.utf8))).map { String(format: "%02x", $0) }.joined()
    }

    /// `yyyy-MM-dd HH:mm:ss` in UTC, as `applyTime` is written.
    static func utc(_ milliseconds: Int64) -> String {
        String(ISO8601DateFormatter().string(from: Date(timeIntervalSince1970: TimeInterval(milliseconds / 1000))).dropLast().replacingOccurrences(of: "T", with: " "))
    }
}

/// The Coinbase App API (v2) with a CDP key (https://docs.cdp.coinbase.com/coinbase-app/track-apis/accounts,
/// .../transactions, .../api-architecture/pagination; the JWT of
/// https://docs.cdp.coinbase.com/coinbase-app/authentication-authorization/api-key-authentication):
/// each request's `Authorization: Bearer` JWT must be ES256 under the key's public half, name
/// the key (`kid`, `sub`), say `iss` "cdp", be within its `nbf`..`exp` (two minutes at most), and
/// carry `uri` "GET HOST:PORT/PATH" for this request (401 `authentication_error` otherwise).
/// Lists page by `limit` (at most 100) and `starting_after`, newest first, with `next_uri`.
final class CoinbaseStub: Sendable {
    struct Transaction: Sendable { var id: String, type: String, status: String, amount: String, createdAt: String }
    struct Account: Sendable {
        var id: String, currency: String, balance: String
        /// Newest first.
        var transactions: [Transaction] = []
    }
    struct State: Sendable {
        var keyName: String, publicKey: P256.Signing.PublicKey
        var accounts: [Account] = []
        var canTrade = false, canTransfer = false
        var fail: StubRule?
    }

    let http: HTTPStub
    private let state: NIOLockedValueBox<State>

    init(keyName: String, publicKey: P256.Signing.PublicKey) throws {
        let state = NIOLockedValueBox(State(keyName: keyName, publicKey: publicKey))
        self.state = state
        http = try HTTPStub { request in Self.answer(request, state.withLockedValue { $0 }) }
    }

    var url: String { http.baseURL }
    func update(_ change: (inout State) -> Void) { state.withLockedValue(change) }
    func failing(_ rule: StubRule?) { state.withLockedValue { $0.fail = rule } }

    static func error(_ status: Int, _ id: String, _ message: String) -> HTTPStub.Response {
        .json(status, ["errors": [["id": id, "message": message]]])
    }

    private static func answer(_ request: HTTPStub.Request, _ state: State) -> HTTPStub.Response {
        if let response = state.fail?(request) { return response }
        if let refusal = verify(request, state) { return error(401, "authentication_error", refusal) }
        let parts = request.path.split(separator: "/").map(String.init)
        func list(_ items: [[String: Any]], _ path: String) -> HTTPStub.Response {
            let limit = min(max(Int(request.query["limit"] ?? "") ?? 25, 1), 100)
            let after = request.query["starting_after"].flatMap { id in items.firstIndex { $0["id"] as? String == id } }.map { $0 + 1 } ?? 0
            let page = Array(items.dropFirst(after).prefix(limit))
            let more = after + page.count < items.count
            let next: Any = more ? "\(path)?limit=\(limit)&starting_after=\(page.last?["id"] as? String ?? "")" : NSNull()
            return .json(200, ["pagination": ["limit": limit, "order": "desc", "next_uri": next], "data": page])
        }
        func account(_ account: Account) -> [String: Any] {
            ["id": account.id, "name": "\(account.currency) Wallet", "type": "wallet", "resource": "account",
             "currency": ["code": account.currency, "name": account.currency, "exponent": 8, "type": "crypto"],
             "balance": ["amount": account.balance, "currency": account.currency], "resource_path": "/v2/accounts/\(account.id)"]
        }
        switch (parts.count, parts.first) {
        case (4, "api") where request.path == "/api/v3/brokerage/key_permissions":
            return .json(200, ["can_view": true, "can_trade": state.canTrade, "can_transfer": state.canTransfer,
                               "portfolio_uuid": "1b1f3b2c-7c1f-4f3e-9e55-2f2b6c8a9d10", "portfolio_type": "DEFAULT"])
        case (2, "v2") where parts[1] == "accounts":
            return list(state.accounts.map(account), "/v2/accounts")
        case (3, "v2"), (4, "v2"):
            guard parts[1] == "accounts", let found = state.accounts.first(where: { $0.id == parts[2] }) else { return error(404, "not_found", "Not found") }
            if parts.count == 3 { return .json(200, ["data": account(found)]) }
            guard parts[3] == "transactions" else { return error(404, "not_found", "Not found") }
            return list(found.transactions.map {
                ["id": $0.id, "type": $0.type, "status": $0.status, "amount": ["amount": $0.amount, "currency": found.currency],
                 "created_at": $0.createdAt, "resource": "transaction"]
            }, "/v2/accounts/\(found.id)/transactions")
        default:
            return error(404, "not_found", "Not found")
        }
    }

    /// Why the request's JWT is refused, or nil.
    static func verify(_ request: HTTPStub.Request, _ state: State) -> String? {
        guard let bearer = request.headers["authorization"], bearer.hasPrefix("Bearer ") else { return "no bearer token" }
        let parts = bearer.dropFirst(7).split(separator: ".", omittingEmptySubsequences: false).map(String.init)
        func decoded(_ text: String) -> Data? {
            var text = text.replacingOccurrences(of: "-", with: "+").replacingOccurrences(of: "_", with: "/")
            while text.count % 4 != 0 { text += "=" }
            return Data(base64Encoded: text)
        }
        guard parts.count == 3, let header = decoded(parts[0]).flatMap({ try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }),
              let claims = decoded(parts[1]).flatMap({ try? JSONSerialization.jsonObject(with: $0) as? [String: Any] }),
              let raw = decoded(parts[2]), let signature = try? P256.Signing.ECDSASignature(rawRepresentation: raw) else { return "not a JWT" }
        guard state.publicKey.isValidSignature(signature, for: Data((parts[0] + "." + parts[1]).utf8)) else { return "invalid signature" }
        let now = Int(Date().timeIntervalSince1970)
        guard header["alg"] as? String == "ES256", header["kid"] as? String == state.keyName, claims["sub"] as? String == state.keyName,
              claims["iss"] as? String == "cdp" else { return "not this key" }
        guard let nbf = claims["nbf"] as? Int, let exp = claims["exp"] as? Int, nbf <= now + 5, now < exp, exp - nbf <= 120 else { return "expired" }
        guard claims["uri"] as? String == "\(request.method) \(request.headers["host"] ?? "")\(request.path)" else { return "wrong uri" }
        return nil
    }
}
