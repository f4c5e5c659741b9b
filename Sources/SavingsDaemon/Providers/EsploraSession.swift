import Foundation
import SavingsCore
import SavingsRPC

/// The Esplora REST API of electrs and mempool (Blockstream/esplora `API.md`). An extended key is
/// turned into its addresses here (`ExtendedPublicKey`, a gap limit of 20 on the receive and
/// change chains). Per address,
/// `GET /address/:address` (`chain_stats` with `funded_txo_sum` and `spent_txo_sum`),
/// `GET /address/:address/txs` (up to 50 mempool transactions and the first 25 confirmed, newest
/// first), then `GET /address/:address/txs/chain/:last_seen_txid` 25 at a time, and
/// `GET /blocks/tip/height`. Amounts are satoshis as JSON numbers; a transaction's inputs carry
/// their `prevout`, so the set's inputs are known from the transaction alone.
///
/// Esplora has no cheap listing: the session reads transactions once for the listing and
/// answers the details from what it read. An address's walk stops at a page whose confirmed
/// transactions are all stored already and all at least `settledDepth` blocks deep, so a re-sync
/// of a long history asks for its newest pages only; a reorganisation that deep does not happen.
final class EsploraSession: ChainSession {
    let base: String
    let target: WatchTarget
    let http: ProviderHTTP
    let provider = "esplora"
    let walksWithoutListing = false
    /// Esplora's confirmed page.
    static let chainPage = 25
    /// Transactions handed to the store at a time.
    static let pageSize = 1000
    /// Longest history walked for one address (a guard against a provider that never ends).
    static let maxPages = 40_000
    /// Blocks after which stored history is taken as settled (about a day of Bitcoin blocks).
    static let settledDepth = 144

    private let read = ReadState()

    init(base: String, target: WatchTarget, http: ProviderHTTP) {
        self.base = base
        self.target = target
        self.http = http
    }

    private final class ReadState: @unchecked Sendable {
        // Written by `listing` and read by `details`, one after the other in one sync.
        var transactions: [ChainTransaction] = []
        /// The watched set: the addresses given, or every address of a key scanned.
        var own: Set<String> = []
    }

    /// Unused addresses in a row after which a key's chain is taken to end (BIP 44's gap limit).
    static let gapLimit: UInt32 = 20
    /// Most addresses scanned on one of a key's chains.
    static let maxIndex: UInt32 = 100_000

    /// The addresses to walk with their stats: those given, or those of a key's receive and
    /// change chains that have transactions, found by scanning each chain until `gapLimit`
    /// unused addresses in a row.
    private func addresses() async throws -> (walk: [(address: String, stats: JSONValue)], own: Set<String>) {
        func stats(_ address: String) async throws -> JSONValue {
            let stats = try ChainJSON.parse(try await http.get("\(base)/address/\(address)"), what: "address")
            guard stats["chain_stats"] != nil else { throw ProviderFailure("the address answer has no chain_stats") }
            return stats
        }
        guard let xpub = target.xpub else {
            var walk: [(address: String, stats: JSONValue)] = []
            for address in target.addresses { walk.append((address, try await stats(address))) }
            return (walk, Set(target.addresses))
        }
        let account = try ExtendedPublicKey(xpub, chain: target.chain)
        var walk: [(address: String, stats: JSONValue)] = []
        var own = Set<String>()
        for change: UInt32 in [0, 1] {
            let branch = try account.child(change)
            var unused: UInt32 = 0, index: UInt32 = 0
            while unused < Self.gapLimit, index < Self.maxIndex {
                defer { index += 1 }
                guard let address = try? branch.child(index).address else { continue }
                own.insert(address)
                let found = try await stats(address)
                let count = (found["chain_stats"]?["tx_count"]?.intValue ?? 0) + (found["mempool_stats"]?["tx_count"]?.intValue ?? 0)
                if count > 0 {
                    walk.append((address, found))
                    unused = 0
                } else {
                    unused += 1
                }
            }
        }
        return (walk, own)
    }

    func listing(stored: Set<String>) async throws -> ChainListing {
        guard let tip = Int(String(decoding: try await http.get(base + "/blocks/tip/height"), as: UTF8.self)
            .trimmingCharacters(in: .whitespacesAndNewlines)) else {
            throw ProviderFailure("the tip height is not a number")
        }
        var listing = ChainListing(height: tip)
        var byID: [String: JSONValue] = [:]
        var order: [String] = []
        let (walk, own) = try await addresses()
        read.own = own
        for (address, stats) in walk {
            let chain = stats["chain_stats"] ?? .null
            let funded = try ChainJSON.amount(chain["funded_txo_sum"], decimals: target.chain.decimals, what: "funded_txo_sum")
            let spent = try ChainJSON.amount(chain["spent_txo_sum"], decimals: target.chain.decimals, what: "spent_txo_sum")
            listing.balance += funded - spent
            var url = "\(base)/address/\(address)/txs"
            for _ in 0..<Self.maxPages {
                let page = try ChainJSON.parse(try await http.get(url), what: "transactions")
                guard let items = page.arrayValue else { throw ProviderFailure("the transactions answer is not a list") }
                var confirmed = 0
                var last: String?
                var settled = true
                for item in items {
                    guard let txid = item["txid"]?.stringValue else { throw ProviderFailure("a transaction has no txid") }
                    if item["status"]?["confirmed"]?.boolValue == true {
                        confirmed += 1
                        last = txid
                        let height = item["status"]?["block_height"]?.intValue ?? tip
                        settled = settled && stored.contains(txid) && tip - height + 1 >= Self.settledDepth
                    }
                    if byID.updateValue(item, forKey: txid) == nil { order.append(txid) }
                }
                // A full page of confirmed transactions may have more after it.
                guard confirmed >= Self.chainPage, let last else { break }
                // Settled and known: the older pages are too, and what is listed is complete after here.
                if settled, let time = byID[last]?["status"]?["block_time"]?.intValue {
                    let before = Date(timeIntervalSince1970: TimeInterval(time))
                    listing.settledBefore = max(listing.settledBefore ?? before, before)
                    break
                }
                url = "\(base)/address/\(address)/txs/chain/\(last)"
            }
        }
        // Newest first across the addresses: the mempool, then by height.
        func height(_ txid: String) -> Int { byID[txid]?["status"]?["block_height"]?.intValue ?? Int.max }
        order.sort { height($0) > height($1) }
        var transactions: [ChainTransaction] = []
        for txid in order {
            guard let item = byID[txid] else { continue }
            let transaction = try self.transaction(item, tip: tip)
            if transaction.blockTime == nil { listing.unconfirmed.insert(txid) }
            transactions.append(transaction)
        }
        listing.txids = order
        read.transactions = transactions
        return listing
    }

    func details(from start: Int, readAhead: Bool, _ body: @Sendable (ChainPage) async throws -> Bool) async throws {
        let all = read.transactions
        let pages = max(1, (all.count + Self.pageSize - 1) / Self.pageSize)
        for page in max(1, start)...pages {
            let slice = all.dropFirst((page - 1) * Self.pageSize).prefix(Self.pageSize)
            guard try await body(ChainPage(transactions: Array(slice), page: page, pages: pages, total: all.count)) else { return }
        }
    }

    func transaction(_ item: JSONValue, tip: Int) throws -> ChainTransaction {
        let own = read.own
        func mine(_ output: JSONValue?) -> Bool { output?["scriptpubkey_address"]?.stringValue.map(own.contains) == true }
        let txid = item["txid"]?.stringValue ?? ""
        let credits = try (item["vout"]?.arrayValue ?? []).filter { mine($0) }.map { try ChainJSON.units($0["value"], what: "an output's value") }
        let debits = try (item["vin"]?.arrayValue ?? []).filter { mine($0["prevout"]) }
            .map { try ChainJSON.units($0["prevout"]?["value"], what: "an input's value") }
        let amount: Decimal
        do {
            amount = try ChainTransaction.net(credits: credits, debits: debits, decimals: target.chain.decimals)
        } catch {
            throw ProviderFailure("transaction \(txid): \(error)")
        }
        let status = item["status"]
        guard status?["confirmed"]?.boolValue == true, let height = status?["block_height"]?.intValue,
              let time = status?["block_time"]?.intValue else {
            return ChainTransaction(txid: txid, amount: amount, blockTime: nil, confirmations: 0)
        }
        return ChainTransaction(txid: txid, amount: amount, blockTime: Date(timeIntervalSince1970: TimeInterval(time)),
                                confirmations: max(0, tip - height + 1))
    }
}
