import Foundation
import NIOConcurrencyHelpers
import SavingsRPC
import Testing

/// Block explorers that lie, stall, redirect or flood (the Blockbook and Esplora shapes of
/// `ChainStubs.swift`, bent): each sync fails with a clear reason and stores nothing the
/// explorer did not say, while the daemon stays up, bounded in memory, and answers another
/// client's writes within a second.
@Suite(.serialized) struct HostileExplorerTests {
    static let tip = 900_000
    static let now = Int(Date().timeIntervalSince1970)

    static func txid(_ number: Int) -> String { String(format: "%064x", number) }

    /// A receive of 0.005 BTC, `number` blocks below the tip.
    static func receive(_ number: Int) -> [String: any Sendable] {
        BlockbookStub.bitcoin(txid(number), height: tip - 10 - number, tip: tip, time: now - 3600 * (number + 1),
                              inputs: [(1_000_000, false)], outputs: [(500_000, true), (499_000, false)])
    }

    /// An account answer of Blockbook's shape with the figures given.
    static func account(page: Int, totalPages: Int, txs: Int, transactions: [[String: any Sendable]], details: String) -> HTTPStub.Response {
        var body: [String: any Sendable] = ["page": page, "totalPages": totalPages, "itemsOnPage": 1000, "address": OnchainTests.xpub,
                                            "balance": "0", "totalReceived": "0", "totalSent": "0", "unconfirmedBalance": "0",
                                            "unconfirmedTxs": 0, "txs": txs]
        if details == "txs" { body["transactions"] = transactions } else { body["txids"] = transactions.map { $0["txid"] as? String ?? "" } }
        return BlockbookStub.json(body)
    }

    /// A daemon whose asset "Cold" watches the xpub (or `address`) through the provider at
    /// `url`, with a plain account "Cash" to write to.
    static func watching(_ url: String, provider: String = "blockbook", address: String? = nil, onchain: String = "") throws -> DaemonProcess {
        let daemon = try OnchainTests.daemon(["bitcoin": (provider, url)], onchain: onchain)
        _ = try daemon.call("asset.create", ["name": "Cash", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("asset.create", ["name": "Cold", "currency": "BTC", "kind": "crypto"])
        let watched: [String: JSONValue] = address.map { ["addresses": [.string($0)]] } ?? ["xpub": .string(OnchainTests.xpub)]
        _ = try daemon.call("asset.watch", ["asset": "Cold", "chain": "bitcoin"].merging(watched) { $1 })
        return daemon
    }

    /// Runs `asset.sync` of Cold in the background while another client writes to Cash every
    /// 100 ms; returns the sync's error (nil if it succeeded) and the slowest write in seconds.
    static func syncUnderWrites(_ daemon: DaemonProcess, timeout: TimeInterval = 60, attack: String = #function) async throws -> (error: RPCError?, slowestWrite: Double) {
        let held = Unchecked(daemon)
        return try await onThread { try blockingSyncUnderWrites(held.value, timeout: timeout, attack: attack) }
    }

    static func blockingSyncUnderWrites(_ daemon: DaemonProcess, timeout: TimeInterval, attack: String) throws -> (error: RPCError?, slowestWrite: Double) {
        let outcome = NIOLockedValueBox<Result<JSONValue, any Error>?>(nil)
        let socket = daemon.socketPath
        DispatchQueue.global().async {
            let result = Result { try RPCClient(socketPath: socket).call("asset.sync", ["asset": "Cold"], timeoutMilliseconds: Int32(timeout * 1000)) }
            outcome.withLockedValue { $0 = result }
        }
        var slowest = 0.0
        let deadline = Date().addingTimeInterval(timeout)
        while outcome.withLockedValue({ $0 }) == nil, Date() < deadline {
            let started = Date()
            _ = try daemon.call("tx.add", ["asset": "Cash", "amount": "1"])
            slowest = max(slowest, Date().timeIntervalSince(started))
            usleep(100_000)
        }
        guard let result = outcome.withLockedValue({ $0 }) else { throw HarnessError("asset.sync did not end within \(timeout) s") }
        // The figures of each attack, for the record (make test prints them).
        print("[attack] \(attack): asset.sync ended in \(String(format: "%.2f", timeout - deadline.timeIntervalSinceNow)) s, "
              + "slowest tx.add meanwhile \(Int(slowest * 1000)) ms, daemon peak RSS \(daemon.peakKilobytes / 1024) MB")
        switch result {
        case .success: return (nil, slowest)
        case .failure(RPCClient.CallError.remote(let error)): return (error, slowest)
        case .failure(let error): throw error
        }
    }

    /// What every attack must leave: the daemon up, the database consistent, nothing stored.
    static func unharmed(_ daemon: DaemonProcess, stored: Int = 0) throws {
        #expect(try daemon.call("daemon.ping") != .null)
        #expect(try daemon.call("db.check")["ok"] == true)
        #expect(try daemon.call("tx.list", ["asset": "Cold"])["transactions"]?.arrayValue?.count == stored)
    }

    @Test func aPageCountOfTenToTheEighteenIsRefusedNotAllocated() async throws {
        let stub = try BlockbookStub(height: Self.tip)
        stub.failing { request in
            guard request.path.hasPrefix("/api/v2/xpub/") else { return nil }
            return Self.account(page: 1, totalPages: 1_000_000_000_000_000_000, txs: 5, transactions: (1...5).map(Self.receive),
                                details: request.query["details"] ?? "txids")
        }
        let daemon = try Self.watching(stub.url)
        let (error, slowest) = try await Self.syncUnderWrites(daemon)
        #expect(error?.kind == "provider_unavailable")
        #expect(error?.message.contains("totalPages is not a whole number from 0 to 2000") == true, "\(String(describing: error?.message))")
        #expect(slowest < 1)
        try Self.unharmed(daemon)
    }

    /// Every page repeats the same five transactions: the walk stops at the second page, not at
    /// a millionth.
    @Test func endlessPagesOfTheSameTransactionsStopAtTheFirstRepeat() async throws {
        let stub = try BlockbookStub(height: Self.tip)
        stub.failing { request in
            guard request.path.hasPrefix("/api/v2/xpub/") else { return nil }
            return Self.account(page: Int(request.query["page"] ?? "1") ?? 1, totalPages: 1_500, txs: 150_000,
                                transactions: (1...5).map(Self.receive), details: request.query["details"] ?? "txids")
        }
        let daemon = try Self.watching(stub.url)
        let (error, slowest) = try await Self.syncUnderWrites(daemon)
        #expect(error?.message.contains("repeats transactions") == true, "\(String(describing: error?.message))")
        #expect(stub.http.requests.count < 20, "\(stub.http.requests.count) requests")
        #expect(slowest < 1)
        // The first page's five were new and real as far as anyone can tell: a first sync stores
        // what it walked before the lie showed.
        #expect(try daemon.call("db.check")["ok"] == true)
    }

    /// A history that goes on and on (new transactions on every page) is still walked, but
    /// SIGTERM ends it and the daemon exits at once.
    @Test func sigtermStopsASyncInFlight() throws {
        let stub = try BlockbookStub(height: Self.tip)
        stub.failing { request in
            guard request.path.hasPrefix("/api/v2/xpub/") else { return nil }
            let page = Int(request.query["page"] ?? "1") ?? 1
            usleep(20_000)
            return Self.account(page: page, totalPages: 1_999, txs: 199_900, transactions: (0..<100).map { Self.receive(page * 100 + $0) },
                                details: request.query["details"] ?? "txids")
        }
        let daemon = try Self.watching(stub.url)
        try waitUntil(timeout: 20) { stub.http.requests.count > 10 }
        let started = Date()
        daemon.signal(SIGTERM)
        #expect(daemon.waitForExit(timeout: 10) == 0)
        #expect(Date().timeIntervalSince(started) < 5, "stopped in \(Date().timeIntervalSince(started)) s")
        #expect(daemon.log.contains("chain sync stopped"))
    }

    @Test func anAnswerOverTheCapIsRefusedWithoutGrowingTheDaemon() async throws {
        let stub = try BlockbookStub(height: Self.tip)
        // 60 MB of transactions: under the old 64 MiB cap, parsed whole it grew the daemon by 1.6 GB.
        let huge = #"{"page":1,"totalPages":1,"itemsOnPage":1000,"txs":5,"balance":"0","transactions":["#
            + String(repeating: "1,", count: 30_000_000) + "1]}"
        stub.failing { request in
            guard request.path.hasPrefix("/api/v2/xpub/") else { return nil }
            return request.query["details"] == "txs" ? .json(huge)
                : Self.account(page: 1, totalPages: 1, txs: 5, transactions: (1...5).map(Self.receive), details: "txids")
        }
        let daemon = try Self.watching(stub.url)
        let before = daemon.peakKilobytes
        let (error, slowest) = try await Self.syncUnderWrites(daemon)
        #expect(error?.message.contains("larger than 16777216 bytes") == true, "\(String(describing: error?.message))")
        #expect(slowest < 1)
        #expect(daemon.peakKilobytes - before < 120_000, "grew by \(daemon.peakKilobytes - before) kB")
        try Self.unharmed(daemon)
    }

    /// One byte a second: the answer is given up at its deadline (30 s), not after 35 minutes.
    @Test func aTricklingExplorerIsTimedOut() async throws {
        let trickle = try TrickleServer()
        let daemon = try Self.watching(trickle.url)
        let started = Date()
        let (error, slowest) = try await Self.syncUnderWrites(daemon, timeout: 50)
        #expect(error?.message.contains("did not arrive within 30 s") == true, "\(String(describing: error?.message))")
        #expect(Date().timeIntervalSince(started) < 45)
        #expect(slowest < 1)
        try Self.unharmed(daemon)
    }

    /// A redirect to another host is not followed: that host never learns the key.
    @Test func aRedirectToAnotherHostIsNotFollowed() async throws {
        let elsewhere = try HTTPStub { _ in .json("{}") }
        let stub = try BlockbookStub(height: Self.tip)
        stub.failing { request in
            guard request.path.hasPrefix("/api/v2/xpub/") else { return nil }
            return HTTPStub.Response(status: 302, headers: [("Location", elsewhere.baseURL + request.path)], body: "")
        }
        let daemon = try Self.watching(stub.url)
        let (error, _) = try await Self.syncUnderWrites(daemon)
        #expect(error?.message.contains("redirects to another host") == true, "\(String(describing: error?.message))")
        #expect(elsewhere.requests.isEmpty)
        try Self.unharmed(daemon)
    }

    /// Txids that are not 64 hex digits (markup, terminal escapes, empty, 5,000 characters) are
    /// refused, not stored as external ids.
    @Test(arguments: ["abc\"\n<script>alert(1)</script>\u{1b}]0;owned\u{07}", "", String(repeating: "a", count: 5_000),
                      String(repeating: "g", count: 64)])
    func txidsThatAreNotTxidsAreRefused(txid: String) async throws {
        let stub = try BlockbookStub(height: Self.tip)
        var bad = Self.receive(1)
        bad["txid"] = txid
        stub.set(OnchainTests.xpub, .init(transactions: [Self.receive(2), bad], balance: "1000000"))
        let daemon = try Self.watching(stub.url)
        let (error, _) = try await Self.syncUnderWrites(daemon)
        #expect(error?.message.contains("txid is not 64 hex digits") == true, "\(String(describing: error?.message))")
        try Self.unharmed(daemon)
    }

    /// The largest amount a provider can send (38 digits of satoshis) is stored to the last
    /// digit; outputs whose sum Decimal cannot hold are refused, never rounded.
    @Test(arguments: [1, 4])
    func amountsAreExactOrRefused(outputs: Int) async throws {
        let stub = try BlockbookStub(height: Self.tip)
        var big = Self.receive(1)
        let value = "99999999999999999999999999999999999995"
        big["vout"] = (0..<outputs).map { ["n": $0, "addresses": ["bc1qown\($0)"], "isAddress": true, "isOwn": true, "value": value] as [String: any Sendable] }
        stub.set(OnchainTests.xpub, .init(transactions: [big], balance: "0"))
        let daemon = try Self.watching(stub.url)
        let (error, _) = try await Self.syncUnderWrites(daemon)
        if outputs == 1 {
            let rows = try daemon.call("tx.list", ["asset": "Cold"])["transactions"]?.arrayValue ?? []
            #expect(error == nil || rows.isEmpty, "\(String(describing: error?.message))")
            #expect(rows.allSatisfy { $0["amount"] == "999999999999999999999999999999.99999995" }, "\(rows)")
        } else {
            #expect(error?.message.contains("more digits than can be held exactly") == true, "\(String(describing: error?.message))")
            try Self.unharmed(daemon)
        }
    }

    /// Esplora: a tip below zero is not a height (every transaction would have looked pending).
    @Test func esploraWithANegativeTipIsRefused() async throws {
        let address = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
        let stub = try EsploraStub(address: address, tip: Self.tip)
        stub.set([.init(txid: Self.txid(7), height: Self.tip - 3, time: Self.now - 60, received: 5_000, spent: 0)], tip: -5)
        let daemon = try Self.watching(stub.url, provider: "esplora", address: address)
        let (error, _) = try await Self.syncUnderWrites(daemon)
        #expect(error?.message.contains("the tip height is not a block height") == true, "\(String(describing: error?.message))")
        try Self.unharmed(daemon)
    }

    /// Esplora: a history that brings 25 new transactions on every page, for ever, ends at the
    /// watch's bound (`max_transactions`, 20,000 here), holding what each did rather than its
    /// JSON; before, the walk kept every transaction's JSON up to 40,000 pages.
    @Test func esploraHistoryWithoutEndStopsAtTheBoundInBoundedMemory() async throws {
        let address = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
        let stub = try EsploraStub(address: address, tip: Self.tip)
        stub.failing { request in
            guard request.path.contains("/txs") else { return nil }
            let after = request.path.contains("/txs/chain/") ? Int(request.path.split(separator: "/").last ?? "", radix: 16) ?? 0 : 0
            let page = (after + 1...after + 25).map { number in
                #"{"txid":"\#(Self.txid(number))","version":2,"locktime":0,"vin":[],"vout":[{"scriptpubkey_address":"\#(address)","value":1000}],"#
                    + #""status":{"confirmed":true,"block_height":\#(Self.tip - number / 25),"block_time":\#(Self.now - number)}}"#
            }
            return .json("[" + page.joined(separator: ",") + "]")
        }
        let daemon = try Self.watching(stub.url, provider: "esplora", address: address, onchain: "max_transactions = 20000\n")
        let before = daemon.peakKilobytes
        let (error, slowest) = try await Self.syncUnderWrites(daemon, timeout: 120)
        #expect(error?.message.contains("more than 20000 transactions") == true, "\(String(describing: error?.message))")
        #expect(stub.http.requests.count < 820, "\(stub.http.requests.count) requests")
        #expect(slowest < 1)
        #expect(daemon.peakKilobytes - before < 60_000, "grew by \(daemon.peakKilobytes - before) kB")
        try Self.unharmed(daemon)
    }

    /// Esplora: two watched addresses of one wallet (a send and its change) share their history;
    /// the second address's pages list only what the first's did, and that is no repeat.
    @Test func esploraAddressesSharingTheirHistoryAreNotARepeat() async throws {
        let address = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq", change = "bc1qw508d6qejxtdg4y5r3zarvary0c5xw7kv8f3t4"
        let stub = try EsploraStub(address: address, tip: Self.tip)
        stub.set((0..<30).map { .init(txid: Self.txid(300 + $0), height: Self.tip - 200 - $0, time: Self.now - 3600 * ($0 + 1), received: 0,
                                      spent: 100_000, change: (change, 40_000)) }, tip: Self.tip)
        let daemon = try OnchainTests.daemon(["bitcoin": ("esplora", stub.url)])
        _ = try daemon.call("asset.create", ["name": "Cash", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("asset.create", ["name": "Cold", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("asset.watch", ["asset": "Cold", "chain": "bitcoin", "addresses": [.string(address), .string(change)]])
        let (error, _) = try await Self.syncUnderWrites(daemon)
        #expect(error == nil, "\(String(describing: error?.message))")
        #expect(try daemon.call("tx.list", ["asset": "Cold", "limit": 100])["transactions"]?.arrayValue?.count == 30)
    }

    /// Esplora: a walk whose next page leads back to what it has read is refused at the first
    /// repeat (here the stub's second page holds the first page's txids again).
    @Test func esploraPagesThatLoopAreRefused() async throws {
        let address = "bc1qar0srrr7xfkvy5l643lydnw9re59gtzzwf5mdq"
        let stub = try EsploraStub(address: address, tip: Self.tip)
        stub.set((0..<50).map { .init(txid: Self.txid(100 + $0 % 25), height: Self.tip - 200 - $0, time: Self.now - 3600 * ($0 + 1),
                                      received: 5_000, spent: 0) }, tip: Self.tip)
        let daemon = try Self.watching(stub.url, provider: "esplora", address: address)
        let (error, _) = try await Self.syncUnderWrites(daemon)
        #expect(error?.message.contains("repeats a page") == true, "\(String(describing: error?.message))")
        #expect(stub.http.requests.filter { $0.path.contains("/txs/chain/") }.count <= 2)
        try Self.unharmed(daemon)
    }
}

/// An HTTP server on loopback that answers every request with headers at once and then a body
/// of 2,000 bytes, one byte a second.
final class TrickleServer: @unchecked Sendable {
    private let socket: Int32
    let port: Int
    var url: String { "http://127.0.0.1:\(port)" }

    init() throws {
        (socket, port) = try listenOnLoopback()
        let listener = socket
        Thread.detachNewThread {
            while true {
                let client = accept(listener, nil, nil)
                guard client >= 0 else { return }
                Thread.detachNewThread {
                    var buffer = [UInt8](repeating: 0, count: 4096)
                    _ = read(client, &buffer, buffer.count)
                    let head = "HTTP/1.1 200 OK\r\nContent-Type: application/json\r\nContent-Length: 2000\r\n\r\n{"
                    _ = head.withCString { send(client, $0, strlen($0), Int32(MSG_NOSIGNAL)) }
                    for _ in 0..<2000 {
                        sleep(1)
                        guard send(client, " ", 1, Int32(MSG_NOSIGNAL)) == 1 else { break }
                    }
                    close(client)
                }
            }
        }
    }

    deinit { shutdown(socket, Int32(SHUT_RDWR)); close(socket) }
}
