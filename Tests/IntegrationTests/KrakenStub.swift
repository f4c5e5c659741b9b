import Crypto
import Foundation
import NIOConcurrencyHelpers

/// A loopback Kraken private REST API, as its documentation describes it:
/// - authentication (https://docs.kraken.com/api/docs/guides/spot-rest-auth): `API-Key`, and
///   `API-Sign` = base64(HMAC-SHA512(base64-decoded secret, URI path + SHA256(nonce + POST
///   data))), checked here with that algorithm; a nonce not above the key's last is refused
///   with `EAPI:Invalid nonce`;
/// - `Balance` (https://docs.kraken.com/api/docs/rest-api/get-account-balance): asset code →
///   balance string;
/// - `Ledgers` (https://docs.kraken.com/api/docs/rest-api/get-ledgers): `asset`, `start`
///   (exclusive) and `end` (inclusive) as a Unix time or a ledger id, `ofs`; 50 entries a page,
///   newest first, keyed by ledger id, with `count`;
/// - `GetApiKeyInfo` (https://docs.kraken.com/api-reference/account-data/get-api-key-info):
///   the key's `permissions`;
/// - errors in the `{"error": ["EAPI:..."]}` envelope with HTTP 200.
final class KrakenStub: Sendable {
    struct Entry: Sendable {
        var id: String
        var refid: String
        /// Unix seconds with a fraction, as Kraken writes them.
        var time: String
        var type: String
        var asset: String
        var amount: String
        var fee: String
        /// Empty for a deposit listed before it is credited.
        var balance: String
    }

    struct State: Sendable {
        var entries: [Entry] = []
        var balances: [String: String] = [:]
        var permissions = ["query-funds", "query-ledger-entries"]
        var lastNonce: UInt64 = 0
        /// Calls still to be answered with this error (`EAPI:Rate limit exceeded`).
        var failNext: (count: Int, error: String)?
        var calls: [String] = []
        /// The `ofs` of every Ledgers call, in order.
        var offsets: [Int] = []
        /// A Ledgers page at this offset answers `EService:Unavailable`.
        var failAtOffset: Int?
        var pageSize = 50
    }

    let key: String
    let secret: String
    let state = NIOLockedValueBox(State())
    let http: HTTPStub

    init(key: String = "test-key-kraken", secret: String = Data((0..<64).map { UInt8(truncatingIfNeeded: $0 &* 7 &+ 3) }).base64EncodedString()) throws {
        self.key = key
        self.secret = secret
        let box = state
        let (key, secret) = (key, secret)
        http = try HTTPStub { request in KrakenStub.answer(request, key: key, secret: secret, state: box) }
    }

    var baseURL: String { http.baseURL }

    /// The credential file's text: the key, then the secret.
    var credential: String { "\(key)\n\(secret)\n" }

    func update(_ change: (inout State) -> Void) { state.withLockedValue(change) }
    var calls: [String] { state.withLockedValue(\.calls) }

    static func answer(_ request: HTTPStub.Request, key: String, secret: String, state: NIOLockedValueBox<State>) -> HTTPStub.Response {
        func error(_ text: String) -> HTTPStub.Response { .json(#"{"error":["\#(text)"]}"#) }
        guard request.method == "POST", request.path.hasPrefix("/0/private/") else { return HTTPStub.Response(status: 404, body: "") }
        let endpoint = String(request.path.dropFirst("/0/private/".count))
        guard request.headers["api-key"] == key else { return error("EAPI:Invalid key") }
        let form = Self.form(request.body)
        guard let nonceText = form["nonce"], let nonce = UInt64(nonceText) else { return error("EAPI:Invalid nonce") }
        // The documented signature, recomputed here from the bytes that arrived.
        var message = Data(request.path.utf8)
        message.append(contentsOf: SHA256.hash(data: Data((nonceText + request.body).utf8)))
        let expected = Data(HMAC<SHA512>.authenticationCode(for: message, using: SymmetricKey(data: Data(base64Encoded: secret)!)))
        guard request.headers["api-sign"] == expected.base64EncodedString() else { return error("EAPI:Invalid signature") }
        return state.withLockedValue { state in
            guard nonce > state.lastNonce else { return error("EAPI:Invalid nonce") }
            state.lastNonce = nonce
            state.calls.append(endpoint)
            if let failing = state.failNext, failing.count > 0 {
                state.failNext = failing.count > 1 ? (failing.count - 1, failing.error) : nil
                return error(failing.error)
            }
            switch endpoint {
            case "Balance":
                let items = state.balances.sorted { $0.key < $1.key }.map { #""\#($0.key)":"\#($0.value)""# }
                return .json(#"{"error":[],"result":{\#(items.joined(separator: ","))}}"#)
            case "GetApiKeyInfo":
                let permissions = state.permissions.map { "\"\($0)\"" }.joined(separator: ",")
                return .json(#"{"error":[],"result":{"apiKeyName":"savingsd","apiKey":"\#(key)","nonce":"\#(nonce)","nonceWindow":0,"permissions":[\#(permissions)],"iban":"AA00 TEST","validUntil":"0","queryFrom":"0","queryTo":"0","createdTime":"1772542900","modifiedTime":"1772543095","ipAllowlist":[],"lastUsed":"0"}}"#)
            case "Ledgers":
                let offset = Int(form["ofs"] ?? "0") ?? 0
                state.offsets.append(offset)
                if offset == state.failAtOffset { return error("EService:Unavailable") }
                return .json(ledgers(form, state: state))
            default:
                return error("EGeneral:Unknown method")
            }
        }
    }

    /// One page of the ledger: the filter, newest first, `ofs` on from there.
    static func ledgers(_ form: [String: String], state: State) -> String {
        func seconds(_ entry: Entry) -> Decimal { Decimal(string: entry.time) ?? 0 }
        var matching = state.entries.filter { item in form["asset"].map { $0 == "all" || $0.split(separator: ",").contains(Substring(item.asset)) } ?? true }
        matching.sort { (seconds($0), $0.id) > (seconds($1), $1.id) }
        // `end` inclusive and `start` exclusive: a ledger id stands for its entry's time.
        func bound(_ text: String?) -> Decimal? {
            guard let text else { return nil }
            if let entry = state.entries.first(where: { $0.id == text }) { return seconds(entry) }
            return Decimal(string: text)
        }
        if let end = bound(form["end"]) { matching = matching.filter { seconds($0) <= end } }
        if let start = bound(form["start"]) { matching = matching.filter { seconds($0) > start } }
        let offset = Int(form["ofs"] ?? "0") ?? 0
        let page = matching.dropFirst(offset).prefix(state.pageSize)
        let items = page.map { item in
            #""\#(item.id)":{"refid":"\#(item.refid)","time":\#(item.time),"type":"\#(item.type)","subtype":"","aclass":"currency","asset":"\#(item.asset)","amount":"\#(item.amount)","fee":"\#(item.fee)","balance":"\#(item.balance)"}"#
        }
        return #"{"error":[],"result":{"ledger":{\#(items.joined(separator: ","))},"count":\#(matching.count)}}"#
    }

    static func form(_ body: String) -> [String: String] {
        var fields: [String: String] = [:]
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { String($0).removingPercentEncoding ?? String($0) }
            if parts.count == 2 { fields[parts[0]] = parts[1] }
        }
        return fields
    }
}
