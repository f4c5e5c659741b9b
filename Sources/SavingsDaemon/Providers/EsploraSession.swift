import Foundation
import SavingsCore
import SavingsRPC
import SavingsStore

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
    /// Blocks after which stored history is taken as settled (about a day of Bitcoin blocks).
    static let settledDepth = 144

    private let read = ReadState()

    /// Most transactions the watch's history may have (`[onchain] max_transactions`).
    let maxTransactions: Int

    init(base: String, target: WatchTarget, http: ProviderHTTP, maxTransactions: Int = ChainJSON.maxTransactions) {
        self.base = base
        self.target = target
        self.http = http
        self.maxTransactions = maxTransactions
    }

    private final class ReadState: @unchecked Sendable {
        // Written by `listing` and read by `details`, one after the other in one sync.
        var transactions: [ChainTransaction] = []
        /// The watched set: the addresses given, or every address of a key scanned.
        var own: Set<String> = []
    }

    /// Unused addresses in a row after which a key's chain is taken to end (BIP 44's gap limit).
    static let gapLimit: UInt32 = 20
    /// Most addresses scanned on one of a key's chains (a provider that says every address is
    /// used cannot make the scan go on for ever).
    static let maxIndex: UInt32 = 10_000

    /// The addresses to walk with their stats: those given, or those of a key's receive and
    /// change chains that have transactions, found by scanning each chain until `gapLimit`
    /// unused addresses in a row.
    private func addresses() async throws -> (walk: [(address: String, stats: JSONValue)], own: Set<String>) {
        func stats(_ address: String) async throws -> JSONValue {
            let bytes = try await http.get("\(base)/address/\(address)")
            return try await OffPool.run {
                let answer = try ChainJSON.Object(bytes, what: "address")
                guard let chain = try answer["chain_stats"] else { throw ProviderFailure("the address answer has no chain_stats") }
                return ["chain_stats": chain, "mempool_stats": try answer["mempool_stats"] ?? .null]
            }
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
                try Task.checkCancellation()
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
        let tipText = String(decoding: try await http.get(base + "/blocks/tip/height").prefix(32), as: UTF8.self)
        guard let tip = Int(tipText.trimmingCharacters(in: .whitespacesAndNewlines)), (0...100_000_000).contains(tip) else {
            throw ProviderFailure("the tip height is not a block height")
        }
        var listing = ChainListing(height: tip)
        // What each transaction did to the set, read as its page arrives: the pages' JSON is
        // never kept.
        var byID: [String: (transaction: ChainTransaction, height: Int?)] = [:]
        var order: [String] = []
        let (walk, own) = try await addresses()
        read.own = own
        for (address, stats) in walk {
            let chain = stats["chain_stats"] ?? .null
            let funded = try ChainJSON.amount(chain["funded_txo_sum"], decimals: target.chain.decimals, what: "funded_txo_sum")
            let spent = try ChainJSON.amount(chain["spent_txo_sum"], decimals: target.chain.decimals, what: "spent_txo_sum")
            listing.balance = try ChainJSON.sum(listing.balance, try ChainJSON.sum(funded, -spent, what: "an address's balance"), what: "the balance")
            var url = "\(base)/address/\(address)/txs"
            // Every page but the last brings transactions new to this address's walk (or the walk
            // fails), so the bound on transactions bounds the pages. Another watched address may
            // have listed them already: a change address shares its wallet's history.
            var walked = Set<String>()
            while true {
                try Task.checkCancellation()
                let bytes = try await http.get(url)
                let items = try await OffPool.run { try self.page(bytes, tip: tip) }
                var confirmed = 0
                var last: (txid: String, time: Date?)?
                var settled = true
                var fresh = 0
                for item in items {
                    if let height = item.height {
                        confirmed += 1
                        last = (item.transaction.txid, item.transaction.blockTime)
                        settled = settled && stored.contains(item.transaction.txid) && tip - height + 1 >= Self.settledDepth
                    }
                    if walked.insert(item.transaction.txid).inserted { fresh += 1 }
                    if byID.updateValue((item.transaction, item.height), forKey: item.transaction.txid) == nil {
                        order.append(item.transaction.txid)
                    }
                }
                guard order.count <= maxTransactions else {
                    throw ProviderFailure("the addresses have more than \(maxTransactions) transactions")
                }
                // A full page of confirmed transactions may have more after it.
                guard confirmed >= Self.chainPage, let last else { break }
                // A page that brings nothing new leads back where the walk has been.
                guard fresh > 0 else { throw ProviderFailure("the walk of \(address)'s history repeats a page") }
                // Settled and known: the older pages are too, and what is listed is complete after here.
                if settled, let before = last.time {
                    listing.settledBefore = max(listing.settledBefore ?? before, before)
                    break
                }
                url = "\(base)/address/\(address)/txs/chain/\(last.txid)"
            }
        }
        // Newest first across the addresses: the mempool, then by height.
        func height(_ txid: String) -> Int { byID[txid]?.height ?? Int.max }
        order.sort { height($0) > height($1) }
        var transactions: [ChainTransaction] = []
        for txid in order {
            guard let transaction = byID[txid]?.transaction else { continue }
            if transaction.blockTime == nil { listing.unconfirmed.insert(txid) }
            transactions.append(transaction)
        }
        listing.txids = order
        read.transactions = transactions
        return listing
    }

    /// One page of `/address/:address/txs…`, each transaction read into what it did to the set
    /// and its height (nil in the mempool).
    private func page(_ bytes: [UInt8], tip: Int) throws -> [(transaction: ChainTransaction, height: Int?)] {
        var items: [(transaction: ChainTransaction, height: Int?)] = []
        try ChainJSON.forEach(in: bytes, what: "the transactions") { item in
            // Esplora's pages are 25 confirmed and up to 50 from the mempool.
            guard items.count < 100 else { throw ProviderFailure("a page of transactions has more than 100") }
            let transaction = try self.transaction(item, tip: tip)
            let height = transaction.blockTime == nil ? nil : item["status"]?["block_height"]?.intValue
            items.append((transaction, height))
        }
        return items
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
        let txid = try ChainJSON.txid(item["txid"], chain: target.chain)
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
        guard status?["confirmed"]?.boolValue == true,
              let height = try ChainJSON.count(status?["block_height"], "block_height", in: 0...100_000_000),
              let time = try ChainJSON.count(status?["block_time"], "block_time", in: 0...(1 << 40)) else {
            return ChainTransaction(txid: txid, amount: amount, blockTime: nil, confirmations: 0)
        }
        return ChainTransaction(txid: txid, amount: amount, blockTime: Date(timeIntervalSince1970: TimeInterval(time)),
                                confirmations: max(0, tip - height + 1))
    }
}
