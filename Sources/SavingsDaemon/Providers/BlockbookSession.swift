import Foundation
import SavingsCore
import SavingsRPC

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
    let walksWithoutListing = true
    static let pageSize = 1000
    /// Listing pages asked for at once.
    static let listingRequests = 4
    /// Pages fetched ahead of the one being stored.
    static let readAhead = 1

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

    func listing(stored: Set<String>) async throws -> ChainListing {
        var listing = ChainListing()
        var seen = Set<String>()
        async let status = try? ChainJSON.parse(try await http.get(base + "/api/"), what: "status")
        for account in accounts {
            let first = try await txids(account.path, page: 1)
            // `txs` is required in every account answer; `txids` is left out when there are none.
            guard let count = first["txs"]?.intValue else { throw ProviderFailure("the answer is not a Blockbook account") }
            var lists = [first["txids"]?.arrayValue ?? []]
            if count > 0, lists[0].isEmpty { throw ProviderFailure("the account has \(count) transactions but lists none") }
            listing.balance += try balance(first)
            // The mempool's transactions come first, newest first.
            for txid in lists[0].prefix(first["unconfirmedTxs"]?.intValue ?? 0) { if let txid = txid.stringValue { listing.unconfirmed.insert(txid) } }
            // The other pages at once, a few at a time, kept in order.
            let pages = first["totalPages"]?.intValue ?? 1
            if pages > 1 {
                lists += try await withThrowingTaskGroup(of: (Int, [JSONValue]).self) { group in
                    var found = [[JSONValue]](repeating: [], count: pages - 1)
                    var next = 2
                    func add() {
                        let page = next
                        group.addTask { (page, try await txids(account.path, page: page)["txids"]?.arrayValue ?? []) }
                        next += 1
                    }
                    while next <= min(pages, 1 + Self.listingRequests) { add() }
                    while let (page, list) = try await group.next() {
                        found[page - 2] = list
                        if next <= pages { add() }
                    }
                    return found
                }
            }
            for txid in lists.joined() {
                guard let txid = txid.stringValue else { throw ProviderFailure("a txid is not a string") }
                if seen.insert(txid).inserted { listing.txids.append(txid) }
            }
        }
        listing.height = await status?["blockbook"]?["bestHeight"]?.intValue
        return listing
    }

    private func txids(_ path: String, page: Int) async throws -> JSONValue {
        try ChainJSON.parse(try await http.get(url(path, details: "txids", page: page)), what: "account")
    }

    /// The confirmed balance: of the token with `token`, else the account's own.
    private func balance(_ answer: JSONValue) throws -> Decimal {
        guard let token = target.token else { return try ChainJSON.amount(answer["balance"], decimals: target.chain.decimals, what: "balance") }
        let row = answer["tokens"]?.arrayValue?.first { $0["contract"]?.stringValue?.lowercased() == token.lowercased() }
        guard let row else { return 0 }
        return try ChainJSON.amount(row["balance"], decimals: row["decimals"]?.intValue ?? 18, what: "token balance")
    }

    func details(from start: Int, readAhead: Bool, _ body: @Sendable (ChainPage) async throws -> Bool) async throws {
        // One account (a key or one address) pages on its own; several are merged by txid.
        let single = accounts.count == 1
        var seen = Set<String>()
        for account in accounts {
            // The next pages are fetched and read while the current one is stored.
            var ahead = [fetch(account.path, page: single ? start : 1)]
            defer { ahead.forEach { $0.cancel() } }
            while !ahead.isEmpty {
                let fetched = try await ahead.removeFirst().value
                // The pages in flight follow this one in order.
                var next = fetched.page + ahead.count + 1
                while readAhead, ahead.count < Self.readAhead, next <= fetched.pages {
                    ahead.append(fetch(account.path, page: next))
                    next += 1
                }
                let fresh = fetched.transactions.filter { seen.insert($0.txid).inserted }
                guard try await body(ChainPage(transactions: fresh, page: fetched.page, pages: fetched.pages, total: fetched.total)) else { return }
                if ahead.isEmpty, fetched.page < fetched.pages { ahead.append(fetch(account.path, page: fetched.page + 1)) }
            }
        }
    }

    /// One page of an account's transactions, read into what they did to the set.
    private func fetch(_ path: String, page: Int) -> Task<ChainPage, any Error> {
        Task {
            let answer = try ChainJSON.parse(try await http.get(url(path, details: "txs", page: page)), what: "account")
            let transactions = try (answer["transactions"]?.arrayValue ?? []).map(transaction)
            return ChainPage(transactions: transactions, page: answer["page"]?.intValue ?? page, pages: answer["totalPages"]?.intValue ?? 1,
                             total: answer["txs"]?.intValue ?? 0)
        }
    }

    func transaction(_ item: JSONValue) throws -> ChainTransaction {
        guard let txid = item["txid"]?.stringValue else { throw ProviderFailure("a transaction has no txid") }
        let confirmations = item["confirmations"]?.intValue ?? 0
        let height = item["blockHeight"]?.intValue ?? -1
        let blockTime = height >= 0 && confirmations > 0 ? item["blockTime"]?.intValue.map { Date(timeIntervalSince1970: TimeInterval($0)) } : nil
        let (credits, debits, decimals) = target.chain == .ethereum ? try ethereumFlows(item) : try utxoFlows(item)
        let amount: Decimal
        do {
            amount = try ChainTransaction.net(credits: credits, debits: debits, decimals: decimals)
        } catch {
            throw ProviderFailure("transaction \(txid): \(error)")
        }
        return ChainTransaction(txid: txid, amount: amount, blockTime: blockTime, confirmations: confirmations)
    }

    /// Outputs to the set and inputs from it: `isOwn` for a key, the addresses otherwise.
    private func utxoFlows(_ item: JSONValue) throws -> ([String], [String], Int) {
        let own = ownAddresses
        func mine(_ part: JSONValue) -> Bool {
            if target.xpub != nil { return part["isOwn"]?.boolValue == true }
            return part["addresses"]?.arrayValue?.contains { $0.stringValue.map(own.contains) == true } == true
        }
        let credits = try (item["vout"]?.arrayValue ?? []).filter(mine).map { try ChainJSON.units($0["value"], what: "an output's value") }
        let debits = try (item["vin"]?.arrayValue ?? []).filter(mine).map { try ChainJSON.units($0["value"], what: "an input's value") }
        return (credits, debits, target.chain.decimals)
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
                decimals = transfer["decimals"]?.intValue ?? decimals
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
