import Foundation
import SavingsCore
import SavingsRPC

/// Binance's signed REST API as a linked account reads it (issue 50): a signed query, and the
/// answers of the deposit and withdrawal histories, the spot account and the key's permissions,
/// read as hostile input. Every shape here is from Binance's documentation:
/// https://github.com/binance/binance-spot-api-docs/blob/master/rest-api.md (signed endpoints,
/// `recvWindow`, limits, `GET /api/v3/account`), .../errors.md (error codes),
/// https://developers.binance.com/docs/wallet/capital/deposite-history,
/// https://developers.binance.com/docs/wallet/capital/withdraw-history and
/// https://developers.binance.com/docs/wallet/account/api-key-permission.
///
/// These endpoints list deposits and withdrawals only: trades (spot, convert, earn) are in
/// other endpoints savingsd does not read, so a linked account that trades does not reconcile,
/// and the difference shows as such.
public enum BinanceAnswers {
    /// How long a signed request stays valid (at most 60 000 ms; the docs recommend 5 000 or
    /// less, 10 000 leaves room for a slow proxy).
    static let recvWindow = 10_000

    /// A signed query: the parameters, `recvWindow` and `timestamp`, then `signature` (HMAC-SHA256
    /// of everything before it) appended last, as the docs' example does.
    static func query(_ parameters: [(String, String)], timestamp: UInt64, secret: String) -> String {
        let payload = (parameters + [("recvWindow", String(recvWindow)), ("timestamp", String(timestamp))])
            .map { "\(ServiceText.escape($0.0))=\(ServiceText.escape($0.1))" }.joined(separator: "&")
        return payload + "&signature=" + ServiceSigning.binance(payload: payload, secret: secret)
    }

    /// The largest answer read (a page of 1 000 deposits is a few hundred KiB).
    public static let maxAnswerBytes = 4 << 20
    /// The most rows one page may hold (`limit` is at most 1 000).
    public static let maxPage = 1_000

    /// An answer's bytes as JSON, bounded first.
    static func json(_ bytes: [UInt8], what: String) throws -> JSONValue {
        guard bytes.count <= maxAnswerBytes else { throw ProviderFailure("Binance's \(what) answer is larger than 4 MiB") }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw ProviderFailure("Binance's \(what) answer is not JSON")
        }
    }

    /// Why a call failed, from its status and its `{"code": -1022, "msg": "..."}` body.
    static func failure(status: Int, body: [UInt8], what: String) -> ProviderFailure {
        if (500...599).contains(status) { return ProviderFailure("Binance answered HTTP \(status)", retryAfter: 60) }
        let answer = body.count <= 65_536 ? try? JSONParser.parse(body) : nil
        guard let code = answer?["code"]?.intValue else { return ProviderFailure("Binance answered HTTP \(status) to \(what)") }
        return refusal(code: code, message: answer?["msg"]?.stringValue)
    }

    /// Binance's error codes as what to do, and how long to wait where waiting helps.
    static func refusal(code: Int, message: String?) -> ProviderFailure {
        switch code {
        case -1021:
            return ProviderFailure("Binance refused the request's time: the machine's clock is off (more than 10 s from Binance's); set it with NTP")
        case -1022:
            return ProviderFailure("Binance refused the signature: the secret in the credential does not belong to the API key")
        case -2014:
            return ProviderFailure("Binance does not read the API key: check the key on the credential's first line")
        case -2015:
            return ProviderFailure("Binance refused the API key, this machine's IP address or the key's permissions: check the key, its IP restriction, and that it may read")
        case -2008:
            return ProviderFailure("Binance does not know the API key: check the key on the credential's first line")
        case -1002:
            return ProviderFailure("Binance says the key may not do this: give it Enable Reading")
        case -1003:
            return ProviderFailure("Binance's request weight limit was reached", retryAfter: 60)
        case -1000, -1001, -1006, -1007, -1008, -1016:
            return ProviderFailure("Binance is unavailable (\(code))", retryAfter: 60)
        default:
            return ProviderFailure("Binance answered \(code): \(ServiceText.sanitized(message, limit: 120) ?? "no message")")
        }
    }

    /// A deposit or a withdrawal as stored: the row's id (`deposit:` or `withdrawal:` then
    /// Binance's id), when it was made (the time the window is filtered by), its coin, and what
    /// it moved net of the fee.
    struct Movement: Equatable {
        var id: String
        var date: Date
        var coin: String
        var net: Decimal
        var status: Int
    }

    /// Deposit statuses that are in the balance: 1 success, and 6 credited but not yet
    /// withdrawable (the docs: 0 pending, 6 credited but cannot withdraw, 7 wrong deposit,
    /// 8 waiting user confirm, 1 success, 2 rejected).
    static let creditedDeposits: Set<Int> = [1, 6]
    /// The withdrawal status of one that left (0 email sent, 2 awaiting approval, 3 rejected,
    /// 4 processing, 6 completed; 1 cancelled and 5 failure in older lists).
    static let completedWithdrawal = 6

    /// `GET /sapi/v1/capital/deposit/hisrec`: every deposit of the page (any status), the
    /// amount positive. Its id is Binance's `id`, or, for an old deposit without one, its `txId`.
    static func deposits(_ answer: JSONValue) throws -> [Movement] {
        try list(answer, what: "deposit history").map { item in
            // An internal transfer's txId has spaces ("Internal transfer 51376627901"): they become `_`.
            let txID = ServiceText.token(item["txId"].flatMap { $0.stringValue.map { .string($0.replacingOccurrences(of: " ", with: "_")) } },
                                         limit: 120)
            guard let id = ServiceText.id(item["id"]) ?? txID.map({ "tx:" + $0 }) else { throw ProviderFailure("a Binance deposit has no id") }
            guard let coin = code(item["coin"]), let amount = ServiceText.decimal(item["amount"]), amount >= 0,
                  let status = item["status"]?.intValue, let date = ServiceText.milliseconds(item["insertTime"]) else {
                throw ProviderFailure("the Binance deposit \(id) lacks its coin, amount, status or time")
            }
            return Movement(id: "deposit:" + id, date: date, coin: coin, net: amount, status: status)
        }
    }

    /// `GET /sapi/v1/capital/withdraw/history`: every withdrawal of the page, negative: what
    /// left is the amount and the fee (`transactionFee`), which is paid on top.
    static func withdrawals(_ answer: JSONValue) throws -> [Movement] {
        try list(answer, what: "withdrawal history").map { item in
            guard let id = ServiceText.id(item["id"]) else { throw ProviderFailure("a Binance withdrawal has no id") }
            let fee: Decimal? = item["transactionFee"] == nil ? 0 : ServiceText.decimal(item["transactionFee"])
            guard let coin = code(item["coin"]), let amount = ServiceText.decimal(item["amount"]), amount >= 0, let fee,
                  let status = item["status"]?.intValue, let date = ServiceText.utcDateTime(item["applyTime"]) else {
                throw ProviderFailure("the Binance withdrawal \(id) lacks its coin, amount, fee, status or time")
            }
            return Movement(id: "withdrawal:" + id, date: date, coin: coin, net: -(amount + abs(fee)), status: status)
        }
    }

    /// A history answer: a JSON array of at most `maxPage` objects.
    private static func list(_ answer: JSONValue, what: String) throws -> [JSONValue] {
        guard let items = answer.arrayValue else { throw ProviderFailure("Binance's \(what) answer is not a list") }
        guard items.count <= maxPage else { throw ProviderFailure("Binance's \(what) page holds more than \(maxPage) entries") }
        guard items.allSatisfy({ $0.objectValue != nil }) else { throw ProviderFailure("Binance's \(what) lists something that is not an entry") }
        return items
    }

    /// The movements that are in the balance, as rows, for one coin.
    static func rows(_ movements: [Movement], coin: String) -> [LinkedRow] {
        movements.filter { $0.coin == coin }.compactMap { movement in
            let deposit = movement.id.hasPrefix("deposit:")
            guard deposit ? creditedDeposits.contains(movement.status) : movement.status == completedWithdrawal else { return nil }
            return LinkedRow(id: movement.id, date: movement.date, amount: movement.net,
                             note: deposit ? "Binance deposit (trades are not synced)" : "Binance withdrawal (trades are not synced)")
        }
    }

    /// `GET /api/v3/account`: the coin's balance, free and locked (0 when it is not listed, as
    /// `omitZeroBalances=true` leaves zeros out).
    static func balance(_ answer: JSONValue, coin: String) throws -> Decimal {
        guard let balances = answer["balances"]?.arrayValue else { throw ProviderFailure("Binance's account answer has no balances") }
        guard balances.count <= 10_000 else { throw ProviderFailure("Binance's account answer lists more than 10 000 balances") }
        var total: Decimal = 0
        for item in balances where item["asset"]?.stringValue == coin {
            guard let free = ServiceText.decimal(item["free"]), let locked = ServiceText.decimal(item["locked"]) else {
                throw ProviderFailure("Binance's \(coin) balance is not a decimal")
            }
            total += free + locked
        }
        return total
    }

    /// `GET /sapi/v1/account/apiRestrictions`: every permission beyond reading that is on
    /// (`enableWithdrawals`, `enableSpotAndMarginTrading`, `enableFutures`, `enableMargin`,
    /// `enableInternalTransfer`, `permitsUniversalTransfer`, `enableVanillaOptions`, ...). A
    /// flag the docs add later counts too, unless it only reads.
    static func powers(_ answer: JSONValue) throws -> [String] {
        guard let flags = answer.objectValue, flags["enableReading"] != nil else {
            throw ProviderFailure("Binance's key permission answer has no permissions")
        }
        let reading: Set<String> = ["enableReading", "enableFixReadOnly", "ipRestrict"]
        return flags.filter { name, value in
            value.boolValue == true && !reading.contains(name) && (name.hasPrefix("enable") || name.hasPrefix("permits"))
                && name.utf8.count <= 40 && name.utf8.allSatisfy { (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }
        }.map(\.key).sorted()
    }

    /// Coin codes: 1-20 letters and digits.
    static func code(_ value: JSONValue?) -> String? {
        guard let text = value?.stringValue, (1...20).contains(text.utf8.count),
              text.utf8.allSatisfy({ (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) }) else { return nil }
        return text
    }

    /// A history page as it came (what a sync stores, and what the fuzz target checks): the
    /// first byte of the fuzz input picks deposits or withdrawals.
    public static func historyPage(_ bytes: [UInt8], withdrawals: Bool) throws -> [(id: String, date: Date, net: Decimal)] {
        let answer = try json(bytes, what: "history")
        return try (withdrawals ? Self.withdrawals(answer) : deposits(answer)).map { ($0.id, $0.date, $0.net) }
    }

    /// An account answer as it came: the coin's balance.
    public static func balancePage(_ bytes: [UInt8], coin: String) throws -> Decimal {
        try balance(try json(bytes, what: "account"), coin: coin)
    }
}
