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
    /// What a first sync needs of the listing while its walk reads every transaction itself:
    /// the balance and the height (by default, the whole listing).
    func summary() async throws -> ChainListing
    /// Walks the transactions with details, newest first, from page `from`; `body` gets each
    /// page and says whether to go on. With `readAhead` the next pages are fetched while `body`
    /// stores the current one (a long walk), and those already read when it is done come to
    /// `body` together, as one page numbered as the last (one store instead of several);
    /// without, nothing is asked that may not be needed.
    func details(from page: Int, readAhead: Bool, _ body: @Sendable (ChainPage) async throws -> Bool) async throws
}

extension ChainSession {
    func summary() async throws -> ChainListing { try await listing(stored: []) }
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

    func session(_ target: WatchTarget, http: ProviderHTTP, maxTransactions: Int = ChainJSON.maxTransactions) -> any ChainSession {
        switch kind {
        case .blockbook: BlockbookSession(base: url, target: target, http: http, maxTransactions: maxTransactions)
        case .esplora: EsploraSession(base: url, target: target, http: http, maxTransactions: maxTransactions)
        }
    }
}

/// Shared reading of provider JSON. An explorer's answer is hostile input: its size is capped
/// by `ProviderHTTP`, it is read on a thread of its own (`OffPool`), a long list in it is read
/// one element at a time (never one tree of the whole answer), and every figure it gives is
/// checked before it is believed.
enum ChainJSON {
    /// Most transactions one watch's history may have by default (`[onchain] max_transactions`):
    /// far beyond any personal wallet, and what bounds the pages walked and the memory a
    /// listing takes.
    static let maxTransactions = 200_000
    /// Largest single transaction in an answer (a transaction with thousands of inputs).
    static let maxTransactionBytes = 4 << 20

    /// An answer's top-level members, each parsed only when asked for.
    struct Object: Sendable {
        let bytes: [UInt8]
        let members: [String: Range<Int>]
        let what: String

        init(_ bytes: [UInt8], what: String) throws {
            guard let found = JSONParser.members(of: bytes) else { throw ProviderFailure("the \(what) answer is not a JSON object") }
            self.init(bytes, what: what, found)
        }

        /// The answer's top-level members, the objects of the list `key` holds read in the same
        /// pass: each handed to `body` as the `Members` `names` names (a page's transactions are
        /// stepped over once, not once to find the list and again to read it).
        init(_ bytes: [UInt8], what: String, reading key: String, named names: JSONParser.Names, _ body: (Members) throws -> Void) throws {
            let list = "\(key) in the \(what)"
            let found = try JSONParser.members(of: bytes, reading: key) { start in
                try Members.forEach(bytes, from: start, before: bytes.count, named: names, what: list, body)
            }
            guard let found else { throw ProviderFailure("the \(what) answer is not a JSON object") }
            self.init(bytes, what: what, found)
        }

        private init(_ bytes: [UInt8], what: String, _ found: [(key: String, value: Range<Int>)]) {
            self.bytes = bytes
            self.what = what
            members = Dictionary(found.map { ($0.key, $0.value) }, uniquingKeysWith: { first, _ in first })
        }

        subscript(_ key: String) -> JSONValue? {
            get throws {
                guard let range = members[key] else { return nil }
                do {
                    return try JSONParser.parse(bytes, in: range)
                } catch {
                    throw ProviderFailure("\(key) in the \(what) answer is not JSON")
                }
            }
        }

        /// The elements of the list `key` holds, each handed to `body` as it is parsed.
        func forEach(in key: String, keeping: Set<String>? = nil, _ body: (JSONValue) throws -> Void) throws {
            guard let range = members[key] else { return }
            try ChainJSON.forEach(in: bytes, range: range, what: "\(key) in the \(what)", keeping: keeping, body)
        }
    }

    /// Some of an object's members where they lie in the answer, each parsed only when asked
    /// for: a transaction of a page, its inputs and outputs, read without making a tree (or even
    /// a key) of what is not used (a page's hashes, scripts and sizes). A key given twice counts
    /// once, the first.
    struct Members {
        let bytes: [UInt8]
        let names: JSONParser.Names
        let values: [Range<Int>?]
        /// What the list is, for a message (made into text only for one: a page has thousands of
        /// inputs and outputs).
        let what: () -> String

        /// Reads each object of the list `bytes[range]` with the members `names` names.
        static func forEach(_ bytes: [UInt8], _ range: Range<Int>, named names: JSONParser.Names, what: @autoclosure @escaping () -> String,
                            _ body: (Members) throws -> Void) throws {
            _ = try forEach(bytes, from: range.lowerBound, before: range.upperBound, named: names, what: what(), body)
        }

        /// Reads each object of the list that starts at `start` (and ends before `end`), with the
        /// members `names` names; returns where the list ends.
        static func forEach(_ bytes: [UInt8], from start: Int, before end: Int, named names: JSONParser.Names,
                            what: @autoclosure @escaping () -> String, _ body: (Members) throws -> Void) throws -> Int {
            let read = try JSONParser.forEachObject(of: bytes, from: start, before: end, named: names) { element, values in
                guard element.count <= maxTransactionBytes else { throw ProviderFailure("an element of \(what()) answer is larger than \(maxTransactionBytes) bytes") }
                try body(Members(bytes: bytes, names: names, values: values, what: what))
            }
            guard let read else { throw ProviderFailure("\(what()) answer is not a JSON list of objects") }
            return read
        }

        /// The member `key` (one of the names read), parsed; nil when absent.
        subscript(_ key: String) -> JSONValue? {
            get throws {
                guard let slot = names.index(of: key) else {
                    assertionFailure("\(key) is not among the names read")
                    return nil
                }
                guard let range = values[slot] else { return nil }
                do {
                    return try JSONParser.parse(bytes, in: range)
                } catch {
                    throw ProviderFailure("\(key) in \(what()) answer is not JSON")
                }
            }
        }

        /// Each object of the list `key` holds (none when it is absent), with the members `names` names.
        func forEachObject(_ key: String, named names: JSONParser.Names, _ body: (Members) throws -> Void) throws {
            guard let slot = self.names.index(of: key), let range = values[slot] else { return }
            let what = what
            try Self.forEach(bytes, range, named: names, what: "\(key) in \(what())", body)
        }
    }

    /// Parses the elements of the list `bytes[range]` one at a time.
    /// With `keeping`, each element's objects hold only those members (`JSONParser.parse(_:in:keeping:)`).
    static func forEach(in bytes: [UInt8], range: Range<Int>? = nil, what: String, keeping: Set<String>? = nil,
                        _ body: (JSONValue) throws -> Void) throws {
        guard let elements = JSONParser.elements(of: bytes, in: range) else { throw ProviderFailure("\(what) answer is not a JSON list") }
        for element in elements {
            guard element.count <= maxTransactionBytes else { throw ProviderFailure("an element of \(what) answer is larger than \(maxTransactionBytes) bytes") }
            let value: JSONValue
            do {
                value = try keeping.map { try JSONParser.parse(bytes, in: element, keeping: $0) } ?? JSONParser.parse(bytes, in: element)
            } catch {
                throw ProviderFailure("\(what) answer is not JSON")
            }
            try body(value)
        }
    }

    /// A transaction id as the chain writes it: 64 hex digits (`0x` first on Ethereum). Anything
    /// else is refused: the id is stored, shown and put into later requests' URLs.
    static func txid(_ value: JSONValue?, chain: Chain) throws -> String {
        guard var text = value?.stringValue else { throw ProviderFailure("a transaction has no txid") }
        let prefix = chain == .ethereum ? 2 : 0
        // Checked on its bytes where they lie (a walk checks one for every transaction).
        let valid = text.withUTF8 { bytes in
            bytes.count == prefix + 64 && (prefix == 0 || (bytes[0] == UInt8(ascii: "0") && bytes[1] == UInt8(ascii: "x")))
                && bytes[prefix...].allSatisfy { ($0 >= 0x30 && $0 <= 0x39) || ($0 >= 0x61 && $0 <= 0x66) || ($0 >= 0x41 && $0 <= 0x46) }
        }
        guard valid else { throw ProviderFailure("a txid is not \(chain == .ethereum ? "0x and " : "")64 hex digits") }
        return text
    }

    /// A count the provider gives (transactions, pages, a height): a whole number in `range`.
    static func count(_ value: JSONValue?, _ what: String, in range: ClosedRange<Int>) throws -> Int? {
        guard let value, value != .null else { return nil }
        guard let number = value.intValue, range.contains(number) else {
            throw ProviderFailure("\(what) is not a whole number from \(range.lowerBound) to \(range.upperBound)")
        }
        return number
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

    /// `a + b`, refused when the sum cannot be held exactly (SPEC 10: nothing is rounded).
    static func sum(_ a: Decimal, _ b: Decimal, what: String) throws -> Decimal {
        guard let total = SmallestUnit.exactSum(a, b) else { throw ProviderFailure("\(what) has more digits than can be held exactly") }
        return total
    }

    static func percentEncoded(_ text: String) -> String {
        text.addingPercentEncoding(withAllowedCharacters: .alphanumerics) ?? text
    }
}

/// What one sync reads from a block explorer, without a socket: the fuzz targets `blockbook`
/// and `esplora` drive the sessions through this with answers of their own.
package enum ChainAnswers {
    /// What was read: the listing, and each page of the walk with its transactions.
    package struct Read: Sendable {
        package var txids: [String] = []
        package var unconfirmed: Set<String> = []
        package var balance: Decimal = 0
        package var height: Int?
        package var pages: [(page: Int, pages: Int, total: Int, transactions: [ChainTransaction])] = []
    }

    /// `provider`'s (`blockbook`, `esplora`) session for `target` at `base`, its answers given by
    /// `answers` (a function of the URL): the listing, then the details from the first page with
    /// pages read ahead, as a sync that stores nothing yet reads them. Throws what the session
    /// throws (the provider's failure).
    package static func read(provider: String, base: String, target: WatchTarget, maxTransactions: Int,
                             answers: @escaping @Sendable (String) async throws -> [UInt8]) async throws -> Read {
        guard let kind = ChainProviderConfig.Kind(rawValue: provider) else { throw ProviderFailure("no provider '\(provider)'") }
        let session = ChainProviderConfig(kind: kind, url: base).session(target, http: ProviderHTTP(answers: answers), maxTransactions: maxTransactions)
        let listing = try await session.listing(stored: [])
        let pages = PageBox()
        try await session.details(from: 1, readAhead: true) { page in
            pages.add((page.page, page.pages, page.total, page.transactions))
            return true
        }
        return Read(txids: listing.txids, unconfirmed: listing.unconfirmed, balance: listing.balance, height: listing.height, pages: pages.pages)
    }

    /// The pages handed to a `@Sendable` body, one after another.
    private final class PageBox: @unchecked Sendable {
        var pages: [(page: Int, pages: Int, total: Int, transactions: [ChainTransaction])] = []
        func add(_ page: (page: Int, pages: Int, total: Int, transactions: [ChainTransaction])) { pages.append(page) }
    }
}
