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
    static let pageSize = 1000

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

    func listing() async throws -> ChainListing {
        var listing = ChainListing()
        var seen = Set<String>()
        for account in accounts {
            var page = 1, pages = 1
            repeat {
                let answer = try ChainJSON.parse(try await http.get(url(account.path, details: "txids", page: page)), what: "account")
                // `txs` is required in every account answer; `txids` is left out when there are none.
                guard let count = answer["txs"]?.intValue else { throw ProviderFailure("the answer is not a Blockbook account") }
                let txids = answer["txids"]?.arrayValue ?? []
                if count > 0, txids.isEmpty, page == 1 { throw ProviderFailure("the account has \(count) transactions but lists none") }
                if page == 1 {
                    listing.balance += try balance(answer)
                    // The mempool's transactions come first, newest first.
                    let unconfirmed = answer["unconfirmedTxs"]?.intValue ?? 0
                    for txid in txids.prefix(unconfirmed) { if let txid = txid.stringValue { listing.unconfirmed.insert(txid) } }
                }
                for txid in txids {
                    guard let txid = txid.stringValue else { throw ProviderFailure("a txid is not a string") }
                    if seen.insert(txid).inserted { listing.txids.append(txid) }
                }
                pages = answer["totalPages"]?.intValue ?? 1
                page += 1
            } while page <= pages
        }
        if let status = try? ChainJSON.parse(try await http.get(base + "/api/"), what: "status") {
            listing.height = status["blockbook"]?["bestHeight"]?.intValue
        }
        return listing
    }

    /// The confirmed balance: of the token with `token`, else the account's own.
    private func balance(_ answer: JSONValue) throws -> Decimal {
        guard let token = target.token else { return try ChainJSON.amount(answer["balance"], decimals: target.chain.decimals, what: "balance") }
        let row = answer["tokens"]?.arrayValue?.first { $0["contract"]?.stringValue?.lowercased() == token.lowercased() }
        guard let row else { return 0 }
        return try ChainJSON.amount(row["balance"], decimals: row["decimals"]?.intValue ?? 18, what: "token balance")
    }

    func details(from start: Int, _ body: @Sendable (ChainPage) async throws -> Bool) async throws {
        // One account (a key or one address) pages on its own; several are merged by txid.
        let single = accounts.count == 1
        var seen = Set<String>()
        for account in accounts {
            var page = single ? start : 1, pages = page
            repeat {
                let answer = try ChainJSON.parse(try await http.get(url(account.path, details: "txs", page: page)), what: "account")
                pages = answer["totalPages"]?.intValue ?? 1
                var transactions: [ChainTransaction] = []
                for item in answer["transactions"]?.arrayValue ?? [] {
                    let transaction = try self.transaction(item)
                    if seen.insert(transaction.txid).inserted { transactions.append(transaction) }
                }
                guard try await body(ChainPage(transactions: transactions, page: page, pages: pages)) else { return }
                page += 1
            } while page <= pages
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
