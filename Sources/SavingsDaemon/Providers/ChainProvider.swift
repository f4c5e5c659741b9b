import Foundation
import SavingsCore
import SavingsRPC

/// What a block explorer lists for a watched set: every transaction id, newest first (the
/// mempool's first), the confirmed balance and the chain's height.
struct ChainListing: Sendable {
    var txids: [String] = []
    var unconfirmed: Set<String> = []
    /// The provider's confirmed balance of the set, in asset units.
    var balance: Decimal = 0
    var height: Int?
    /// Set when the listing stopped at history long settled and already stored: it lists
    /// everything confirmed after this block time, and nothing is known of what is older.
    var settledBefore: Date?
}

/// One page of transactions with what they did to the set.
struct ChainPage: Sendable {
    var transactions: [ChainTransaction]
    /// 1-based; `pages` is how many the walk has.
    var page: Int
    var pages: Int
    /// How many transactions the walked history holds (pages shift when it grows).
    var total: Int
}

/// One sync's conversation with a provider about one watch. A session may keep what it read
/// for the listing to answer the details from (Esplora reads whole transactions either way).
protocol ChainSession: Sendable {
    /// The provider's name (`blockbook`, `esplora`).
    var provider: String { get }
    /// Whether the details can be walked before or beside the listing (Blockbook); Esplora
    /// answers the details from what its listing read.
    var walksWithoutListing: Bool { get }
    /// Lists the set's transactions; `stored` (the txids savingsd holds from earlier syncs) lets
    /// a provider without a cheap listing stop where the history is settled and known.
    func listing(stored: Set<String>) async throws -> ChainListing
    /// Walks the transactions with details, newest first, from page `from`; `body` gets each
    /// page and says whether to go on. With `readAhead` the next page is fetched while `body`
    /// stores the current one (a long walk); without, nothing is asked that may not be needed.
    func details(from page: Int, readAhead: Bool, _ body: @Sendable (ChainPage) async throws -> Bool) async throws
}

/// A chain's provider as the configuration names it (`[onchain.CHAIN]`).
struct ChainProviderConfig: Sendable, Equatable {
    enum Kind: String, Sendable, CaseIterable {
        case blockbook
        case esplora
    }

    var kind: Kind
    /// Base URL without a trailing slash (Blockbook: the host; Esplora: the API root, e.g. `…/api`).
    var url: String
    /// `http://host:port` or `socks5://host:port`.
    var proxy: String?

    func session(_ target: WatchTarget, http: ProviderHTTP) -> any ChainSession {
        switch kind {
        case .blockbook: BlockbookSession(base: url, target: target, http: http)
        case .esplora: EsploraSession(base: url, target: target, http: http)
        }
    }
}

/// Shared reading of provider JSON.
enum ChainJSON {
    static func parse(_ bytes: [UInt8], what: String) throws -> JSONValue {
        do {
            return try JSONParser.parse(bytes)
        } catch {
            throw ProviderFailure("the \(what) answer is not JSON")
        }
    }

    /// An amount in the smallest unit, as a string (Blockbook) or a JSON number (Esplora).
    static func units(_ value: JSONValue?, what: String) throws -> String {
        switch value?.unwrapped {
        case .string(let text)?: return text
        case .number(let literal)?: return literal
        case nil, .null?: return "0"
        default: throw ProviderFailure("\(what) is not an amount")
        }
    }

    static func amount(_ value: JSONValue?, decimals: Int, what: String) throws -> Decimal {
        let digits = try units(value, what: what)
        do {
            return try SmallestUnit.amount(digits, decimals: decimals)
        } catch {
            throw ProviderFailure("\(what) '\(digits.prefix(50))' is not an amount in the smallest unit")
        }
    }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}
