import Foundation
import SavingsRPC
import Testing

/// Watch-only chain sync (SPEC 10) on the real daemon against loopback Blockbook and Esplora
/// stubs speaking the documented shapes (`ChainStubs.swift`).
@Suite(.serialized) struct OnchainTests {
    static let xpub = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
    static let now = Int(Date().timeIntervalSince1970)

    /// A daemon whose configuration names the stubs as the chains' providers (`extra` lines go
    /// into the last chain's table).
    static func daemon(_ chains: [String: (provider: String, url: String)], directory: String? = nil, onchain: String = "",
                       extra: String = "") throws -> DaemonProcess {
        let directory = try directory ?? makeScratchDirectory()
        var toml = "[onchain]\ninterval = 3600\n" + onchain
        for (chain, provider) in chains.sorted(by: { $0.key < $1.key }) {
            toml += "[onchain.\(chain)]\nprovider = \"\(provider.provider)\"\nurl = \"\(provider.url)\"\n"
        }
        toml += extra + "\n"
        try toml.write(toFile: directory + "/savingsd.toml", atomically: true, encoding: .utf8)
        return try DaemonProcess(directory: directory, environment: [
            "SAVINGSD_CONFIG": directory + "/savingsd.toml", "SAVINGSD_LOG_LEVEL": "debug", "SAVINGSD_RATES_RETRY_MIN": "1",
        ])
    }

    /// An xpub wallet: receives, a send with change back to the key, one in the mempool.
    static func wallet(tip: Int) -> [[String: any Sendable]] {
        typealias Part = (value: Int, own: Bool)
        var txs: [[String: any Sendable]] = []
        txs.append(BlockbookStub.bitcoin("f0" + String(repeating: "0", count: 62), height: nil, tip: tip, time: now - 30,
                                         inputs: [(20_000_000, false)], outputs: [(10_000_000, true), (9_990_000, false)]))
        // Heights descending: newest first.
        for index in 0..<7 {
            let height = tip - 10 - index * 100
            let txid = String(format: "%02x", index + 1) + String(repeating: "a", count: 62)
            if index == 2 {
                // A send: 0.5 from the key, 0.3 away, 0.1999 back to a change address, 10,000 sat fee.
                txs.append(BlockbookStub.bitcoin(txid, height: height, tip: tip, time: now - 86_400 * (index + 1),
                                                 inputs: [(50_000_000, true)], outputs: [(30_000_000, false), (19_990_000, true)]))
            } else {
                txs.append(BlockbookStub.bitcoin(txid, height: height, tip: tip, time: now - 86_400 * (index + 1),
                                                 inputs: [(index * 1_000_000 + 60_000_000, false)],
                                                 outputs: [(50_000_000 + index, true), (index * 1_000_000 + 9_990_000 - index, false)]))
            }
        }
        return txs
    }

    @Test func anXpubWalletSyncsExactlyAcrossPagesIdempotentlyAndFeedsAllocations() throws {
        let tip = 900_000
        let stub = try BlockbookStub(height: tip, maxPageSize: 3)
        // Confirmed: six receives of 0.5 BTC + index sat (0+1+3+4+5+6), one send of -0.3001.
        let confirmed = "2.69990019"
        stub.set(Self.xpub, .init(transactions: Self.wallet(tip: tip), balance: "269990019"))
        let daemon = try Self.daemon(["bitcoin": ("blockbook", stub.url)])
        _ = try daemon.call("asset.create", ["name": "Cold", "currency": "BTC", "kind": "crypto"])
        #expect(try daemon.failure("asset.watch", ["asset": "Cold", "chain": "bitcoin", "xpub": .string(String(Self.xpub.dropLast()) + "9")]).kind
            == "invalid_watch")
        #expect(stub.http.requests.isEmpty, "a typo is refused before any request")
        let watched = try daemon.call("asset.watch", ["asset": "Cold", "chain": "bitcoin", "xpub": .string(Self.xpub)])
        #expect(watched["watch"]?["xpub"] == "xpub661M…cet8")
        #expect(watched["watch"]?["provider"] == "blockbook")

        let synced = try #require(try daemon.call("asset.sync", ["asset": "Cold"])["assets"]?.arrayValue?.first)
        let cold = try daemon.call("asset.get", ["asset": "Cold"])
        #expect(cold["balance"] == .string(confirmed))
        #expect(cold["watch"]?["reconciled"] == true, "\(cold)")
        #expect(cold["watch"]?["reported_balance"] == .string(confirmed))
        #expect(cold["watch"]?["pending"]?.arrayValue?.map { $0["amount"] } == ["0.10000000"])
        #expect(cold["watch"]?["height"] == .int(tip))
        #expect(synced["reconciled"] == true, "whichever sync answered (the watch's own, or one after it): \(synced)")
        let rows = try daemon.call("tx.list", ["asset": "Cold"])["transactions"]?.arrayValue ?? []
        #expect(rows.count == 7)
        let send = try #require(rows.first { $0["external_id"] == .string("03" + String(repeating: "a", count: 62)) })
        #expect(send["amount"] == "-0.30010000")
        #expect(send["source"] == "onchain")
        #expect(send["date"] == .string(Self.iso(Self.now - 86_400 * 3)), "dated at the block's time")
        #expect(rows.contains { $0["amount"] == "0.50000006" })
        #expect(rows.contains { $0["amount"] == "0.50000000" })
        #expect(try daemon.failure("tx.add", ["asset": "Cold", "amount": "1"]).kind == "watched_asset")
        let csv = daemon.directory + "/by-hand.csv"
        try "date,amount\n2026-01-05,1\n".write(toFile: csv, atomically: true, encoding: .utf8)
        #expect(try daemon.failure("tx.import", ["asset": "Cold", "path": .string(csv)]).kind == "watched_asset")
        _ = try daemon.call("goal.create", ["name": "Side", "currency": "BTC", "target_amount": "1", "deadline": "2031-01-01"])
        #expect(try daemon.failure("goal.contribute", ["goal": "Side", "amount": "0.1", "asset": "Cold"]).kind == "watched_asset")

        // Nothing new: the re-sync lists the txids and the mempool's page, stores nothing.
        let detailsBefore = stub.http.requests.filter { $0.query["details"] == "txs" }.count
        let again = try #require(try daemon.call("asset.sync", ["asset": "Cold"])["assets"]?.arrayValue?.first)
        #expect(again["added"] == 0)
        #expect(again["removed"] == [])
        #expect(stub.http.requests.filter { $0.query["details"] == "txs" }.count - detailsBefore == 1, "only the page with the pending one")

        // The mempool one confirms, into an asset now dedicated to a goal: the allocation grows
        // with it, and this month's derived contribution counts it at its block time.
        _ = try daemon.call("goal.create", ["name": "Stack", "currency": "BTC", "target_amount": "10", "deadline": "2031-01-01"])
        let allocated = try daemon.call("allocation.set", ["asset": "Cold", "goal": "Stack", "amount": .string(confirmed)])
        // The asset an allocation returns is the same object asset.get returns: its watch included.
        #expect(allocated["asset"]?["watch"]?["chain"] == "bitcoin")
        var wallet = Self.wallet(tip: tip + 1)
        wallet[0]["blockHeight"] = tip + 1
        wallet[0]["confirmations"] = 1
        wallet[0]["blockHash"] = String(repeating: "1", count: 64)
        stub.setHeight(tip + 1)
        stub.set(Self.xpub, .init(transactions: wallet, balance: "279990019"))
        let third = try #require(try daemon.call("asset.sync", ["asset": "Cold"])["assets"]?.arrayValue?.first)
        #expect(third["added"] == 1)
        #expect(third["balance"] == "2.79990019")
        #expect(third["pending"] == [])
        #expect(try daemon.call("allocation.list", ["asset": "Cold"])["allocations"]?.arrayValue?.first?["amount"] == "2.79990019")
        let month = try daemon.call("goal.history", ["goal": "Stack"])["months"]?.arrayValue?.last
        // This month: the allocation of what was there, then the deposit at its block time.
        #expect(month?["contributed"] == "2.79990019", "\(String(describing: month))")

        // Restarted on the same database: a re-sync doubles nothing.
        daemon.stop()
        let restarted = try Self.daemon(["bitcoin": ("blockbook", stub.url)], directory: daemon.directory)
        _ = try restarted.call("asset.sync", ["asset": "Cold"])
        #expect(try restarted.call("asset.get", ["asset": "Cold"])["balance"] == "2.79990019")
        #expect((try restarted.call("tx.list", ["asset": "Cold"])["transactions"]?.arrayValue ?? []).count == 8)
        #expect(!restarted.log.contains(Self.xpub), "the key appears in logs only shortened")
        // Unwatching keeps what was imported and allows manual entries again.
        _ = try restarted.call("asset.unwatch", ["asset": "Cold"])
        #expect(try restarted.call("asset.get", ["asset": "Cold"])["watch"] == .null)
        _ = try restarted.call("tx.add", ["asset": "Cold", "amount": "-0.00000019"])
        #expect(try restarted.call("asset.get", ["asset": "Cold"])["balance"] == "2.79990000")
    }

    @Test func aFirstSyncCutOffIsResumedWhereItStoppedWithNothingDoubled() throws {
        let tip = 900_000
        let stub = try BlockbookStub(height: tip, maxPageSize: 2)
        let wallet = Array(Self.wallet(tip: tip).dropFirst())
        stub.set(Self.xpub, .init(transactions: wallet, balance: "269990019"))
        // The third page of details fails: two pages (four transactions) are stored.
        stub.failing { request in
            request.query["details"] == "txs" && request.query["page"] == "3" ? BlockbookStub.error(500, "backend error") : nil
        }
        let daemon = try Self.daemon(["bitcoin": ("blockbook", stub.url)])
        _ = try daemon.call("asset.create", ["name": "Cold", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("asset.watch", ["asset": "Cold", "chain": "bitcoin", "xpub": .string(Self.xpub)])
        let failed = try daemon.failure("asset.sync", ["asset": "Cold"])
        #expect(failed.kind == "provider_unavailable")
        #expect(failed.message.contains("HTTP 500"))
        #expect((try daemon.call("tx.list", ["asset": "Cold"])["transactions"]?.arrayValue ?? []).count == 4)
        #expect(try daemon.call("asset.get", ["asset": "Cold"])["watch"]?["last_error"]?.stringValue?.contains("HTTP 500") == true)

        daemon.signal(SIGKILL)
        _ = daemon.waitForExit()
        stub.failing(nil)
        let before = stub.http.requests.count
        let restarted = try Self.daemon(["bitcoin": ("blockbook", stub.url)], directory: daemon.directory)
        let resumed = try #require(try restarted.call("asset.sync", ["asset": "Cold"])["assets"]?.arrayValue?.first)
        #expect(resumed["reconciled"] == true, "\(resumed)")
        let pages = stub.http.requests.dropFirst(before).filter { $0.query["details"] == "txs" }.compactMap { $0.query["page"] }
        #expect(!pages.contains("1"), "the walk went on from page 3, not from the start: \(pages)")
        #expect((try restarted.call("tx.list", ["asset": "Cold"])["transactions"]?.arrayValue ?? []).count == 7)
        #expect(try restarted.call("asset.get", ["asset": "Cold"])["balance"] == "2.69990019")
    }

    @Test func etherAndAnERC20TokenToTheLastWei() throws {
        let me = "0x52908400098527886E0F7030069857D2E4169EE7", other = "0xd446089cf19C3D3Eb1743BeF3A852293Fd2C7775"
        let usdt = "0xdAC17F958D2ee523a2206206994597C13D831ec7"
        let stub = try BlockbookStub(height: 20_000_000)
        func tx(_ id: Int, from: String, to: String, value: String, fees: String, height: Int, status: Int = 1,
                tokens: [[String: any Sendable]] = []) -> [String: any Sendable] {
            var tx: [String: any Sendable] = [
                "txid": "0x" + String(format: "%064x", id), "vin": [["n": 0, "addresses": [from], "isAddress": true] as [String: any Sendable]],
                "vout": [["value": value, "n": 0, "addresses": [to], "isAddress": true] as [String: any Sendable]], "blockHash": "0x" + String(format: "%064x", height),
                "blockHeight": height, "confirmations": 20_000_000 - height + 1, "blockTime": Self.now - 1000 + id, "value": value, "fees": fees,
                "ethereumSpecific": ["status": status, "nonce": id, "gasLimit": 21000, "gasUsed": 21000, "gasPrice": "1000000000"] as [String: any Sendable],
            ]
            if !tokens.isEmpty { tx["tokenTransfers"] = tokens }
            return tx
        }
        func transfer(from: String, to: String, value: String) -> [String: any Sendable] {
            ["type": "ERC20", "standard": "ERC20", "from": from, "to": to, "contract": usdt, "name": "Tether USD", "symbol": "USDT",
             "decimals": 6, "value": value]
        }
        let history: [[String: any Sendable]] = [
            // A token payment out: its gas is ether, not the token.
            tx(5, from: me, to: usdt, value: "0", fees: "21000000000000", height: 19_999_990, tokens: [transfer(from: me, to: other, value: "2500000")]),
            tx(4, from: other, to: usdt, value: "0", fees: "50000000000000", height: 19_999_980, tokens: [transfer(from: other, to: me, value: "10000001")]),
            // A failed call still costs its sender the fee.
            tx(3, from: me, to: other, value: "7", fees: "21000", height: 19_999_970, status: 0),
            tx(2, from: other, to: me.lowercased(), value: "1", fees: "21000", height: 19_999_960),
            tx(1, from: other, to: me, value: "1000000000000000000000000000", fees: "21000", height: 19_999_950),
        ]
        // 10^27 + 1 wei in, less the token payment's fee (21,000 gwei) and the failed call's (21,000 wei).
        let ether = "999999999.999978999999979001"
        stub.set(me, .init(transactions: history, balance: "999999999999978999999979001",
                           tokens: [["type": "ERC20", "standard": "ERC20", "name": "Tether USD", "contract": usdt, "transfers": 2, "symbol": "USDT",
                                     "decimals": 6, "balance": "7500001"]]))
        let daemon = try Self.daemon(["ethereum": ("blockbook", stub.url)])
        _ = try daemon.call("asset.create", ["name": "Hot ETH", "currency": "ETH", "kind": "crypto"])
        let typedBefore = try daemon.call("tx.add", ["asset": "Hot ETH", "amount": "1", "date": "2020-01-01T00:00:00Z"])
        _ = try daemon.call("asset.create", ["name": "Tether", "currency": "USDT", "kind": "crypto"])
        let warned = try daemon.call("asset.watch", ["asset": "Hot ETH", "chain": "ethereum", "addresses": [.string(me)]])
        #expect(warned["warnings"]?.arrayValue?.first?.stringValue?.contains("already holds 1 transaction not from the chain") == true)
        _ = try daemon.call("tx.delete", ["transaction": typedBefore["id"] ?? .null])
        _ = try daemon.call("asset.watch", ["asset": "Tether", "chain": "ethereum", "addresses": [.string(me)], "token": .string(usdt)])
        let all = try daemon.call("asset.sync")["assets"]?.arrayValue ?? []
        #expect(all.count == 2)
        let eth = try daemon.call("asset.get", ["asset": "Hot ETH"])
        #expect(eth["balance"] == .string(ether), "\(eth)")
        #expect(eth["watch"]?["reconciled"] == true)
        let token = try daemon.call("asset.get", ["asset": "Tether"])
        #expect(token["balance"] == "7.50000100")
        #expect(token["watch"]?["reconciled"] == true)
        let oneWei = try daemon.call("tx.list", ["asset": "Hot ETH"])["transactions"]?.arrayValue?.first { $0["amount"] == "0.000000000000000001" }
        #expect(oneWei != nil, "a 1-wei transfer round-trips exactly")
        #expect(try daemon.failure("asset.watch", ["asset": "Hot ETH", "chain": "bitcoin", "addresses": ["1BvBMSEYstWetqTFn5Au4m4GFg7xJaNVN2"]]).kind
            == "not_configured")
        #expect(try daemon.failure("asset.watch", ["asset": "Hot ETH", "chain": "ethereum", "addresses": ["0x5290840009852788"]]).kind == "invalid_watch")
    }

    /// Bitcoin addresses on Blockbook: what is theirs is known by the addresses of each input
    /// and output (no `isOwn` without a key). Worked out by hand: a receive of 150,000 sat
    /// (+0.0015), a send spending it to 100,000 sat away and 40,000 back to the second address
    /// (-0.0011, the 10,000 sat fee included), the second consolidating its coin and paying a
    /// fee of 500 sat (-0.000005), and a payment between two others (nothing: not stored).
    @Test func blockbookAddressesCountTheirOwnInputsAndOutputs() throws {
        let tip = 900_000
        let first = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", second = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
        func tx(_ id: Int, depth: Int, inputs: [(String, Int)], outputs: [(String, Int)]) -> [String: any Sendable] {
            func parts(_ list: [(String, Int)]) -> [[String: any Sendable]] {
                list.enumerated().map { ["n": $0.offset, "addresses": [$0.element.0], "isAddress": true, "value": String($0.element.1),
                                         "hex": "0014" + String(repeating: "cd", count: 20)] }
            }
            return ["txid": String(format: "%064x", id), "version": 2, "vin": parts(inputs), "vout": parts(outputs),
                    "blockHash": String(format: "%064x", tip - depth), "blockHeight": tip - depth, "confirmations": depth + 1,
                    "blockTime": Self.now - 3600 * (depth + 1), "size": 225, "vsize": 144, "value": "0", "valueIn": "0", "fees": "0"]
        }
        let history = [
            tx(4, depth: 0, inputs: [("bc1qothera", 70_000)], outputs: [("bc1qotherb", 69_000)]),
            tx(3, depth: 1, inputs: [(second, 40_000)], outputs: [(second, 39_500)]),
            tx(2, depth: 2, inputs: [(first, 150_000)], outputs: [("bc1qotherc", 100_000), (second, 40_000)]),
            tx(1, depth: 3, inputs: [("bc1qotherd", 200_000)], outputs: [(first, 150_000), ("bc1qothere", 49_000)]),
        ]
        let stub = try BlockbookStub(height: tip)
        // Each address answers the history it takes part in; the provider's balance is the sum.
        stub.set(first, .init(transactions: [history[2], history[3]], balance: "0"))
        stub.set(second, .init(transactions: [history[1], history[2]], balance: "39500"))
        let daemon = try Self.daemon(["bitcoin": ("blockbook", stub.url)])
        _ = try daemon.call("asset.create", ["name": "Paper", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("asset.watch", ["asset": "Paper", "chain": "bitcoin", "addresses": [.string(first), .string(second)]])
        let synced = try #require(try daemon.call("asset.sync", ["asset": "Paper"])["assets"]?.arrayValue?.first)
        #expect(synced["balance"] == "0.00039500")
        #expect(synced["reconciled"] == true)
        let amounts = Dictionary(uniqueKeysWithValues: (try daemon.call("tx.list", ["asset": "Paper"])["transactions"]?.arrayValue ?? [])
            .map { ($0["external_id"]?.stringValue ?? "", $0["amount"]?.stringValue ?? "") })
        #expect(amounts == [String(format: "%064x", 1): "0.00150000", String(format: "%064x", 2): "-0.00110000",
                            String(format: "%064x", 3): "-0.00000500"])
    }

    @Test func esploraPagesMempoolReorganisationAndOutagesWhileServing() throws {
        let address = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
        let tip = 850_000
        let stub = try EsploraStub(address: address, tip: tip)
        // 30 confirmed (more than one page of 25), the newest only 1 deep, and one in the mempool.
        var history = (0..<30).map { index in
            EsploraStub.Transaction(txid: String(format: "%064x", 1000 + index), height: tip - index * 3, time: Self.now - 3600 * (index + 1),
                                    received: index == 7 ? 0 : 100_000 + index, spent: index == 7 ? 250_000 : 0)
        }
        history.append(EsploraStub.Transaction(txid: String(repeating: "9", count: 64), height: nil, time: Self.now, received: 5000, spent: 0))
        stub.set(history, tip: tip)
        let daemon = try Self.daemon(["bitcoin": ("esplora", stub.url)])
        _ = try daemon.call("asset.create", ["name": "Savings", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("asset.watch", ["asset": "Savings", "chain": "bitcoin", "addresses": [.string(address)], "min_confirmations": 3])
        let first = try #require(try daemon.call("asset.sync", ["asset": "Savings"])["assets"]?.arrayValue?.first)
        #expect(!stub.http.requests(to: "/txs/chain/" + String(format: "%064x", 1024)).isEmpty, "the walk asked for the page after the first 25")
        // Stored: 28 at three or more confirmations (index 0 is 1 deep, index 1 is 4 deep).
        let expected = (1..<30).filter { $0 != 7 }.reduce(0) { $0 + 100_000 + $1 } - 250_000
        let savings = try daemon.call("asset.get", ["asset": "Savings"])
        #expect(savings["balance"] == .string(Self.btc(expected)), "\(savings)")
        let pending = savings["watch"]?["pending"]?.arrayValue ?? []
        #expect(pending.map { $0["confirmations"] } == [0, 1], "the mempool's first")
        #expect(savings["watch"]?["reconciled"] == true, "the provider's confirmed balance counts the shallow one: \(first)")

        // A reorganisation replaces a stored transaction with another.
        var reorganised = history
        reorganised[5] = EsploraStub.Transaction(txid: String(repeating: "7", count: 64), height: tip - 15, time: Self.now - 3600 * 6,
                                                 received: 42, spent: 0)
        stub.set(reorganised, tip: tip)
        let second = try #require(try daemon.call("asset.sync", ["asset": "Savings"])["assets"]?.arrayValue?.first)
        #expect(second["removed"] == [.string(String(format: "%064x", 1005))])
        #expect(second["added"] == 1)
        #expect(try daemon.call("asset.get", ["asset": "Savings"])["balance"] == .string(Self.btc(expected - 100_005 + 42)))

        // A day of blocks later the history is settled: a re-sync reads the newest page only.
        stub.set(reorganised, tip: tip + 200)
        let deeper = try #require(try daemon.call("asset.sync", ["asset": "Savings"])["assets"]?.arrayValue?.first)
        #expect(deeper["removed"] == [] && deeper["added"] == 1, "the shallow one now counts: \(deeper)")
        let asked = stub.http.requests.count
        let settled = try #require(try daemon.call("asset.sync", ["asset": "Savings"])["assets"]?.arrayValue?.first)
        #expect(settled["removed"] == [] && settled["added"] == 0)
        #expect(stub.http.requests.dropFirst(asked).filter { $0.path.contains("/txs/chain/") }.isEmpty, "no older page asked for")
        #expect(try daemon.call("asset.get", ["asset": "Savings"])["watch"]?["reconciled"] == true)

        // A 429 with Retry-After: the sync says when; the next one is not sent before.
        stub.failing { _ in HTTPStub.Response(status: 429, headers: [("Retry-After", "120")], body: "Too Many Requests") }
        let limited = try daemon.failure("asset.sync", ["asset": "Savings"])
        #expect(limited.kind == "provider_unavailable")
        let before429 = stub.http.requests.count
        let held = try daemon.failure("asset.sync", ["asset": "Savings"])
        #expect(held.message.contains("asked to wait"))
        #expect(stub.http.requests.count == before429, "no request while the provider asked to wait")

        // A streak of 500s on a fresh daemon: every read keeps answering.
        let outage = try EsploraStub(address: address, tip: tip)
        outage.failing { _ in HTTPStub.Response(status: 500, body: "Internal Server Error") }
        let serving = try Self.daemon(["bitcoin": ("esplora", outage.url)])
        _ = try serving.call("asset.create", ["name": "Savings", "currency": "BTC", "kind": "crypto"])
        _ = try serving.call("asset.watch", ["asset": "Savings", "chain": "bitcoin", "addresses": [.string(address)]])
        for _ in 0..<3 { #expect(try serving.failure("asset.sync", ["asset": "Savings"]).message.contains("HTTP 500")) }
        #expect(try serving.call("daemon.ping")["pong"] == true)
        #expect(try serving.call("asset.list")["assets"]?.arrayValue?.first?["watch"]?["last_error"]?.stringValue?.contains("HTTP 500") == true)
        #expect(try serving.call("dashboard.get")["goals"] != nil)
        #expect(serving.log.components(separatedBy: "chain sync failed").count - 1 <= 4, "one line per failed sync")
    }

    @Test func aNewWatchSyncsByItselfWithEventsAndRequestsGoThroughTheConfiguredProxy() throws {
        let tip = 900_000
        // The provider's host does not resolve: only a proxy, which tunnels to the stub, reaches it.
        let stub = try BlockbookStub(height: tip)
        stub.set(Self.xpub, .init(transactions: Array(Self.wallet(tip: tip).dropFirst()), balance: "269990019"))
        let proxy = try ConnectProxy(forwardingTo: stub.http.port)
        let daemon = try Self.daemon(["bitcoin": ("blockbook", "http://blockbook.invalid")], extra: "proxy = \"http://127.0.0.1:\(proxy.port)\"")
        _ = try daemon.call("asset.create", ["name": "Cold", "currency": "BTC", "kind": "crypto"])
        let subscriber = try daemon.raw()
        try subscriber.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"events.subscribe","params":{"topics":["asset.synced","asset.sync_failed","data.changed"]}}"#)
        _ = try subscriber.readLine()
        _ = try daemon.call("asset.watch", ["asset": "Cold", "chain": "bitcoin", "xpub": .string(Self.xpub)])
        var topics: [String] = []
        var synced: JSONValue?
        while synced == nil, let line = try subscriber.readLine(timeoutMilliseconds: 10_000) {
            let event = try JSONParser.parse(line)
            topics.append(event["params"]?["topic"]?.stringValue ?? "")
            if event["params"]?["topic"] == "asset.synced" { synced = event["params"]?["data"] }
        }
        #expect(synced?["added"] == 7, "the watch's first sync ran without asset.sync: \(topics)")
        #expect(synced?["reconciled"] == true)
        #expect(topics.filter { $0 == "data.changed" }.count == 2, "the watch, then the sync's rows: \(topics)")
        #expect(!stub.http.requests.isEmpty)
        #expect(proxy.targets.allSatisfy { $0 == "blockbook.invalid:80" } && !proxy.targets.isEmpty, "\(proxy.targets)")
        #expect(try daemon.call("asset.get", ["asset": "Cold"])["balance"] == "2.69990019")
    }

    @Test func aSyncAskedForWhileOneRunsWaitsForItInsteadOfRunningTwice() throws {
        let tip = 900_000
        let stub = try BlockbookStub(height: tip, maxPageSize: 2)
        stub.set(Self.xpub, .init(transactions: Array(Self.wallet(tip: tip).dropFirst()), balance: "269990019"))
        // Every answer takes a while: the watch's own first sync is still running when asked.
        stub.failing { _ in
            usleep(100_000)
            return nil
        }
        let daemon = try Self.daemon(["bitcoin": ("blockbook", stub.url)])
        _ = try daemon.call("asset.create", ["name": "Cold", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("asset.watch", ["asset": "Cold", "chain": "bitcoin", "xpub": .string(Self.xpub)])
        Thread.sleep(forTimeInterval: 0.15)
        let synced = try #require(try daemon.call("asset.sync", ["asset": "Cold"])["assets"]?.arrayValue?.first)
        #expect(synced["added"] == 7, "the answer is the running sync's own")
        #expect(stub.http.requests(to: "/api/").count == 1, "one sync, not two")
        #expect(stub.http.requests.filter { $0.query["details"] == "txs" && $0.query["page"] == "1" }.count == 1)
    }

    /// An extended key on Esplora: its addresses come from the key (BIP 84's published account:
    /// receive 0 and 1, change 0), found by scanning each chain to 20 unused in a row.
    @Test func anExtendedKeyOnEsploraFindsItsAddressesAndNetsASendWithChange() throws {
        let zpub = "zpub6rFR7y4Q2AijBEqTUquhVz398htDFrtymD9xYYfG1m4wAcvPhXNfE3EfH1r1ADqtfSdVCToUG868RvUUkgDKf31mGDtKsAYz2oz2AGutZYs"
        let receive0 = "bc1qcr8te4kr609gcawutmrza0j4xv80jy8z306fyu", receive1 = "bc1qnjg0jd8228aq7egyzacy8cys3knf9xvrerkf9g"
        let change0 = "bc1q8c6fshw2dlwun7ekn9qwf37cu2rn755upcp6el"
        let tip = 850_000
        let stub = try EsploraStub(address: receive0, tip: tip)
        stub.set([
            .init(txid: String(repeating: "1", count: 64), height: tip - 100, time: Self.now - 86_400 * 3, received: 1_000_000, spent: 0),
            .init(txid: String(repeating: "2", count: 64), height: tip - 50, time: Self.now - 86_400 * 2, received: 2_000_000, spent: 0, owner: receive1),
            // 0.01 from receive 0: 0.006 away, 0.0039 back to change 0 (the fee is the stub's 500 sat plus 9,500 more away).
            .init(txid: String(repeating: "3", count: 64), height: tip - 10, time: Self.now - 86_400, received: 0, spent: 1_000_000,
                  change: (change0, 390_000)),
        ], tip: tip)
        let daemon = try Self.daemon(["bitcoin": ("esplora", stub.url)])
        _ = try daemon.call("asset.create", ["name": "Wallet", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("asset.watch", ["asset": "Wallet", "chain": "bitcoin", "xpub": .string(zpub)])
        let synced = try #require(try daemon.call("asset.sync", ["asset": "Wallet"])["assets"]?.arrayValue?.first)
        #expect(synced["balance"] == "0.02390000", "\(synced)")
        #expect(synced["reconciled"] == true)
        let rows = try daemon.call("tx.list", ["asset": "Wallet"])["transactions"]?.arrayValue ?? []
        #expect(rows.map { $0["amount"] } == ["-0.00610000", "0.02000000", "0.01000000"], "the send nets its change and fee")
        // The scan asked about 20 unused addresses past the last used one on each chain, and no more.
        let asked = Set(stub.http.requests.filter { $0.path.split(separator: "/").count == 3 }.map { $0.path })
        #expect(asked.count == (2 + 20) + (1 + 20), "\(asked.count) addresses asked about")
    }

    static func btc(_ satoshi: Int) -> String {
        let text = String(format: "%d.%08d", satoshi / 100_000_000, satoshi % 100_000_000)
        var trimmed = text
        while trimmed.hasSuffix("0") { trimmed.removeLast() }
        if trimmed.hasSuffix(".") { trimmed.removeLast() }
        return trimmed
    }

    static func iso(_ seconds: Int) -> String {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        return formatter.string(from: Date(timeIntervalSince1970: TimeInterval(seconds)))
    }
}

/// savingsctl's watch commands, and a watched asset's travel through export and import.
@Suite struct OnchainClientTests {
    @Test func savingsctlWatchesSyncsAndShowsAndAnExportCarriesTheWatch() throws {
        let tip = 900_000
        let stub = try BlockbookStub(height: tip)
        stub.set(OnchainTests.xpub, .init(transactions: OnchainTests.wallet(tip: tip), balance: "269990019"))
        let daemon = try OnchainTests.daemon(["bitcoin": ("blockbook", stub.url)])
        let socket = ["--socket", daemon.socketPath]
        #expect(try runCtl(socket + ["asset", "add", "Cold", "--currency", "BTC", "--kind", "crypto"]).status == 0)
        let typo = try runCtl(socket + ["asset", "watch", "Cold", "--chain", "bitcoin", "--address", "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t5"])
        #expect(typo.status == 1)
        #expect(typo.stderr.contains("bad checksum"), "\(typo.stderr)")
        let watch = try runCtl(socket + ["asset", "watch", "Cold", "--chain", "bitcoin", "--xpub", OnchainTests.xpub])
        #expect(watch.status == 0, "\(watch.stderr)")
        #expect(watch.stdout.contains("watching bitcoin for Cold"))
        let sync = try runCtl(socket + ["asset", "sync"])
        #expect(sync.status == 0, "\(sync.stderr)")
        #expect(sync.stdout.contains("Cold: "), "\(sync.stdout)")
        #expect(sync.stdout.contains("matches the provider"), "\(sync.stdout)")
        let show = try runCtl(socket + ["asset", "show", "Cold"])
        #expect(show.stdout.contains("bitcoin via blockbook"), "\(show.stdout)")
        #expect(show.stdout.contains("xpub661M…cet8"))
        #expect(show.stdout.contains("(matches)"))
        #expect(show.stdout.contains("pending"))
        #expect(try runCtl(socket + ["asset", "list"]).stdout.contains("crypto · bitcoin"))
        let dashboard = try runCtl(socket + ["dashboard"])
        #expect(dashboard.stdout.contains("1 watched, synced "), "\(dashboard.stdout)")
        #expect(dashboard.stdout.contains("1 pending"))
        let manual = try runCtl(socket + ["tx", "add", "Cold", "0.1"])
        #expect(manual.status == 1)
        #expect(manual.stderr.contains("takes its transactions from bitcoin"), "\(manual.stderr)")

        // The export holds the watch and the chain's rows; a second daemon takes both.
        let path = daemon.directory + "/export.json"
        _ = try daemon.call("data.export", ["path": .string(path)])
        let copy = try OnchainTests.daemon(["bitcoin": ("blockbook", stub.url)])
        _ = try copy.call("data.import", ["path": .string(path)])
        let restored = try copy.call("asset.get", ["asset": "Cold"])
        #expect(restored["watch"]?["xpub"] == "xpub661M…cet8")
        #expect(restored["balance"] == "2.69990019")
        #expect(try copy.call("tx.list", ["asset": "Cold"])["transactions"]?.arrayValue?.allSatisfy { $0["source"] == "onchain" } == true)
        #expect(try copy.call("db.check")["ok"] == true)
        #expect(try copy.call("asset.sync", ["asset": "Cold"])["assets"]?.arrayValue?.first?["added"] == 0, "nothing is doubled after a restore")
        // An export whose watch was edited into nonsense is refused, naming the place.
        let text = try String(contentsOfFile: path, encoding: .utf8).replacingOccurrences(of: OnchainTests.xpub, with: "xpub-nonsense")
        try text.write(toFile: path + ".bad", atomically: true, encoding: .utf8)
        let other = try DaemonProcess()
        let refused = try other.failure("data.import", ["path": .string(path + ".bad")])
        #expect(refused.message.contains("watches[0]"), "\(refused.message)")
    }
}
