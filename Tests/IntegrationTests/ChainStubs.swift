import Foundation
import NIOConcurrencyHelpers

/// A Blockbook API v2 server on loopback, built from trezor/blockbook's `openapi.yaml`
/// (`/api/v2/xpub/{xpub}`, `/api/v2/address/{address}`, `/api/`): the `Address` schema (`page`,
/// `totalPages`, `itemsOnPage`, `address`, `balance`, `totalReceived`, `totalSent`,
/// `unconfirmedBalance`, `unconfirmedTxs`, `txs`, `txids` or `transactions`, `tokens`), `Tx`
/// (`txid`, `vin`/`vout` with `n`, `addresses`, `isAddress`, `isOwn`, `value`; `blockHash`,
/// `blockHeight` -1 when unconfirmed, `confirmations`, `blockTime`, `value`, `valueIn`, `fees`,
/// `tokenTransfers`, `ethereumSpecific`), amounts as integer strings in the smallest unit, the
/// mempool first and then newest blocks first, `pageSize` at most 1000 (this stub's own maximum
/// may be lower, to make pages). Errors are `{"error": "..."}` (`ErrorResponse`).
final class BlockbookStub: Sendable {
    struct Account: Sendable {
        /// Newest first: mempool transactions, then by height.
        var transactions: [[String: any Sendable]]
        var balance: String
        var tokens: [[String: any Sendable]] = []
    }

    typealias State = (accounts: [String: Account], height: Int, maxPageSize: Int, fail: (@Sendable (HTTPStub.Request) -> HTTPStub.Response?)?)
    let http: HTTPStub
    private let state: NIOLockedValueBox<State>

    init(height: Int, maxPageSize: Int = 1000) throws {
        let state = NIOLockedValueBox<State>(([:], height, maxPageSize, nil))
        self.state = state
        http = try HTTPStub { request in Self.answer(request, state.withLockedValue { $0 }) }
    }

    var url: String { http.baseURL }
    func set(_ key: String, _ account: Account) { state.withLockedValue { $0.accounts[key] = account } }
    func setHeight(_ height: Int) { state.withLockedValue { $0.height = height } }
    /// Answers chosen requests differently (an outage, a 429).
    func failing(_ rule: (@Sendable (HTTPStub.Request) -> HTTPStub.Response?)?) { state.withLockedValue { $0.fail = rule } }

    private static func answer(_ request: HTTPStub.Request, _ state: State) -> HTTPStub.Response {
        if let response = state.fail?(request) { return response }
        if request.path == "/api/" || request.path == "/api" {
            return json(["blockbook": ["coin": "Bitcoin", "bestHeight": state.height, "inSync": true],
                         "backend": ["chain": "main", "blocks": state.height]])
        }
        let prefixes = ["/api/v2/xpub/", "/api/v2/address/"]
        guard let prefix = prefixes.first(where: request.path.hasPrefix) else { return error(404, "not found") }
        let key = String(request.path.dropFirst(prefix.count)).removingPercentEncoding ?? ""
        guard let account = state.accounts[key] else { return error(400, "Invalid address, decoded address is of unknown format") }
        let pageSize = min(Int(request.query["pageSize"] ?? "") ?? 1000, 1000, state.maxPageSize)
        let details = request.query["details"] ?? "txids"
        var transactions = account.transactions
        if let contract = request.query["contract"]?.lowercased() {
            transactions = transactions.filter { tx in
                ((tx["tokenTransfers"] as? [[String: any Sendable]]) ?? []).contains { ($0["contract"] as? String)?.lowercased() == contract }
            }
        }
        let pages = max(1, (transactions.count + pageSize - 1) / pageSize)
        let page = min(max(Int(request.query["page"] ?? "") ?? 1, 1), pages)
        let slice = Array(transactions.dropFirst((page - 1) * pageSize).prefix(pageSize))
        let unconfirmed = transactions.filter { ($0["blockHeight"] as? Int) == -1 }.count
        var body: [String: any Sendable] = [
            "page": page, "totalPages": pages, "itemsOnPage": pageSize, "address": key, "balance": account.balance,
            "totalReceived": account.balance, "totalSent": "0", "unconfirmedBalance": "0", "unconfirmedTxs": unconfirmed,
            "txs": transactions.count,
        ]
        if !slice.isEmpty {
            if details == "txs" { body["transactions"] = slice } else { body["txids"] = slice.map { $0["txid"] as? String ?? "" } }
        }
        if key.hasPrefix("xpub") || key.hasPrefix("zpub") { body["usedTokens"] = 2 }
        if !account.tokens.isEmpty { body["tokens"] = account.tokens }
        return json(body)
    }

    static func json(_ object: Any) -> HTTPStub.Response {
        .json(String(decoding: try! JSONSerialization.data(withJSONObject: object), as: UTF8.self))
    }

    static func error(_ status: Int, _ message: String) -> HTTPStub.Response {
        HTTPStub.Response(status: status, headers: [("Content-Type", "application/json")], body: #"{"error":"\#(message)"}"#)
    }

    /// A Bitcoin transaction of an xpub account: `own` inputs and outputs are marked `isOwn`.
    static func bitcoin(_ txid: String, height: Int?, tip: Int, time: Int, inputs: [(value: Int, own: Bool)],
                        outputs: [(value: Int, own: Bool)]) -> [String: any Sendable] {
        let valueIn = inputs.reduce(0) { $0 + $1.value }, value = outputs.reduce(0) { $0 + $1.value }
        func part(_ index: Int, _ item: (value: Int, own: Bool), input: Bool) -> [String: any Sendable] {
            var part: [String: any Sendable] = ["n": index, "addresses": [item.own ? "bc1qown\(index)" : "bc1qother\(index)"], "isAddress": true,
                                                  "value": String(item.value)]
            if item.own { part["isOwn"] = true }
            if input { part["txid"] = String(repeating: "e", count: 64); part["vout"] = index; part["sequence"] = 4_294_967_293 } else {
                part["hex"] = "0014" + String(repeating: "ab", count: 20)
            }
            return part
        }
        var tx: [String: any Sendable] = [
            "txid": txid, "version": 2, "vin": inputs.enumerated().map { part($0.offset, $0.element, input: true) },
            "vout": outputs.enumerated().map { part($0.offset, $0.element, input: false) },
            "blockHeight": height ?? -1, "confirmations": height.map { tip - $0 + 1 } ?? 0, "blockTime": time,
            "size": 225, "vsize": 144, "value": String(value), "valueIn": String(valueIn), "fees": String(valueIn - value),
        ]
        if let height { tx["blockHash"] = String(format: "%064x", height) }
        return tx
    }
}

/// An Esplora server on loopback, built from Blockstream/esplora's `API.md`: `GET /address/:address`
/// (`address`, `chain_stats` and `mempool_stats` with `tx_count`, `funded_txo_count`,
/// `funded_txo_sum`, `spent_txo_count`, `spent_txo_sum`), `GET /address/:address/txs` (up to 50
/// mempool transactions plus the first 25 confirmed, newest first),
/// `GET /address/:address/txs/chain/:last_seen_txid` (25 per page), `GET /blocks/tip/height`
/// (plain text); transactions in the documented format (`txid`, `version`, `locktime`, `size`,
/// `weight`, `fee`, `vin[]` with `txid`, `vout`, `is_coinbase`, `prevout`, `sequence`, `vout[]`
/// with `scriptpubkey`, `scriptpubkey_type`, `scriptpubkey_address`, `value`, and `status` with
/// `confirmed`, `block_height`, `block_hash`, `block_time`), amounts in satoshis.
final class EsploraStub: Sendable {
    struct Transaction: Sendable {
        var txid: String
        /// nil: in the mempool.
        var height: Int?
        var time: Int
        var received: Int
        var spent: Int
        /// The address that receives or spends (nil: the stub's own address).
        var owner: String?
        /// A second output, back to another address of the same wallet (a send's change).
        var change: (address: String, value: Int)?

        init(txid: String, height: Int?, time: Int, received: Int, spent: Int, owner: String? = nil,
             change: (address: String, value: Int)? = nil) {
            (self.txid, self.height, self.time, self.received, self.spent, self.owner, self.change) =
                (txid, height, time, received, spent, owner, change)
        }

        func involves(_ address: String, default own: String) -> Bool { (owner ?? own) == address || change?.address == address }
    }

    typealias State = (transactions: [Transaction], tip: Int, fail: (@Sendable (HTTPStub.Request) -> HTTPStub.Response?)?)
    let http: HTTPStub
    let address: String
    private let state: NIOLockedValueBox<State>

    /// `address` is the default owner of transactions; the stub answers for any address (one
    /// without transactions has empty stats and history, as a fresh address of a wallet does).
    init(address: String, tip: Int) throws {
        let state = NIOLockedValueBox<State>(([], tip, nil))
        self.state = state
        self.address = address
        http = try HTTPStub { request in Self.answer(request, own: address, state.withLockedValue { $0 }) }
    }

    /// The API root as a provider URL (`…/api`, as blockstream.info and mempool.space serve it).
    var url: String { http.baseURL + "/api" }
    func set(_ transactions: [Transaction], tip: Int) { state.withLockedValue { $0.transactions = transactions; $0.tip = tip } }
    func failing(_ rule: (@Sendable (HTTPStub.Request) -> HTTPStub.Response?)?) { state.withLockedValue { $0.fail = rule } }

    private static func answer(_ request: HTTPStub.Request, own: String, _ state: State) -> HTTPStub.Response {
        if let response = state.fail?(request) { return response }
        let path = request.path.hasPrefix("/api") ? String(request.path.dropFirst(4)) : request.path
        if path == "/blocks/tip/height" { return HTTPStub.Response(status: 200, headers: [("Content-Type", "text/plain")], body: String(state.tip)) }
        let parts = path.split(separator: "/").map(String.init)
        guard parts.count >= 2, parts[0] == "address" else { return HTTPStub.Response(status: 404, body: "not found") }
        let address = parts[1]
        let mine = state.transactions.filter { $0.involves(address, default: own) }
        let confirmed = mine.filter { $0.height != nil }.sorted { $0.height! > $1.height! }
        let mempool = mine.filter { $0.height == nil }
        switch parts.dropFirst(2).first {
        case nil:
            func stats(_ list: [Transaction]) -> [String: Any] {
                let funded = list.map { ($0.owner ?? own) == address ? $0.received : ($0.change?.address == address ? $0.change!.value : 0) }
                let spent = list.map { ($0.owner ?? own) == address ? $0.spent : 0 }
                return ["tx_count": list.count, "funded_txo_count": funded.filter { $0 > 0 }.count, "funded_txo_sum": funded.reduce(0, +),
                        "spent_txo_count": spent.filter { $0 > 0 }.count, "spent_txo_sum": spent.reduce(0, +)]
            }
            return BlockbookStub.json(["address": address, "chain_stats": stats(confirmed), "mempool_stats": stats(mempool)])
        case "txs" where parts.count == 3:
            return BlockbookStub.json((mempool.prefix(50) + confirmed.prefix(25)).map { json($0, own: own) })
        case "txs" where parts.count >= 4 && parts[3] == "chain":
            let last = parts.count > 4 ? parts[4] : ""
            let after = last.isEmpty ? confirmed[...] : confirmed.drop { $0.txid != last }.dropFirst()
            return BlockbookStub.json(after.prefix(25).map { json($0, own: own) })
        default:
            return HTTPStub.Response(status: 400, body: "Invalid request")
        }
    }

    private static func json(_ tx: Transaction, own: String) -> [String: Any] {
        let other = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
        let address = tx.owner ?? own
        var vin: [[String: Any]] = [], vout: [[String: Any]] = []
        func output(_ to: String, _ value: Int) -> [String: Any] {
            ["scriptpubkey": "0014" + String(repeating: "cd", count: 20), "scriptpubkey_asm": "OP_0 OP_PUSHBYTES_20", "scriptpubkey_type": "v0_p2wpkh",
             "scriptpubkey_address": to, "value": value]
        }
        let fee = 500
        let change = tx.change?.value ?? 0
        if tx.spent > 0 {
            vin.append(["txid": String(repeating: "a", count: 64), "vout": 0, "is_coinbase": false, "prevout": output(address, tx.spent),
                        "scriptsig": "", "scriptsig_asm": "", "witness": ["30440220"], "sequence": 4_294_967_293])
            vout.append(output(other, tx.spent - fee - tx.received - change))
        } else {
            vin.append(["txid": String(repeating: "b", count: 64), "vout": 1, "is_coinbase": false, "prevout": output(other, tx.received + fee + 1000),
                        "scriptsig": "", "scriptsig_asm": "", "witness": ["30440220"], "sequence": 4_294_967_293])
            vout.append(output(other, 1000))
        }
        if tx.received > 0 { vout.append(output(address, tx.received)) }
        if let change = tx.change { vout.append(output(change.address, change.value)) }
        var status: [String: Any] = ["confirmed": tx.height != nil]
        if let height = tx.height {
            status["block_height"] = height
            status["block_hash"] = String(format: "%064x", height)
            status["block_time"] = tx.time
        }
        return ["txid": tx.txid, "version": 2, "locktime": 0, "size": 222, "weight": 561, "fee": fee, "vin": vin, "vout": vout, "status": status]
    }
}
