import Foundation
import NIOConcurrencyHelpers
import NIOCore
import NIOHTTP1
import NIOPosix
import SavingsRPC

/// Watch-only sync (SPEC 10): the first sync of an xpub with a long history from a loopback
/// Blockbook (its `openapi.yaml` shapes: `/api/v2/xpub/{xpub}` with `details=txids|txs`, pages of
/// 1000, `isOwn` outputs), against `tx.import` of the same rows as CSV on the same daemon; then a
/// re-sync that finds nothing new, its time beyond the HTTP waits (the stub's own time from
/// request to answer written, subtracted).
func onchainFigures(work: String, savingsd: String, transactions: Int) throws -> [Figure] {
    let directory = work + "/onchain"
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory + "/config/savingsd", withIntermediateDirectories: true)
    let stub = try BlockbookPages(transactions: transactions)
    defer { stub.close() }
    try "[onchain]\ninterval = 86400\n[onchain.bitcoin]\nprovider = \"blockbook\"\nurl = \"http://127.0.0.1:\(stub.port)\"\n"
        .write(toFile: directory + "/config/savingsd/savingsd.toml", atomically: true, encoding: .utf8)
    let daemon = try DaemonUnderTest(executable: savingsd, directory: directory, database: directory + "/savings.db")
    defer { daemon.stop() }
    let client = try daemon.client()

    // The same rows by CSV (the baseline) and by a first sync of the xpub, in rounds.
    let csv = directory + "/same.csv"
    try ("date,amount,note,external_id\n" + stub.rows.map { "\($0.date),\($0.amount),,\($0.txid)" }.joined(separator: "\n") + "\n")
        .write(toFile: csv, atomically: true, encoding: .utf8)
    let (importSeconds, syncSeconds) = try firstSyncRounds(client, csv: csv, rows: transactions, kind: "Watched", member: "watch", begin: { asset in
        _ = try client.call("asset.watch", ["asset": .string(asset), "chain": "bitcoin", "xpub": .string(BlockbookPages.xpub)])
    }, finish: { asset, round in
        // Only the last round's account stays watched, for the re-syncs.
        if round < firstSyncRoundCount { _ = try client.call("asset.unwatch", ["asset": .string(asset)]) }
    })

    var beyond = Samples(), whole = Samples()
    for _ in 0..<(transactions >= 10_000 ? 9 : 3) {
        stub.resetServing()
        let begin = monotonicSeconds()
        let again = try client.call("asset.sync", ["asset": .string("Watched \(firstSyncRoundCount)")], timeoutMilliseconds: 60_000)
        let elapsed = monotonicSeconds() - begin
        guard again["assets"]?.arrayValue?.first?["added"] == 0 else { throw BenchError("the re-sync added: \(JSONSerializer.serialize(again))") }
        whole.add(elapsed)
        beyond.add(elapsed - stub.servingSeconds)
    }
    let syncRate = Double(transactions) / syncSeconds, importRate = Double(transactions) / importSeconds
    return [
        Figure(name: "first sync of a \(transactions)-transaction xpub history from a loopback Blockbook (pages of 1000; median of \(firstSyncRoundCount))",
               median: rate(syncRate) + String(format: " (%.2f s)", syncSeconds), p99: "—",
               baseline: "`tx.import` of the same rows as CSV on the same daemon (median of \(firstSyncRoundCount)): " + rate(importRate),
               ratio: ratio(syncRate / importRate), target: "≥ 0.5×", met: syncRate / importRate >= 0.5),
        Figure(name: "re-sync of that xpub with nothing new: daemon time beyond the HTTP waits (whole call: \(ms(whole.median)))",
               median: ms(beyond.median), p99: ms(beyond.quantile(1)), baseline: "—", ratio: "—", target: "≤ 100 ms",
               met: beyond.median <= 0.1),
    ]
}

/// A loopback Blockbook serving one xpub account of `transactions` receives, its pages built
/// once; it keeps the time it spends answering (from the request's end to the answer written).
final class BlockbookPages: Sendable {
    static let xpub = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
    static let pageSize = 1000
    let rows: [(txid: String, amount: String, date: String)]
    private let serving = NIOLockedValueBox<Double>(0)
    private let channel: any Channel
    var port: Int { channel.localAddress?.port ?? 0 }
    var servingSeconds: Double { serving.withLockedValue { $0 } }
    func resetServing() { serving.withLockedValue { $0 = 0 } }

    init(transactions: Int) throws {
        let tip = 900_000, now = Int(Date().timeIntervalSince1970)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var rows: [(txid: String, amount: String, date: String)] = []
        var items: [String] = []
        for index in 0..<transactions {
            let txid = String(format: "%064x", 0xB00000 + index), sats = 10_000 + index, time = now - 60 * (index + 1)
            rows.append((txid, String(format: "0.%08d", sats), formatter.string(from: Date(timeIntervalSince1970: TimeInterval(time)))))
            items.append(#"{"txid":"\#(txid)","version":2,"vin":[{"txid":"\#(String(repeating: "e", count: 64))","vout":0,"n":0,"addresses":["bc1qother"],"isAddress":true,"value":"\#(sats + 2000)"}],"vout":[{"value":"\#(sats)","n":0,"hex":"0014ab","addresses":["bc1qown\#(index % 40)"],"isAddress":true,"isOwn":true},{"value":"1000","n":1,"hex":"0014cd","addresses":["bc1qother"],"isAddress":true}],"blockHash":"\#(String(format: "%064x", tip - index))","blockHeight":\#(tip - index),"confirmations":\#(index + 1),"blockTime":\#(time),"size":225,"vsize":144,"value":"\#(sats + 1000)","valueIn":"\#(sats + 2000)","fees":"1000"}"#)
        }
        self.rows = rows
        // Every receive is 10,000 sat plus its index.
        let total = transactions * 10_000 + transactions * (transactions - 1) / 2
        var pages: [String: ByteBuffer] = [:]
        let count = max(1, (transactions + Self.pageSize - 1) / Self.pageSize)
        for page in 1...count {
            let range = ((page - 1) * Self.pageSize)..<min(transactions, page * Self.pageSize)
            let head = #""page":\#(page),"totalPages":\#(count),"itemsOnPage":\#(Self.pageSize),"address":"\#(Self.xpub)","balance":"\#(total)","totalReceived":"\#(total)","totalSent":"0","unconfirmedBalance":"0","unconfirmedTxs":0,"txs":\#(transactions),"usedTokens":40"#
            pages["txids-\(page)"] = ByteBuffer(string: "{\(head),\"txids\":[\(range.map { "\"\(rows[$0].txid)\"" }.joined(separator: ","))]}")
            pages["txs-\(page)"] = ByteBuffer(string: "{\(head),\"transactions\":[\(range.map { items[$0] }.joined(separator: ","))]}")
        }
        pages["status"] = ByteBuffer(string: #"{"blockbook":{"coin":"Bitcoin","bestHeight":\#(tip),"inSync":true},"backend":{"chain":"main","blocks":\#(tip)}}"#)
        let answers = pages, serving = serving
        channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(pages: answers, serving: serving))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    func close() { try? channel.close().wait() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let pages: [String: ByteBuffer]
        let serving: NIOLockedValueBox<Double>
        private var uri = ""

        init(pages: [String: ByteBuffer], serving: NIOLockedValueBox<Double>) {
            self.pages = pages
            self.serving = serving
        }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head): uri = head.uri
            case .body: break
            case .end:
                let start = monotonicSeconds()
                let components = URLComponents(string: uri)
                let query = Dictionary((components?.queryItems ?? []).map { ($0.name, $0.value ?? "") }) { $1 }
                let key = components?.path == "/api/" ? "status" : "\(query["details"] ?? "txids")-\(query["page"] ?? "1")"
                let body = pages[key] ?? ByteBuffer(string: #"{"error":"not found"}"#)
                var headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", String(body.readableBytes))])
                headers.add(name: "Connection", value: "keep-alive")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: pages[key] == nil ? .notFound : .ok, headers: headers))),
                              promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(body))), promise: nil)
                let serving = serving
                context.writeAndFlush(wrapOutboundOut(.end(nil))).whenComplete { _ in
                    serving.withLockedValue { $0 += monotonicSeconds() - start }
                }
            }
        }
    }
}
