import Foundation
import NIOHTTP1
import SavingsCore
import SavingsRPC
import SavingsStore

/// A linked Binance account: one coin's deposits
/// (https://developers.binance.com/docs/wallet/capital/deposite-history) and withdrawals
/// (https://developers.binance.com/docs/wallet/capital/withdraw-history), its spot balance
/// (`GET /api/v3/account`, https://github.com/binance/binance-spot-api-docs/blob/master/rest-api.md),
/// and what the key may do (https://developers.binance.com/docs/wallet/account/api-key-permission).
/// Every call is a signed GET (`X-MBX-APIKEY`, `timestamp`, `recvWindow`, `signature` last),
/// paced by the weight Binance reports.
///
/// Trades are not in these endpoints: a coin bought or sold on Binance is not a row here, so
/// such an account does not reconcile, and the sync says so rather than guess.
struct BinanceSession: LinkedSession {
    let base: String
    /// The coin (`BTC`).
    let coin: String
    let key: String
    let secret: String
    let http: ProviderHTTP
    let weights: BinanceWeights

    /// Where a history read starts without a stored row: Binance opened in July 2017.
    static let opening = Date(timeIntervalSince1970: 1_498_867_200)
    /// The histories answer windows of less than 90 days (`startTime` to `endTime`, in ms).
    static let windowMilliseconds: Int64 = 90 * 86_400_000 - 1
    /// The weight of each call (the docs): the histories' deposit list 1 per IP, the withdrawal
    /// list 18 000 per account, the key's permissions 1 per IP, the account 20 per IP.
    static let depositCost = 1, withdrawalCost = 18_000, permissionCost = 1, accountCost = 20

    private func call<T: Sendable>(_ path: String, _ parameters: [(String, String)], cost: Int, _ limiter: BinanceWeights.Limiter,
                                   what: String, read: @escaping @Sendable (JSONValue) throws -> T) async throws -> T {
        try await weights.take(cost, limiter)
        let timestamp = UInt64(Date().timeIntervalSince1970 * 1000)
        let query = BinanceAnswers.query(parameters, timestamp: timestamp, secret: secret)
        let answer = try await http.send(.GET, base + path + "?" + query, headers: [("X-MBX-APIKEY", key)])
        await weights.record(answer.headers)
        guard answer.status == 200 else { throw BinanceAnswers.failure(status: answer.status, body: answer.body, what: what) }
        let body = answer.body
        return try await OffPool.run { try read(try BinanceAnswers.json(body, what: what)) }
    }

    func powers() async throws -> [String]? {
        try await call("/sapi/v1/account/apiRestrictions", [], cost: Self.permissionCost, .sapiIP, what: "key permission") {
            try BinanceAnswers.powers($0)
        }
    }

    func account() async throws -> (balance: Decimal, currency: String?) {
        let coin = coin
        let balance = try await call("/api/v3/account", [("omitZeroBalances", "true")], cost: Self.accountCost, .api, what: "account") {
            try BinanceAnswers.balance($0, coin: coin)
        }
        return (balance, coin)
    }

    /// Windows of 90 days from `since` (or Binance's opening) to the first page's time, each
    /// read as deposits then withdrawals, in pages of 1 000 by `offset`. A row is dated by the
    /// time the window is filtered by (a deposit's `insertTime`, a withdrawal's `applyTime`), so
    /// a row re-read later falls in the same window.
    func history(since: Date?, resume: String?, store: @escaping @Sendable ([LinkedRow], _ cursor: String?) async throws -> Void) async throws -> Set<String>? {
        var cursor = resume.flatMap(Cursor.init)
            ?? Cursor(start: Self.milliseconds(max(since ?? Self.opening, Self.opening)), end: Self.milliseconds(Date()), part: .deposits, offset: 0)
        var listed = Set<String>()
        let coin = coin
        while cursor.start <= cursor.end {
            let windowEnd = min(cursor.start + Self.windowMilliseconds, cursor.end)
            let parameters = [("coin", coin), ("startTime", String(cursor.start)), ("endTime", String(windowEnd)),
                              ("offset", String(cursor.offset)), ("limit", String(BinanceAnswers.maxPage))]
            let movements = switch cursor.part {
            case .deposits:
                try await call("/sapi/v1/capital/deposit/hisrec", parameters, cost: Self.depositCost, .sapiIP, what: "deposit history") {
                    try BinanceAnswers.deposits($0)
                }
            case .withdrawals:
                try await call("/sapi/v1/capital/withdraw/history", parameters, cost: Self.withdrawalCost, .sapiUID, what: "withdrawal history") {
                    try BinanceAnswers.withdrawals($0)
                }
            }
            let rows = BinanceAnswers.rows(movements, coin: coin)
            listed.formUnion(rows.map(\.id))
            cursor.advance(pageCount: movements.count, windowEnd: windowEnd)
            try await store(rows, cursor.start > cursor.end ? nil : cursor.text)
            guard cursor.offset <= 1_000_000, listed.count <= 10_000_000 else {
                throw ProviderFailure("Binance's history goes on beyond a million entries in 90 days")
            }
        }
        return resume == nil ? listed : nil
    }

    static func milliseconds(_ date: Date) -> Int64 { Int64((date.timeIntervalSince1970 * 1000).rounded(.down)) }

    /// Where a stopped read goes on: the window's start, the end of the whole read, which list
    /// of the window, and the offset in it.
    struct Cursor: Equatable {
        enum Part: String { case deposits = "d", withdrawals = "w" }

        var start: Int64
        var end: Int64
        var part: Part
        var offset: Int

        init(start: Int64, end: Int64, part: Part, offset: Int) {
            (self.start, self.end, self.part, self.offset) = (start, end, part, offset)
        }

        init?(_ text: String) {
            var fields: [String: String] = [:]
            for item in text.split(separator: ";") {
                let pair = item.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { return nil }
                fields[pair[0]] = pair[1]
            }
            guard let start = fields["start"].flatMap(Int64.init), let end = fields["end"].flatMap(Int64.init),
                  let part = fields["part"].flatMap(Part.init), let offset = fields["ofs"].flatMap(Int.init), offset >= 0 else { return nil }
            self.init(start: start, end: end, part: part, offset: offset)
        }

        var text: String { "start=\(start);end=\(end);part=\(part.rawValue);ofs=\(offset)" }

        /// After a page: the next page of a full one, else withdrawals after deposits, else the next window.
        mutating func advance(pageCount: Int, windowEnd: Int64) {
            if pageCount >= BinanceAnswers.maxPage {
                offset += pageCount
            } else if part == .deposits {
                (part, offset) = (.withdrawals, 0)
            } else {
                (start, part, offset) = (windowEnd + 1, .deposits, 0)
            }
        }
    }
}
