import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import SavingsRPC

/// A linked Kraken account (issue 50): the first sync of a ledger of `rows` entries from a
/// loopback Kraken (its documented `Ledgers` shape: 50 entries a page, newest first, `ofs` to
/// page, `count`), against `tx.import` of the same rows as CSV on the same daemon.
func linkedFigures(work: String, savingsd: String, rows: Int) throws -> [Figure] {
    let directory = work + "/linked"
    try? FileManager.default.removeItem(atPath: directory)
    let credentials = directory + "/credentials"
    try FileManager.default.createDirectory(atPath: directory + "/config/savingsd", withIntermediateDirectories: true)
    try FileManager.default.createDirectory(atPath: credentials, withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
    let stub = try KrakenLedgerServer(rows: rows)
    defer { stub.close() }
    // The key and secret are the bench's own; the loopback Kraken does not check them.
    try "bench-key\n\(Data(repeating: 7, count: 64).base64EncodedString())\n".write(toFile: credentials + "/kraken", atomically: true, encoding: .utf8)
    chmod(credentials + "/kraken", 0o600)
    try "[linked]\ncredentials = \"\(credentials)\"\ninterval = 86400\n[linked.kraken]\nurl = \"http://127.0.0.1:\(stub.port)\"\ntier = \"none\"\n"
        .write(toFile: directory + "/config/savingsd/savingsd.toml", atomically: true, encoding: .utf8)
    let daemon = try DaemonUnderTest(executable: savingsd, directory: directory, database: directory + "/savings.db")
    defer { daemon.stop() }
    let client = try daemon.client()

    let csv = directory + "/same.csv"
    try ("date,amount,note,external_id\n" + stub.rows.map { "\($0.date),\($0.amount),Kraken deposit,\($0.id)" }.joined(separator: "\n") + "\n")
        .write(toFile: csv, atomically: true, encoding: .utf8)
    let (importSeconds, syncSeconds) = try firstSyncRounds(client, csv: csv, rows: rows, kind: "Linked", member: "link", begin: { asset in
        _ = try client.call("asset.link", ["asset": .string(asset), "service": "kraken", "credential": "kraken"])
    }, finish: { asset, _ in
        _ = try client.call("asset.unlink", ["asset": .string(asset)])
    })
    let syncRate = Double(rows) / syncSeconds, importRate = Double(rows) / importSeconds
    return [
        Figure(name: "first sync of a \(rows)-entry Kraken ledger from a loopback Kraken (pages of 50; median of \(firstSyncRoundCount))",
               median: rate(syncRate) + String(format: " (%.2f s)", syncSeconds), p99: "—",
               baseline: "`tx.import` of the same rows as CSV on the same daemon (median of \(firstSyncRoundCount)): " + rate(importRate),
               ratio: ratio(syncRate / importRate), target: "≥ 0.5×", met: syncRate / importRate >= 0.5),
    ]
}

/// One part of the benchmark measured alone (--linked, --onchain, --one-cpu), on a daemon of its
/// own, with the dataset's number of rows, for profiling by hand; prints its figures and exits,
/// its work directory removed first (`exit` runs no `defer`).
func measureAlone(_ part: String, savingsd: String, smoke: Bool,
                  _ measure: (_ work: String, _ savingsd: String, _ rows: Int) throws -> [Figure]) throws -> Never {
    let work = NSTemporaryDirectory() + "savings-bench-\(part)-\(getpid())"
    let signals = stopCleanlyOnSignals(work: { work }, keep: false)
    let figures = Result { try measure(work, savingsd, (smoke ? DatasetSize.smoke : DatasetSize.full).chainTransactions) }
    try? FileManager.default.removeItem(atPath: work)
    withExtendedLifetime(signals) {}
    for figure in try figures.get() {
        print("\(figure.name): \(figure.median); baseline \(figure.baseline); \(figure.ratio), target \(figure.target)")
    }
    exit(0)
}

/// A loopback Kraken serving one bitcoin ledger of deposits, its pages built once.
final class KrakenLedgerServer: Sendable {
    static let pageSize = 50
    let rows: [(id: String, amount: String, date: String)]
    private let channel: any Channel
    var port: Int { channel.localAddress?.port ?? 0 }

    init(rows count: Int) throws {
        let now = Int(Date().timeIntervalSince1970)
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        var rows: [(id: String, amount: String, date: String)] = []
        var entries: [String] = []
        for index in 0..<count {
            // Newest first, as Kraken lists them.
            let id = String(format: "L%05X-BENCH-%06X", index, index), time = now - 60 * (index + 1)
            let amount = String(format: "0.%08d", 10_000 + index)
            rows.append((id, amount, formatter.string(from: Date(timeIntervalSince1970: TimeInterval(time)))))
            entries.append(#""\#(id)":{"refid":"R\#(index)","time":\#(time).5,"type":"deposit","subtype":"","aclass":"currency","asset":"XXBT","amount":"\#(amount)","fee":"0.00000000","balance":"1"}"#)
        }
        self.rows = rows
        let total = Decimal(count * 10_000 + count * (count - 1) / 2) / 100_000_000
        var pages: [String: ByteBuffer] = [:]
        for offset in stride(from: 0, through: count, by: Self.pageSize) {
            let page = entries[offset..<min(count, offset + Self.pageSize)]
            pages["Ledgers-\(offset)"] = ByteBuffer(string: #"{"error":[],"result":{"ledger":{\#(page.joined(separator: ","))},"count":\#(count)}}"#)
        }
        pages["Balance"] = ByteBuffer(string: #"{"error":[],"result":{"XXBT":"\#(total)"}}"#)
        pages["GetApiKeyInfo"] = ByteBuffer(string: #"{"error":[],"result":{"apiKeyName":"bench","permissions":["query-funds","query-ledger-entries"]}}"#)
        let answers = pages
        channel = try ServerBootstrap(group: MultiThreadedEventLoopGroup.singleton)
            .childChannelInitializer { channel in
                channel.eventLoop.makeCompletedFuture {
                    try channel.pipeline.syncOperations.configureHTTPServerPipeline()
                    try channel.pipeline.syncOperations.addHandler(Handler(pages: answers))
                }
            }
            .bind(host: "127.0.0.1", port: 0).wait()
    }

    func close() { try? channel.close().wait() }

    private final class Handler: ChannelInboundHandler {
        typealias InboundIn = HTTPServerRequestPart
        typealias OutboundOut = HTTPServerResponsePart
        let pages: [String: ByteBuffer]
        private var uri = ""
        private var body = ByteBuffer()

        init(pages: [String: ByteBuffer]) { self.pages = pages }

        func channelRead(context: ChannelHandlerContext, data: NIOAny) {
            switch unwrapInboundIn(data) {
            case .head(let head):
                uri = head.uri
                body.clear()
            case .body(var part): body.writeBuffer(&part)
            case .end:
                let endpoint = String(uri.split(separator: "/").last ?? "")
                let form = String(buffer: body)
                let offset = form.split(separator: "&").first { $0.hasPrefix("ofs=") }.map { String($0.dropFirst(4)) } ?? "0"
                let answer = pages[endpoint == "Ledgers" ? "Ledgers-\(offset)" : endpoint] ?? ByteBuffer(string: #"{"error":["EGeneral:Unknown method"]}"#)
                var headers = HTTPHeaders([("Content-Type", "application/json"), ("Content-Length", String(answer.readableBytes))])
                headers.add(name: "Connection", value: "keep-alive")
                context.write(wrapOutboundOut(.head(HTTPResponseHead(version: .http1_1, status: .ok, headers: headers))), promise: nil)
                context.write(wrapOutboundOut(.body(.byteBuffer(answer))), promise: nil)
                context.writeAndFlush(wrapOutboundOut(.end(nil)), promise: nil)
            }
        }
    }
}
