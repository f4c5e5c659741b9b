import Foundation
import SavingsRPC
#if canImport(Glibc)
import Glibc
#endif

/// One line of the report.
struct Figure {
    var name: String
    var median: String
    var p99: String
    var baseline: String
    var ratio: String
    var target: String
    var met: Bool?
}

func ms(_ seconds: Double) -> String { String(format: seconds < 0.001 ? "%.3f ms" : "%.2f ms", seconds * 1000) }
func rate(_ perSecond: Double) -> String { perSecond >= 10_000 ? String(format: "%.0f k/s", perSecond / 1000) : String(format: "%.0f /s", perSecond) }
func mb(_ bytes: Int) -> String { String(format: "%.1f MB", Double(bytes) / 1_048_576) }
func ratio(_ value: Double) -> String { String(format: "%.2f×", value) }

func request(_ method: String, _ params: String = "{}") -> [UInt8] {
    Array(#"{"jsonrpc":"2.0","id":1,"method":"\#(method)","params":\#(params)}"#.utf8) + [10]
}

/// Samples of one request on one connection (after a warm-up); fails if the answer is an error.
func measure(_ socket: LineSocket, _ line: [UInt8], runs: Int, warmup: Int = 3) throws -> Samples {
    for _ in 0..<warmup { try socket.roundTrip(line) }
    if socket.lastLine.contains(#""error""#) { throw BenchError("\(String(decoding: line, as: UTF8.self)) failed: \(socket.lastLine.prefix(300))") }
    var samples = Samples()
    for _ in 0..<runs { try samples.time { try socket.roundTrip(line) } }
    return samples
}

/// Requests per second over `connections` connections, each sending `each` requests in turn.
func throughput(path: String, _ line: [UInt8], connections: Int, each: Int) throws -> Double {
    let sockets = try (0..<connections).map { _ in try LineSocket(path: path) }
    for socket in sockets { try socket.roundTrip(line) }
    let group = DispatchGroup()
    let failures = Counter()
    let start = monotonicSeconds()
    for socket in sockets {
        group.enter()
        let thread = Thread {
            do {
                for _ in 0..<each { try socket.roundTrip(line) }
            } catch {
                failures.increment()
            }
            group.leave()
        }
        thread.start()
    }
    group.wait()
    let elapsed = monotonicSeconds() - start
    guard failures.value == 0 else { throw BenchError("\(failures.value) connections failed") }
    return Double(connections * each) / elapsed
}

final class Counter: @unchecked Sendable {
    private let lock = NSLock()
    private var count = 0
    func increment() { lock.withLock { count += 1 } }
    var value: Int { lock.withLock { count } }
}

/// Times a query in the sqlite3 shell over the database file (its own `.timer`).
func sqliteQuery(_ sql: String, runs: Int) throws -> Samples {
    let script = ".timer on\n.output /dev/null\n" + String(repeating: sql + "\n", count: runs)
    let out = try run(sqlite3, ["-readonly", databasePath], input: script)
    var samples = Samples()
    for line in out.split(separator: "\n") where line.hasPrefix("Run Time: real ") {
        samples.add(Double(line.split(separator: " ")[3]) ?? .nan)
    }
    guard samples.values.count == runs else { throw BenchError("sqlite3 printed \(samples.values.count) timings for \(runs) runs: \(out.prefix(300))") }
    return samples
}

/// The machine the figures come from.
func machine() -> String {
    let cpu = (try? String(contentsOfFile: "/proc/cpuinfo", encoding: .utf8))?.split(separator: "\n")
        .first { $0.hasPrefix("model name") }?.split(separator: ":").last?.trimmingCharacters(in: .whitespaces) ?? "unknown CPU"
    let memory = (try? String(contentsOfFile: "/proc/meminfo", encoding: .utf8))?.split(separator: "\n").first?
        .split(separator: " ").dropFirst().first.flatMap { Int($0) }.map { mb($0 * 1024) } ?? "?"
    var names = utsname()
    uname(&names)
    let kernel = withUnsafeBytes(of: names.release) { String(decoding: $0.prefix { $0 != 0 }, as: UTF8.self) }
    return "\(cpu), \(ProcessInfo.processInfo.activeProcessorCount) cores, \(memory) memory, Linux \(kernel)"
}

/// A burst of clients at once, each asking for a month's plans that do not exist yet (the
/// first creates them, the others wait their turn): all must be answered. Baseline: the same
/// burst of one line each against the line-echo server.
func burstFigure(echo: String, echoLine: [UInt8], daemon: String, clients: Int) throws -> Figure {
    let echoBurst = try burst(path: echo, echoLine, clients: clients)
    let daemonBurst = try burst(path: daemon, request("plan.list", #"{"month":"2041-01"}"#), clients: clients, tolerateFailures: true)
    let failed = daemonBurst.failed.map { ", \($0.count) failed (the first: \($0.first))" } ?? ""
    return Figure(name: "\(clients)-client burst of `plan.list` for a new month: \(daemonBurst.served) of \(clients) served\(failed), wall time (p50/p99: each client's latency)",
                  median: ms(daemonBurst.wall) + " (" + ms(daemonBurst.latencies.median) + ")", p99: ms(daemonBurst.latencies.p99),
                  baseline: "line echo: " + ms(echoBurst.wall), ratio: ratio(daemonBurst.wall / echoBurst.wall),
                  target: "all served", met: daemonBurst.served == clients)
}

/// A burst: `clients` connections opened at once from 50 threads (each thread connects all of
/// its clients, then in turn sends each its line, reads the answer and closes it). Returns the wall
/// time, each client's latency from its connect to its answer, and how many answers were not
/// errors.
/// With `tolerateFailures` the failed clients are reported instead of ending the benchmark.
func burst(path: String, _ line: [UInt8], clients: Int, tolerateFailures: Bool = false) throws
    -> (wall: Double, latencies: Samples, served: Int, failed: (count: Int, first: String)?) {
    let threads = 50
    let tally = BurstTally()
    let failures = Counter()
    let firstFailure = FirstFailure()
    let group = DispatchGroup()
    let start = monotonicSeconds()
    for thread in 0..<threads {
        group.enter()
        Thread {
            defer { group.leave() }
            var open: [(socket: LineSocket?, connected: Double)] = []
            for _ in stride(from: thread, to: clients, by: threads) {
                let connected = monotonicSeconds()
                do { open.append((try LineSocket(path: path), connected)) } catch {
                    failures.increment()
                    firstFailure.note("connect: \(error)")
                }
            }
            for index in open.indices {
                guard let socket = open[index].socket else { continue }
                do {
                    try socket.roundTrip(line)
                    tally.add(monotonicSeconds() - open[index].connected, served: !socket.lastLine.contains("\"error\""))
                } catch {
                    failures.increment()
                    firstFailure.note("answer: \(error)")
                }
                // Answered: closed at once, as a client does, so its place goes to the next.
                open[index].socket = nil
            }
        }.start()
    }
    group.wait()
    let wall = monotonicSeconds() - start
    let failed = failures.value == 0 ? nil : (count: failures.value, first: firstFailure.text ?? "?")
    if let failed, !tolerateFailures {
        throw BenchError("\(failed.count) of \(clients) burst clients on \(path) failed; the first: \(failed.first)")
    }
    return (wall, tally.latencies, tally.served, failed)
}

/// The first of several threads' failures.
final class FirstFailure: @unchecked Sendable {
    private let lock = NSLock()
    private var first: String?
    func note(_ text: String) { lock.withLock { if first == nil { first = text } } }
    var text: String? { lock.withLock { first } }
}

/// The burst's clients' latencies and answers, from many threads.
final class BurstTally: @unchecked Sendable {
    private let lock = NSLock()
    private var samples = Samples()
    private var answered = 0

    func add(_ latency: Double, served: Bool) {
        lock.withLock {
            samples.add(latency)
            if served { answered += 1 }
        }
    }

    var latencies: Samples { lock.withLock { samples } }
    var served: Int { lock.withLock { answered } }
}

/// Rounds of a first sync against `tx.import`: seven (with three, one import slowed or sped by the
/// shared machine moved the ratio by a tenth).
let firstSyncRoundCount = 7

/// A first sync against `tx.import` of the same rows (on-chain, linked accounts), in rounds on
/// fresh accounts: each the rows of `csv` by path (the baseline) and a first sync that `begin`
/// starts on the account `kind round` (asset.sync then waits for it, or runs it); the synced
/// account's `member` (`watch`, `link`) must reconcile, and `finish` then ends the sync's source
/// for all rounds but those it keeps. Medians, so one disturbance does not decide.
func firstSyncRounds(_ client: RPCClient, csv: String, rows: Int, kind: String, member: String,
                     begin: (_ asset: String) throws -> Void, finish: (_ asset: String, _ round: Int) throws -> Void) throws
    -> (importSeconds: Double, syncSeconds: Double) {
    var imports = Samples(), syncs = Samples()
    for round in 1...firstSyncRoundCount {
        let synced = "\(kind) \(round)"
        for name in ["Imported \(round)", synced] {
            _ = try client.call("asset.create", ["name": .string(name), "currency": "BTC", "kind": "crypto"])
        }
        var start = monotonicSeconds()
        let imported = try client.call("tx.import", ["asset": .string("Imported \(round)"), "path": .string(csv)], timeoutMilliseconds: 600_000)
        imports.add(monotonicSeconds() - start)
        guard imported["imported"]?.intValue == rows else { throw BenchError("tx.import: \(JSONSerializer.serialize(imported))") }
        start = monotonicSeconds()
        try begin(synced)
        _ = try client.call("asset.sync", ["asset": .string(synced)], timeoutMilliseconds: 600_000)
        syncs.add(monotonicSeconds() - start)
        let asset = try client.call("asset.get", ["asset": .string(synced)])
        guard asset[member]?["reconciled"] == true else { throw BenchError("the first sync did not reconcile: \(JSONSerializer.serialize(asset))") }
        try finish(synced, round)
    }
    return (imports.median, syncs.median)
}
