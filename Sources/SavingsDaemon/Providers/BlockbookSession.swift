import Foundation
import NIOConcurrencyHelpers
import SavingsCore
import SavingsRPC
import SavingsStore

/// Blockbook API v2 (trezor/blockbook, `openapi.yaml`): `/api/v2/xpub/{xpub}` for an extended
/// key (Blockbook derives the receive and change chains and marks the key's inputs and outputs
/// `isOwn`), `/api/v2/address/{address}` for addresses; account history newest first in pages
/// of up to 1000 (`page`, `totalPages`), amounts as integer strings in the smallest unit, the
/// confirmed `balance`, `unconfirmedTxs`, Ethereum `tokenTransfers` and `tokens`.
struct BlockbookSession: ChainSession {
    let base: String
    let target: WatchTarget
    let http: ProviderHTTP
    let provider = "blockbook"
    /// Most transactions the watch's history may have (`[onchain] max_transactions`).
    var maxTransactions = ChainJSON.maxTransactions
    let walksWithoutListing = true
    static let pageSize = 1000
    /// Listing pages asked for at once.
    static let listingRequests = 4
    /// Pages fetched ahead of the one being stored: two, so that on two cores two pages are
    /// read while one is stored (with one, each page's reading stood between two stores); those
    /// read meanwhile are stored together. Three bought nothing (the first sync of 10,000
    /// transactions at a median 100 k/s with two, 99 k/s with three, six alternating runs).
    static let readAhead = 2

    /// The accounts asked about: the key, or each address.
    private var accounts: [(path: String, own: String?)] {
        if let xpub = target.xpub { return [("/api/v2/xpub/" + ChainJSON.percentEncoded(xpub), nil)] }
        return target.addresses.map { ("/api/v2/address/" + $0, $0) }
    }

    private var ownAddresses: Set<String> {
        Set(target.addresses.map { target.chain == .ethereum ? $0.lowercased() : $0 })
    }

    private func url(_ path: String, details: String, page: Int) -> String {
        var url = "\(base)\(path)?details=\(details)&page=\(page)&pageSize=\(Self.pageSize)"
        if let token = target.token { url += "&contract=\(token)" }
        return url
    }

    /// Most pages of one account walked: every page must bring transactions not seen before, so
    /// this is only reached by a history near `maxTransactions`.
    static func maxPages(_ maxTransactions: Int) -> Int { max(10, maxTransactions / 100) }

    /// The pages an answer says the account has, checked against its transaction count: a
    /// provider cannot make savingsd walk (or reserve room for) pages that cannot exist.
    static func pageCount(_ answer: ChainJSON.Object, maxTransactions: Int = ChainJSON.maxTransactions) throws -> (pages: Int, transactions: Int) {
        let transactions = try ChainJSON.count(answer["txs"], "txs", in: 0...maxTransactions) ?? 0
        let pages = try ChainJSON.count(answer["totalPages"], "totalPages", in: 0...maxPages(maxTransactions)) ?? 1
        // Pages of at least one transaction each (Blockbook's are up to 1000), and one more for a
        // history that grew between two pages.
        guard pages <= transactions + 1 else {
            throw ProviderFailure("the account answer says \(pages) pages for \(transactions) transactions")
        }
        return (max(1, pages), transactions)
    }

    func listing(stored: Set<String>) async throws -> ChainListing {
        var listing = ChainListing()
        var seen = Set<String>()
        async let status = try? await statusHeight()
        for account in accounts {
            let first = try await txids(account.path, page: 1)
            // `txs` is required in every account answer; `txids` is left out when there are none.
            guard first.count != nil else { throw ProviderFailure("the answer is not a Blockbook account") }
            let count = first.count ?? 0
            if count > 0, first.txids.isEmpty { throw ProviderFailure("the account has \(count) transactions but lists none") }
            listing.balance = try ChainJSON.sum(listing.balance, first.balance, what: "the balance")
            // The mempool's transactions come first, newest first.
            for txid in first.txids.prefix(first.unconfirmed) { listing.unconfirmed.insert(txid) }
            var listed = Set<String>()
            /// Takes the account's pages in order, each as soon as those before it are in.
            func take(_ page: Int, _ list: [String]) throws {
                // A page that lists only what the account's earlier pages did is not a history
                // growing by a transaction or two between requests: the provider repeats itself.
                let known = listed.count
                listed.formUnion(list)
                guard listed.count > known || list.isEmpty else {
                    throw ProviderFailure("page \(page) of the account repeats transactions already listed")
                }
                for txid in list where seen.insert(txid).inserted { listing.txids.append(txid) }
                guard listing.txids.count <= maxTransactions else {
                    throw ProviderFailure("the account lists more than \(maxTransactions) transactions")
                }
            }
            try take(1, first.txids)
            // The other pages at once, a few at a time, taken in order as they arrive.
            let pages = first.pages
            if pages > 1 {
                try await withThrowingTaskGroup(of: (Int, [String]).self) { group in
                    var next = 2, expected = 2
                    var arrived: [Int: [String]] = [:]
                    func add() {
                        let page = next
                        group.addTask { (page, try await txids(account.path, page: page).txids) }
                        next += 1
                    }
                    while next <= min(pages, 1 + Self.listingRequests) { add() }
                    while let (page, list) = try await group.next() {
                        arrived[page] = list
                        while let list = arrived.removeValue(forKey: expected) {
                            try take(expected, list)
                            expected += 1
                        }
                        if next <= pages { add() }
                    }
                }
            }
        }
        listing.height = await status ?? nil
        return listing
    }

    /// Each account's first page of txids for its balance, and the height: a first sync's walk
    /// lists every txid itself, and reading them all beside it again took a core from the walk.
    func summary() async throws -> ChainListing {
        var listing = ChainListing()
        async let status = try? await statusHeight()
        for account in accounts {
            let first = try await txids(account.path, page: 1)
            guard first.count != nil else { throw ProviderFailure("the answer is not a Blockbook account") }
            listing.balance = try ChainJSON.sum(listing.balance, first.balance, what: "the balance")
        }
        listing.height = await status ?? nil
        return listing
    }

    private func statusHeight() async throws -> Int? {
        let bytes = try await http.get(base + "/api/")
        return try await OffPool.run {
            let status = try ChainJSON.Object(bytes, what: "status")
            return try ChainJSON.count(try status["blockbook"]?["bestHeight"], "bestHeight", in: 0...100_000_000)
        }
    }

    /// One page of an account's transaction ids, with the account's figures.
    private struct TxidPage: Sendable {
        var count: Int?
        var pages: Int
        var txids: [String]
        var unconfirmed: Int
        var balance: Decimal
    }

    private func txids(_ path: String, page: Int) async throws -> TxidPage {
        let bytes = try await http.get(url(path, details: "txids", page: page))
        let chain = target.chain
        return try await OffPool.run {
            let answer = try ChainJSON.Object(bytes, what: "account")
            var txids: [String] = []
            try answer.forEach(in: "txids") { txids.append(try ChainJSON.txid($0, chain: chain)) }
            let (pages, count) = try Self.pageCount(answer, maxTransactions: maxTransactions)
            return TxidPage(count: answer.members["txs"] == nil ? nil : count, pages: pages, txids: txids,
                            unconfirmed: try ChainJSON.count(answer["unconfirmedTxs"], "unconfirmedTxs", in: 0...maxTransactions) ?? 0,
                            balance: try balance(answer))
        }
    }

    /// The confirmed balance: of the token with `token`, else the account's own.
    private func balance(_ answer: ChainJSON.Object) throws -> Decimal {
        guard let token = target.token else { return try ChainJSON.amount(try answer["balance"], decimals: target.chain.decimals, what: "balance") }
        let row = try answer["tokens"]?.arrayValue?.first { $0["contract"]?.stringValue?.lowercased() == token.lowercased() }
        guard let row else { return 0 }
        let decimals = try ChainJSON.count(row["decimals"], "a token's decimals", in: 0...SmallestUnit.maxDecimals) ?? 18
        return try ChainJSON.amount(row["balance"], decimals: decimals, what: "token balance")
    }

    func details(from start: Int, readAhead: Bool, _ body: @Sendable (ChainPage) async throws -> Bool) async throws {
        // One account (a key or one address) pages on its own; several are merged by txid.
        let single = accounts.count == 1
        var seen = Set<String>()
        for account in accounts {
            // The next pages are fetched and read while the current one is stored.
            var ahead = [fetch(account.path, page: single ? start : 1)]
            defer { ahead.forEach { $0.task.cancel() } }
            var walked = 0
            var read = Set<String>()
            while !ahead.isEmpty {
                try Task.checkCancellation()
                // The pages already read when the one awaited is: stored with it, together.
                var batch = ChainPage(transactions: [], page: 0, pages: 0, total: 0)
                repeat {
                    let fetched = try await ahead.removeFirst().task.value
                    walked += 1
                    guard walked <= Self.maxPages(maxTransactions), read.count <= maxTransactions else {
                        throw ProviderFailure("the account's history goes on beyond \(maxTransactions) transactions")
                    }
                    // The pages in flight follow this one in order.
                    var next = fetched.page + ahead.count + 1
                    while readAhead, ahead.count < Self.readAhead, next <= fetched.pages {
                        ahead.append(fetch(account.path, page: next))
                        next += 1
                    }
                    // Room for the history the account says it has (at most `maxTransactions`):
                    // grown a page at a time, the set hashed every txid again at each doubling.
                    if read.isEmpty { read.reserveCapacity(fetched.total) }
                    let fresh = fetched.transactions.filter { read.insert($0.txid).inserted }
                    guard !fresh.isEmpty || fetched.transactions.isEmpty else {
                        throw ProviderFailure("page \(fetched.page) of the account repeats transactions already read")
                    }
                    // Several accounts (addresses) can share a transaction; one account's are
                    // each taken once already (`read`).
                    batch.transactions += single ? fresh : fresh.filter { seen.insert($0.txid).inserted }
                    (batch.page, batch.pages, batch.total) = (fetched.page, fetched.pages, fetched.total)
                } while readAhead && ahead.first?.isReady == true && batch.page < batch.pages
                guard try await body(batch) else { return }
                if ahead.isEmpty, batch.page < batch.pages { ahead.append(fetch(account.path, page: batch.page + 1)) }
            }
        }
    }

    /// A page being fetched and read, and whether it is, without a failure (a page that
    /// failed is awaited alone, after the pages before it are stored).
    private final class PageFetch: Sendable {
        let task: Task<ChainPage, any Error>
        private let read: NIOLockedValueBox<Bool>
        var isReady: Bool { read.withLockedValue { $0 } }

        init(_ work: @escaping @Sendable () async throws -> ChainPage) {
            let read = NIOLockedValueBox(false)
            self.read = read
            task = Task {
                let page = try await work()
                read.withLockedValue { $0 = true }
                return page
            }
        }
    }

    /// One page of an account's transactions, read into what they did to the set (a
    /// transaction at a time, on a thread of its own).
    private func fetch(_ path: String, page: Int) -> PageFetch {
        PageFetch {
            let bytes = try await http.get(url(path, details: "txs", page: page))
            return try await OffPool.run {
                var transactions: [ChainTransaction] = []
                let answer: ChainJSON.Object
                if target.chain == .ethereum {
                    answer = try ChainJSON.Object(bytes, what: "account")
                    try answer.forEach(in: "transactions", keeping: Self.ethereumFields) { transactions.append(try ethereumTransaction($0)) }
                } else {
                    answer = try ChainJSON.Object(bytes, what: "account", reading: "transactions", named: Self.utxoNames) {
                        transactions.append(try utxoTransaction($0))
                    }
                }
                let (pages, total) = try Self.pageCount(answer, maxTransactions: maxTransactions)
                let number = try ChainJSON.count(answer["page"], "page", in: 1...Self.maxPages(maxTransactions)) ?? page
                return ChainPage(transactions: transactions, page: number, pages: pages, total: total)
            }
        }
    }

    /// The members of an Ethereum transaction (and of its inputs, outputs and transfers)
    /// `ethereumTransaction` reads; the others of a page (hashes, input data, logs) are stepped
    /// over unparsed.
    static let ethereumFields: Set<String> = [
        "txid", "confirmations", "blockHeight", "blockTime", "vin", "vout", "value", "fees", "addresses",
        "ethereumSpecific", "status", "internalTransfers", "tokenTransfers", "contract", "decimals", "from", "to",
    ]

    func ethereumTransaction(_ item: JSONValue) throws -> ChainTransaction {
        let (credits, debits, decimals) = try ethereumFlows(item)
        return try transaction(txid: item["txid"], confirmations: item["confirmations"], blockHeight: item["blockHeight"],
                               blockTime: item["blockTime"], credits: credits, debits: debits, decimals: decimals)
    }

    /// The members of a Bitcoin-like transaction `utxoTransaction` reads, and of its inputs and outputs.
    static let utxoNames = JSONParser.Names(["txid", "confirmations", "blockHeight", "blockTime", "vin", "vout"])
    static let utxoPartNames = JSONParser.Names(["isOwn", "addresses", "value"])

    /// A Bitcoin-like transaction read from where it lies in the page: only the members it is
    /// read for are parsed (on a page of a thousand, the rest was most of the reading).
    func utxoTransaction(_ item: ChainJSON.Members) throws -> ChainTransaction {
        let own = ownAddresses
        func mine(_ part: ChainJSON.Members) throws -> Bool {
            if target.xpub != nil { return try part["isOwn"]?.boolValue == true }
            return try part["addresses"]?.arrayValue?.contains { $0.stringValue.map(own.contains) == true } == true
        }
        var credits: [String] = [], debits: [String] = []
        try item.forEachObject("vout", named: Self.utxoPartNames) { if try mine($0) { credits.append(try ChainJSON.units(try $0["value"], what: "an output's value")) } }
        try item.forEachObject("vin", named: Self.utxoPartNames) { if try mine($0) { debits.append(try ChainJSON.units(try $0["value"], what: "an input's value")) } }
        return try transaction(txid: try item["txid"], confirmations: try item["confirmations"], blockHeight: try item["blockHeight"],
                               blockTime: try item["blockTime"], credits: credits, debits: debits, decimals: target.chain.decimals)
    }

    private func transaction(txid: JSONValue?, confirmations: JSONValue?, blockHeight: JSONValue?, blockTime time: JSONValue?,
                             credits: [String], debits: [String], decimals: Int) throws -> ChainTransaction {
        let txid = try ChainJSON.txid(txid, chain: target.chain)
        let confirmations = try ChainJSON.count(confirmations, "confirmations", in: 0...100_000_000) ?? 0
        let height = blockHeight?.intValue ?? -1
        var blockTime: Date?
        if height >= 0, confirmations > 0, let time = try ChainJSON.count(time, "blockTime", in: 0...(1 << 40)) {
            blockTime = Date(timeIntervalSince1970: TimeInterval(time))
        }
        let amount: Decimal
        do {
            amount = try ChainTransaction.net(credits: credits, debits: debits, decimals: decimals)
        } catch {
            throw ProviderFailure("transaction \(txid): \(error)")
        }
        return ChainTransaction(txid: txid, amount: amount, blockTime: blockTime, confirmations: confirmations)
    }

    /// Ether: the value to or from the set (unless the call failed), the fee its sender paid,
    /// and internal transfers; a token: its transfers to and from the set.
    private func ethereumFlows(_ item: JSONValue) throws -> ([String], [String], Int) {
        let own = ownAddresses
        func isOwn(_ address: JSONValue?) -> Bool { address?.stringValue.map { own.contains($0.lowercased()) } == true }
        var credits: [String] = [], debits: [String] = []
        if let token = target.token?.lowercased() {
            var decimals = 18
            for transfer in item["tokenTransfers"]?.arrayValue ?? [] where transfer["contract"]?.stringValue?.lowercased() == token {
                decimals = try ChainJSON.count(transfer["decimals"], "a token's decimals", in: 0...SmallestUnit.maxDecimals) ?? decimals
                let value = try ChainJSON.units(transfer["value"], what: "a token transfer's value")
                if isOwn(transfer["to"]) { credits.append(value) }
                if isOwn(transfer["from"]) { debits.append(value) }
            }
            return (credits, debits, decimals)
        }
        let failed = item["ethereumSpecific"]?["status"]?.intValue == 0
        let from = item["vin"]?.arrayValue?.first?["addresses"]?.arrayValue?.first
        let to = item["vout"]?.arrayValue?.first?["addresses"]?.arrayValue?.first
        let value = try ChainJSON.units(item["value"], what: "the value")
        if isOwn(from) {
            debits.append(try ChainJSON.units(item["fees"], what: "the fee"))
            if !failed { debits.append(value) }
        }
        if isOwn(to), !failed { credits.append(value) }
        for transfer in item["ethereumSpecific"]?["internalTransfers"]?.arrayValue ?? [] {
            let value = try ChainJSON.units(transfer["value"], what: "an internal transfer's value")
            if isOwn(transfer["to"]) { credits.append(value) }
            if isOwn(transfer["from"]) { debits.append(value) }
        }
        return (credits, debits, target.chain.decimals)
    }
}
