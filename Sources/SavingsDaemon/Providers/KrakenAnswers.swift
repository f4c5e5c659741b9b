import Foundation
import SavingsCore
import SavingsRPC

/// Kraken's private REST API as a linked account reads it (issue 50): a signed request, and
/// the answers of `Balance` and `Ledgers`, read as hostile input. Every shape here is from
/// Kraken's documentation: https://docs.kraken.com/api/docs/guides/spot-rest-auth (signing),
/// https://docs.kraken.com/api/docs/rest-api/get-account-balance and
/// https://docs.kraken.com/api/docs/rest-api/get-ledgers (50 entries a page, the newest first,
/// `ofs` to page, `count` the total), and the error strings of
/// https://support.kraken.com/hc/en-us/articles/360001491786-API-error-messages.
public enum KrakenAnswers {
    /// A request to a private endpoint: its form body (the nonce first) and its headers.
    static func request(path: String, parameters: [(String, String)], nonce: UInt64, key: String,
                        secret: String) throws(ServiceSigning.Failure) -> (body: String, headers: [(String, String)]) {
        let form = ([("nonce", String(nonce))] + parameters)
            .map { "\(formEscape($0.0))=\(formEscape($0.1))" }.joined(separator: "&")
        let signature = try ServiceSigning.kraken(path: path, nonce: String(nonce), body: form, secret: secret)
        return (form, [("API-Key", key), ("API-Sign", signature), ("Content-Type", "application/x-www-form-urlencoded")])
    }

    /// application/x-www-form-urlencoded: unreserved ASCII as it is, every other byte as %XX.
    static func formEscape(_ text: String) -> String {
        let hex = Array("0123456789ABCDEF".utf8)
        var escaped: [UInt8] = []
        escaped.reserveCapacity(text.utf8.count)
        for byte in text.utf8 {
            switch byte {
            case 0x30...0x39, 0x41...0x5A, 0x61...0x7A, 0x2D, 0x2E, 0x5F, 0x7E: escaped.append(byte)
            default: escaped += [0x25, hex[Int(byte >> 4)], hex[Int(byte & 0x0F)]]
            }
        }
        return String(decoding: escaped, as: UTF8.self)
    }

    /// Why Kraken refused, by its error strings (`error` is a list of `<E|W>Category:message`).
    enum Refusal: Equatable {
        case invalidKey, invalidSignature, invalidNonce, permissionDenied, rateLimited, lockout, unavailable, other(String)

        init(_ text: String) {
            switch text {
            case _ where text.hasPrefix("EAPI:Invalid key"): self = .invalidKey
            case _ where text.hasPrefix("EAPI:Invalid signature"): self = .invalidSignature
            case _ where text.hasPrefix("EAPI:Invalid nonce"): self = .invalidNonce
            case _ where text.hasPrefix("EGeneral:Permission denied"): self = .permissionDenied
            case _ where text.hasPrefix("EAPI:Rate limit exceeded"), _ where text.hasPrefix("EService:Throttled"): self = .rateLimited
            case _ where text.hasPrefix("EGeneral:Temporary lockout"): self = .lockout
            case _ where text.hasPrefix("EService:Unavailable"), _ where text.hasPrefix("EService:Busy"): self = .unavailable
            default: self = .other(String(text.prefix(120)))
            }
        }

        /// What the person reads, and whether waiting helps (a retry after that long).
        var failure: ProviderFailure {
            switch self {
            case .invalidKey: ProviderFailure("Kraken does not know the API key: check the key in the credential")
            case .invalidSignature: ProviderFailure("Kraken refused the signature: the private key in the credential does not belong to the API key")
            case .invalidNonce: ProviderFailure("Kraken refused the nonce: the API key is used elsewhere too (another program, or another savingsd): give savingsd a key of its own", retryAfter: 60)
            case .permissionDenied: ProviderFailure("the API key may not read this: give it Query Funds and Query Ledger Entries")
            case .rateLimited: ProviderFailure("Kraken's rate limit was reached", retryAfter: 60)
            case .lockout: ProviderFailure("Kraken locked the key out after failed calls (about 15 minutes)", retryAfter: 900)
            case .unavailable: ProviderFailure("Kraken is unavailable", retryAfter: 60)
            case .other(let text): ProviderFailure("Kraken answered: \(text)")
            }
        }
    }

    /// The largest answer read (a page of 50 entries is a few KiB).
    public static let maxAnswerBytes = 4 << 20

    /// An answer's bytes as JSON, bounded first.
    static func json(_ bytes: [UInt8], what: String) throws -> JSONValue {
        guard bytes.count <= maxAnswerBytes else { throw ProviderFailure("Kraken's \(what) answer is larger than 4 MiB") }
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw ProviderFailure("Kraken's \(what) answer is not JSON")
        }
    }

    /// A `Ledgers` answer as it came: its entries' ids and nets, newest first, and the count
    /// (what a sync stores, and what the fuzz target checks).
    public static func ledgerPage(_ bytes: [UInt8]) throws -> (entries: [(id: String, asset: String, net: Decimal, date: Date)], count: Int) {
        let page = try ledgers(try json(bytes, what: "Ledgers"))
        return (page.entries.map { ($0.id, $0.asset, $0.net, $0.date) }, page.count)
    }

    /// A `Balance` answer as it came.
    public static func balancePage(_ bytes: [UInt8]) throws -> [String: Decimal] {
        try balances(try json(bytes, what: "Balance"))
    }

    /// The envelope `{"error": [...], "result": ...}`: the result, or the first error as a failure.
    static func result(_ answer: JSONValue, what: String) throws -> JSONValue {
        guard case .object = answer else { throw ProviderFailure("Kraken's \(what) answer is not a JSON object") }
        if let errors = answer["error"]?.arrayValue, let first = errors.first?.stringValue {
            throw Refusal(first).failure
        }
        guard let result = answer["result"], case .object = result else { throw ProviderFailure("Kraken's \(what) answer has no result") }
        return result
    }

    /// `Balance`: each asset code's balance, exact.
    static func balances(_ answer: JSONValue) throws -> [String: Decimal] {
        var balances: [String: Decimal] = [:]
        for (code, value) in try result(answer, what: "Balance").objectValue ?? [:] {
            guard validCode(code), let text = value.stringValue, let amount = try? Amount.parse(text) else {
                throw ProviderFailure("Kraken's Balance answer has a balance that is not a decimal")
            }
            balances[code] = amount
        }
        return balances
    }

    /// One ledger entry, as stored: its id (the row's external_id), when, the asset's code, and
    /// what it moved (the amount less the fee, which is paid whatever its sign).
    struct Entry: Equatable {
        var id: String
        var referenceID: String
        var date: Date
        var type: String
        var asset: String
        var amount: Decimal
        var fee: Decimal
        var balance: Decimal?

        var net: Decimal { amount - abs(fee) }
    }

    /// The most entries one page may hold (Kraken sends 50).
    public static let maxPage = 1_000

    /// `Ledgers`: a page of entries and the total `count` the filter matches.
    static func ledgers(_ answer: JSONValue) throws -> (entries: [Entry], count: Int) {
        let result = try result(answer, what: "Ledgers")
        guard let count = result["count"]?.intValue, (0...10_000_000).contains(count) else {
            throw ProviderFailure("Kraken's Ledgers answer has no count")
        }
        let ledger = result["ledger"]?.objectValue ?? [:]
        guard ledger.count <= maxPage else { throw ProviderFailure("Kraken's Ledgers page holds more than \(maxPage) entries") }
        var entries: [Entry] = []
        for (id, item) in ledger {
            guard validID(id) else { throw ProviderFailure("a Kraken ledger id is not an id") }
            guard let asset = item["asset"]?.stringValue, validCode(asset),
                  let amount = item["amount"]?.stringValue.flatMap({ try? Amount.parse($0) }),
                  let fee = item["fee"]?.stringValue.flatMap({ try? Amount.parse($0) }),
                  let time = item["time"].flatMap(Self.time) else {
                throw ProviderFailure("the Kraken ledger entry \(id) lacks its asset, amount, fee or time")
            }
            let balance = item["balance"]?.stringValue.flatMap { $0.isEmpty ? nil : try? Amount.parse($0) }
            entries.append(Entry(id: id, referenceID: String((item["refid"]?.stringValue ?? "").prefix(64)), date: time,
                                 type: String((item["type"]?.stringValue ?? "").prefix(32)), asset: asset, amount: amount, fee: fee,
                                 balance: balance))
        }
        // Newest first, as Kraken lists them; the same instant in id order, so a page reads the same each time.
        entries.sort { ($0.date, $0.id) > ($1.date, $1.id) }
        return (entries, count)
    }

    /// A ledger time: Unix seconds with a fraction (1688464484.1787), kept to the millisecond.
    static func time(_ value: JSONValue) -> Date? {
        let number: String? = if case .number(let text) = value { text } else { value.stringValue }
        guard let text = number, let seconds = try? Amount.parse(text),
              seconds >= 0, seconds < 32_503_680_000 else { return nil }
        var milliseconds = seconds * 1000
        var rounded = Decimal()
        NSDecimalRound(&rounded, &milliseconds, 0, .down)
        return Timestamp.date(milliseconds: NSDecimalNumber(decimal: rounded).int64Value)
    }

    /// Kraken's ledger ids: letters, digits and dashes (`L4UESK-KG3EQ-UFO4T5`).
    static func validID(_ id: String) -> Bool {
        (1...64).contains(id.utf8.count) && id.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2D }
    }

    /// Asset codes (`XXBT`, `ZEUR`, `ETH2.S`, `USD.M`).
    static func validCode(_ code: String) -> Bool {
        (1...16).contains(code.utf8.count) && code.utf8.allSatisfy { (0x30...0x39).contains($0) || (0x41...0x5A).contains($0) || (0x61...0x7A).contains($0) || $0 == 0x2E }
    }
}
