import Foundation
import SavingsCore
import SavingsRPC
#if canImport(Glibc)
import Glibc
#endif

// savings-bench: builds a dataset through savingsd's public import methods, measures the
// figures of BENCHMARKS.md against baselines measured in the same run, and writes the table.
// Its options (`BenchOptions`, `savings-bench --help`): --smoke, --keep, --output FILE, and two
// modes measuring a part alone, --web SOCKET, --linked, --onchain and --one-cpu.

signal(SIGPIPE, SIG_IGN)

let options = BenchOptions.parseOrExit()
let arguments = CommandLine.arguments
let smoke = options.smoke
let keep = options.keep
let output = options.output
let binaries = URL(fileURLWithPath: arguments[0]).resolvingSymlinksInPath().deletingLastPathComponent().path
if let socket = options.nioEcho { try runNIOEcho(socket: socket) }
if let socket = options.blockingPing { try runBlockingPing(socket: socket) }
if let socket = options.web {
    for figure in try webFigures(socket: socket, savingsWeb: binaries + "/savings-web", runs: 100) {
        print("\(figure.name): \(figure.median) (p99 \(figure.p99)); baseline \(figure.baseline); \(figure.ratio), target \(figure.target)")
    }
    exit(0)
}
if options.linked { try measureAlone("linked", savingsd: binaries + "/savingsd", smoke: smoke) { try linkedFigures(work: $0, savingsd: $1, rows: $2) } }
if options.oneCPU { try measureAlone("one-cpu", savingsd: binaries + "/savingsd", smoke: smoke) { work, _, _ in try oneCPUFigures(work: work, binaries: binaries, runs: smoke ? 300 : 4_000) } }
if options.onchain { try measureAlone("onchain", savingsd: binaries + "/savingsd", smoke: smoke) { try onchainFigures(work: $0, savingsd: $1, transactions: $2) } }
let size = smoke ? DatasetSize.smoke : DatasetSize.full
let savingsd = binaries + "/savingsd"
let echoServer = binaries + "/bench-echo"

// The burst holds a thousand connections at once in this process, the daemon and the echo
// server (which inherit the limit).
raiseOpenFileLimit(to: 8_192)

func say(_ text: String) {
    print("[bench] \(text)")
    fflush(nil)
}

var template = Array("/tmp/sdbench-XXXXXX".utf8CString)
guard let made = template.withUnsafeMutableBufferPointer({ mkdtemp($0.baseAddress!) }) else { fatalError("mkdtemp failed") }
let work = String(cString: made)
let signals = stopCleanlyOnSignals(work: { work }, keep: keep)
defer {
    withExtendedLifetime(signals) {}
    if keep {
        say("kept the work directory \(work) (database: \(work)/db/savings.db)")
    } else {
        try? FileManager.default.removeItem(atPath: work)
    }
}
let databasePath = work + "/db/savings.db"
try FileManager.default.createDirectory(atPath: work + "/db", withIntermediateDirectories: true)

var figures: [Figure] = []
var notes: [String] = []

// MARK: - Dataset

let started = Date()
var dataset = Dataset(size: size, directory: work, now: started, seed: 20_261_122)
say("generating the dataset in \(work)")
let legacyPath = try dataset.writeLegacyDocument()
let journalCutoff = dataset.monthStart.addingTimeInterval(-dataset.monthStart.timeIntervalSince(dataset.historyStart)
                                                          * Double(size.journalTransactions) / Double(size.transactions))
let history = try dataset.writeHistory(journalCutoff: journalCutoff)

var daemon = try DaemonUnderTest(executable: savingsd, directory: work, database: databasePath)
@MainActor func call(_ method: String, _ params: [String: JSONValue] = [:]) throws -> JSONValue {
    do {
        return try daemon.client().call(method, params, timeoutMilliseconds: 3_600_000)
    } catch {
        throw BenchError("\(method) failed: \(error)")
    }
}

say("legacy import: \(size.goals) goals, \(size.assets + 1) assets, 12 months of plans, 6 closed")
let legacy = try call("data.legacy_import", ["path": .string(legacyPath)])
notes.append("legacy import: \(JSONSerializer.serialize(legacy["inserted"] ?? .null))")
for (currency, usd) in Dataset.usdPrices.sorted(by: { $0.key < $1.key }) {
    _ = try call("rates.set", ["base": .string(currency), "quote": "USD", "rate": .string(usd)])
}

say("tx.import: \(size.transactions) rows in \(history.files.count) files")
var importSeconds = 0.0
var autoAllocated = 0
for file in history.files {
    let start = monotonicSeconds()
    let result = try call("tx.import", ["asset": .string(file.asset), "path": .string(file.path)])
    importSeconds += monotonicSeconds() - start
    autoAllocated += result["auto_allocated"]?.intValue ?? 0
    guard result["imported"]?.intValue == file.rows else { throw BenchError("tx.import of \(file.path): \(JSONSerializer.serialize(result))") }
}
let importRate = Double(size.transactions) / importSeconds
let allocationRows = legacy["inserted"]?["allocations"]?.intValue ?? 0
notes.append("allocation-history rows: \(allocationRows) written by the legacy import + \(autoAllocated) by deposits allocated automatically during tx.import (\(dataset.autoAllocatedAssets) assets are each reserved for one goal)")

say("baseline: sqlite3 .import of the same rows into a bare table")
let sqlite3 = which("sqlite3") ?? "/usr/bin/sqlite3"
var sqliteImport = Samples()
for attempt in 0..<(smoke ? 1 : 3) {
    let path = work + "/import-\(attempt).db"
    try sqliteImport.time {
        try run(sqlite3, [path],
                input: "PRAGMA journal_mode=WAL;\nCREATE TABLE t(date TEXT, amount TEXT, note TEXT);\n.import --csv \(work)/all.csv t\n")
    }
    if attempt > 0 { try? FileManager.default.removeItem(atPath: path) }
}
let sqliteRate = Double(size.transactions) / sqliteImport.median
figures.append(Figure(name: "`tx.import` of \(size.transactions) CSV rows (\(history.files.count) files)",
                      median: rate(importRate) + " (\(String(format: "%.1f", importSeconds)) s)", p99: "—",
                      baseline: "`sqlite3 .import`: " + rate(sqliteRate), ratio: ratio(importRate / sqliteRate),
                      target: "≥ 0.3×", met: importRate / sqliteRate >= 0.3))

let context = try schemaContext(database: databasePath, bareDatabase: work + "/import-0.db", sqlite3: sqlite3, work: work,
                                rows: size.transactions, importRate: importRate, bareRate: sqliteRate, runs: smoke ? 1 : 3)
figures += context.figures
notes += context.notes

// The month being executed, so month.progress has a live window.
let startedAt = try Timestamp.parse(try call("month.start")["started_at"]?.stringValue ?? "", field: "started_at")

// MARK: - Start-up and memory

say("start to READY=1")
var starts = Samples()
for _ in 0..<(smoke ? 2 : 5) {
    daemon.stop()
    daemon = try DaemonUnderTest(executable: savingsd, directory: work, database: databasePath)
    starts.add(daemon.startSeconds)
}
figures.append(Figure(name: "start to `READY=1` on the full database", median: ms(starts.median), p99: ms(starts.p99),
                      baseline: "—", ratio: "—", target: "≤ 200 ms", met: starts.median <= 0.2))
// The daemon settles one quiet second after start-up (trim, start-up code unmapped).
usleep(2_500_000)
let idle = daemon.memory
figures.append(Figure(name: "idle RSS after start (anonymous + file-backed)", median: mb(idle.rss) + " (" + mb(idle.anonymous) + " + " + mb(idle.fileBacked) + ")",
                      p99: "—", baseline: "—", ratio: "—",
                      target: "≤ 25 MB", met: idle.rss <= 25 << 20))
// For context: once requests have run, their code is mapped again and stays.
_ = try call("dashboard.get")
_ = try call("month.progress")
usleep(2_500_000)
let idleServed = daemon.memory
figures.append(Figure(name: "idle RSS after a first `dashboard.get` and `month.progress` (anonymous + file-backed)",
                      median: mb(idleServed.rss) + " (" + mb(idleServed.anonymous) + " + " + mb(idleServed.fileBacked) + ")",
                      p99: "—", baseline: "—", ratio: "—", target: "—", met: nil))

// MARK: - Round trips

say("round trips: line-echo baseline and daemon.ping")
let echo = try startLineServer(echoServer, [work + "/echo.sock"])
defer { echo.terminate() }
let ping = request("daemon.ping")
let pings = smoke ? 300 : 20_000
// Baseline and daemon take turns, several rounds each, so a passing disturbance of the machine
// weighs on both alike.
let rounds = smoke ? 1 : 5
let echoSocket = try LineSocket(path: work + "/echo.sock"), pingSocket = try LineSocket(path: daemon.socket)
let cpus = Placement.allowedCPUs
/// Sequential round trips of the baseline and the daemon, both servers restricted to
/// `serverCPUs` and this thread to `clientCPUs` (all allowed CPUs: the scheduler's choice).
@MainActor func sequentialRoundTrips(server serverCPUs: [Int], client clientCPUs: [Int]) throws -> (echo: Samples, ping: Samples) {
    try Placement.pin(process: echo.processIdentifier, to: serverCPUs)
    try Placement.pin(process: daemon.process.processIdentifier, to: serverCPUs)
    try Placement.pin(thread: 0, to: clientCPUs)
    defer {
        try? Placement.pin(process: echo.processIdentifier, to: cpus)
        try? Placement.pin(process: daemon.process.processIdentifier, to: cpus)
        try? Placement.pin(thread: 0, to: cpus)
    }
    var echoSamples = Samples(), pingSamples = Samples()
    for _ in 0..<rounds {
        echoSamples.values += try measure(echoSocket, ping, runs: pings / rounds, warmup: 100).values
        pingSamples.values += try measure(pingSocket, ping, runs: pings / rounds, warmup: 100).values
    }
    return (echoSamples, pingSamples)
}
var placements: [(name: String, server: [Int], client: [Int])] = [("client and server on one CPU", [cpus[0]], [cpus[0]])]
if cpus.count > 1 { placements.append(("client and server on different CPUs", [cpus[1]], [cpus[0]])) }
placements.append(("placed by the scheduler", cpus, cpus))
var sequentialEcho = Samples(), sequentialPing = Samples()
for placement in placements {
    let (echoSamples, pingSamples) = try sequentialRoundTrips(server: placement.server, client: placement.client)
    let pinned = placement.server != cpus
    figures.append(Figure(name: "`daemon.ping`, one connection, sequential, \(placement.name) (p50)",
                          median: ms(pingSamples.median), p99: ms(pingSamples.p99),
                          baseline: "line echo (C): " + ms(echoSamples.median) + ", p99 " + ms(echoSamples.p99),
                          ratio: ratio(pingSamples.median / echoSamples.median), target: pinned ? "≤ 1.5×" : "—",
                          met: pinned ? pingSamples.median / echoSamples.median <= 1.5 : nil))
    if !pinned { (sequentialEcho, sequentialPing) = (echoSamples, pingSamples) }
}
// What the one-CPU ratio is made of: the least a SwiftNIO server does per line, and daemon.ping against it.
figures += try nioFloorFigures(savingsBench: binaries + "/savings-bench", work: work, echo: (echo.processIdentifier, echoSocket),
                               daemon: (daemon.process.processIdentifier, pingSocket), line: ping, rounds: rounds, runs: pings / rounds, cpus: cpus)
// What the one-CPU ratio is made of: the system calls of one round trip, counted.
if !smoke {
    let daemonCalls = try syscallsPerRequest(server: daemon.process.processIdentifier, socket: daemon.socket, line: ping, count: 5_000, work: work)
    let echoCalls = try syscallsPerRequest(server: echo.processIdentifier, socket: work + "/echo.sock", line: ping, count: 5_000, work: work)
    notes.append("system calls per `daemon.ping` round trip on one connection (`strace -c -f` attached, 5,000 requests): savingsd \(describeCalls(daemonCalls)); the C line echo \(describeCalls(echoCalls))")
}
let sequentialRate = Double(pings) / sequentialPing.values.reduce(0, +)
let echoSequentialRate = Double(pings) / sequentialEcho.values.reduce(0, +)
figures.append(Figure(name: "`daemon.ping`, one connection, sequential, placed by the scheduler (req/s)", median: rate(sequentialRate), p99: "—",
                      baseline: "line echo: " + rate(echoSequentialRate), ratio: ratio(sequentialRate / echoSequentialRate),
                      target: "—", met: nil))
let each = smoke ? 50 : 2_000
var echoRates: [Double] = [], pingRates: [Double] = []
for _ in 0..<rounds {
    echoRates.append(try throughput(path: work + "/echo.sock", ping, connections: 16, each: each))
    pingRates.append(try throughput(path: daemon.socket, ping, connections: 16, each: each))
}
let echoParallel = echoRates.sorted()[echoRates.count / 2]
let pingParallel = pingRates.sorted()[pingRates.count / 2]
figures.append(Figure(name: "`daemon.ping`, 16 connections (req/s, median of \(rounds) rounds)", median: rate(pingParallel), p99: "—",
                      baseline: "line echo: " + rate(echoParallel), ratio: ratio(pingParallel / echoParallel),
                      target: "≥ 0.6×", met: pingParallel / echoParallel >= 0.6))

let burstClients = ProcessInfo.processInfo.environment["SAVINGS_BENCH_BURST"].flatMap { Int($0) } ?? (smoke ? 100 : 1_000)
figures.append(try burstFigure(echo: work + "/echo.sock", echoLine: ping, daemon: daemon.socket, clients: burstClients))

// MARK: - Figures

say("dashboard.get and goal.get")
let connection = try LineSocket(path: daemon.socket)
let dashboard = request("dashboard.get")
let warm = try measure(connection, dashboard, runs: smoke ? 20 : 300)
// The equivalent aggregation in SQL: balances (the same trigger-kept table savingsd reads),
// allocations capped by the balance, converted through the newest USD rates, summed per goal.
let aggregation = """
    WITH r AS (SELECT base, CAST(rate AS REAL) AS usd FROM rate r1 WHERE quote = 'USD' AND as_of = (SELECT MAX(as_of) FROM rate r2 WHERE r2.base = r1.base AND r2.quote = 'USD') UNION ALL SELECT 'USD', 1.0) \
    SELECT g.id, g.name, g.target_amount, SUM(MIN(CAST(al.amount AS REAL), CAST(b.total AS REAL)) * ra.usd / rg.usd) AS funded \
    FROM goal g LEFT JOIN allocation al ON al.goal_id = g.id LEFT JOIN asset a ON a.id = al.asset_id \
    LEFT JOIN asset_balance b ON b.asset_id = a.id LEFT JOIN r ra ON ra.base = a.currency LEFT JOIN r rg ON rg.base = g.currency \
    WHERE g.archived = 0 GROUP BY g.id ORDER BY g.name;
    """
let fromTransactions = aggregation.replacingOccurrences(of: "LEFT JOIN asset_balance b ON b.asset_id = a.id",
                                                        with: "LEFT JOIN (SELECT r.id AS asset_id, SUM(CAST(t.amount AS REAL)) AS total FROM asset_transaction t JOIN asset_ref r ON r.ref = t.asset GROUP BY t.asset) b ON b.asset_id = a.id")
// The shell's timer counts whole milliseconds, so one run reads as 2 or 3 ms and the median
// jumps between them: the baseline is the mean of the runs, which such rounding leaves unbiased.
let sqliteRuns = smoke ? 5 : 30
let sqliteDashboard = try sqliteQuery(aggregation, runs: sqliteRuns).mean
let sqliteRaw = try sqliteQuery(fromTransactions, runs: smoke ? 2 : 5).mean
let sqliteBaseline = "`sqlite3` aggregation (mean of \(sqliteRuns) runs): " + ms(sqliteDashboard)
figures.append(Figure(name: "`dashboard.get`, full dataset, warm", median: ms(warm.median), p99: ms(warm.p99),
                      baseline: sqliteBaseline,
                      ratio: ratio(warm.median / sqliteDashboard), target: "≤ 3× and ≤ 20 ms",
                      met: warm.median / sqliteDashboard <= 3 && warm.median <= 0.02))
var afterWrite = Samples()
let deposit = request("tx.add", #"{"asset":"Asset 1","amount":"1.00","note":"bench"}"#)
for _ in 0..<(smoke ? 5 : 50) {
    try connection.roundTrip(deposit)
    try afterWrite.time { try connection.roundTrip(dashboard) }
}
figures.append(Figure(name: "`dashboard.get` right after a write (figures recomputed)", median: ms(afterWrite.median), p99: ms(afterWrite.p99),
                      baseline: sqliteBaseline,
                      ratio: ratio(afterWrite.median / sqliteDashboard), target: "≤ 3×", met: afterWrite.median / sqliteDashboard <= 3))
notes.append("the same aggregation summing all \(size.transactions) transactions instead of reading asset_balance takes \(ms(sqliteRaw)) in sqlite3 (mean)")

say("web view: the dashboard page and an event's way to an open page")
figures += try webFigures(socket: daemon.socket, savingsWeb: binaries + "/savings-web", runs: smoke ? 5 : 100)

var goalGet = Samples()
var pick = SeededGenerator(state: 7)
for _ in 0..<(smoke ? 20 : 1_000) {
    let line = request("goal.get", #"{"goal":"\#(Dataset.goalName(Int(pick.next() % UInt64(size.goals))))"}"#)
    try goalGet.time { try connection.roundTrip(line) }
}
figures.append(Figure(name: "`goal.get` of one goal, warm", median: ms(goalGet.median), p99: ms(goalGet.p99), baseline: "—",
                      ratio: "—", target: "≤ 2 ms", met: goalGet.median <= 0.002))

// No index orders every transaction by date (it made history imports rewrite most of itself):
// the newest page across all accounts is a merge of each account's newest rows.
say("tx.list")
for limit in [50, 1000] {
    let list = try measure(connection, request("tx.list", #"{"limit":\#(limit)}"#), runs: smoke ? 5 : 100)
    figures.append(Figure(name: "`tx.list`, newest \(limit) across all \(size.assets + 1) accounts", median: ms(list.median),
                          p99: ms(list.p99), baseline: "—", ratio: "—", target: "—", met: nil))
}

say("month.progress at \(size.progressSteps.map(String.init).joined(separator: " / ")) change points")
var done = 0
/// Deposits of the measurements below into the account holding the change points (in the window too).
var ownDeposits = 0
var progressPoints: [(Double, Double)] = []
for step in size.progressSteps {
    let path = try dataset.writeProgressRows(count: step - done, name: "progress-\(step)", after: startedAt)
    _ = try call("tx.import", ["asset": .string(Dataset.progressAsset), "path": .string(path)])
    done = step
    // The figure is only what it says if every row is inside the month's window.
    let inWindow = try run(sqlite3, ["-readonly", databasePath], input: """
        SELECT COUNT(*) FROM asset_transaction t JOIN asset_ref r ON r.ref = t.asset JOIN asset a ON a.id = r.id
        WHERE a.name = '\(Dataset.progressAsset)' AND t.date > \(Timestamp.milliseconds(startedAt));
        """).trimmingCharacters(in: .whitespacesAndNewlines)
    guard Int(inWindow) == step + ownDeposits else {
        throw BenchError("\(inWindow) progress rows inside the month's window, expected \(step + ownDeposits)")
    }
    let progress = request("month.progress")
    let runs = smoke ? 5 : (step >= 100_000 ? 20 : 50)
    // Polled with nothing written in between, the snapshot's document is reused. After a
    // deposit into another account only that account is read again; after one made now into
    // the account holding the change points, only that deposit is walked; after a backdated
    // one there, every point is walked again: the slope comes from that.
    let samples = try measure(connection, progress, runs: runs, warmup: 1)
    var recomputed = Samples(), extended = Samples(), walked = Samples()
    let ownDeposit = request("tx.add", #"{"asset":"\#(Dataset.progressAsset)","amount":"0.01","note":"bench"}"#)
    let backdated = request("tx.add", #"{"asset":"\#(Dataset.progressAsset)","amount":"0.01","note":"bench","date":"\#(Timestamp.format(startedAt.addingTimeInterval(1)))"}"#)
    for _ in 0..<runs {
        try connection.roundTrip(deposit)
        try recomputed.time { try connection.roundTrip(progress) }
        try connection.roundTrip(ownDeposit)
        try extended.time { try connection.roundTrip(progress) }
        try connection.roundTrip(backdated)
        try walked.time { try connection.roundTrip(progress) }
        ownDeposits += 2
    }
    progressPoints.append((Double(step), walked.median))
    let target = step >= 100_000 ? "≤ 50 ms" : "linear"
    for (label, figure) in [("polled (no write since)", samples), ("right after a deposit into another account", recomputed),
                            ("right after a deposit made now into the same account", extended),
                            ("right after a backdated deposit into the same account (every point walked)", walked)] {
        figures.append(Figure(name: "`month.progress`, \(step) change points, \(label)", median: ms(figure.median),
                              p99: ms(figure.p99), baseline: "—", ratio: "—", target: target,
                              met: step >= 100_000 ? figure.median <= 0.05 : nil))
    }
}
let meanX = progressPoints.map(\.0).reduce(0, +) / Double(progressPoints.count)
let meanY = progressPoints.map(\.1).reduce(0, +) / Double(progressPoints.count)
let slope = progressPoints.map { ($0.0 - meanX) * ($0.1 - meanY) }.reduce(0, +) / progressPoints.map { ($0.0 - meanX) * ($0.0 - meanX) }.reduce(0, +)
let intercept = meanY - slope * meanX
let worst = progressPoints.map { abs($0.1 - (intercept + slope * $0.0)) / max($0.1, 1e-9) }.max() ?? 0
notes.append(String(format: "month.progress right after a backdated deposit into the account holding the change points grows by %.3f ms per 1,000 of them (least squares; intercept %.2f ms; largest deviation from the line %.0f %%)",
                    slope * 1e6, intercept * 1000, worst * 100))

say("hledger baseline")
if let hledger = which("hledger") {
    var ledger = Samples()
    for _ in 0..<(smoke ? 1 : 3) {
        try ledger.time { try run(hledger, ["-f", work + "/ledger.journal", "bal", "-X", "EUR"]) }
    }
    figures.append(Figure(name: "goal balances with price conversion (`dashboard.get` recomputed)",
                          median: ms(afterWrite.median), p99: ms(afterWrite.p99),
                          baseline: "`hledger bal -X EUR`, \(history.journalRows) transactions: " + ms(ledger.median),
                          ratio: String(format: "%.0f× faster", ledger.median / afterWrite.median),
                          target: "≥ 10× faster", met: ledger.median / afterWrite.median >= 10))
} else {
    notes.append("hledger is not installed: its comparison was skipped (`make bench` installs it)")
}

say("files over the connection: \(size.transactions) rows streamed as one file, and its database's backup")
let streaming = try streamingFigures(work: work, allRows: work + "/all.csv", rows: size.transactions, savingsd: savingsd,
                                     savingsctl: binaries + "/savingsctl",
                                     manyFiles: history.files.indices.map { index in
                                         ManyFile(asset: history.files[index].asset, currency: dataset.assetCurrency(index), crypto: dataset.isCrypto(index),
                                                  path: history.files[index].path, rows: history.files[index].rows)
                                     })
figures += streaming.figures
notes += streaming.notes
say("rules: \(size.rulesRows) rows as Kraken's ledgers.csv through the kraken-ledgers preset, against the same rows in the plain format")
let rulesImport = try rulesImportFigures(work: work, savingsd: savingsd, rows: size.rulesRows, rounds: 3, now: started)
figures += rulesImport.figures
notes += rulesImport.notes
say("on-chain: the first sync of an xpub's \(size.chainTransactions) transactions, then a re-sync with nothing new")
figures += try onchainFigures(work: work, savingsd: savingsd, transactions: size.chainTransactions)
say("linked account: the first sync of a Kraken ledger of \(size.chainTransactions) entries")
figures += try linkedFigures(work: work, savingsd: savingsd, rows: size.chainTransactions)

say("savingsctl start-up against socat sending the same request")
figures += try clientStartFigures(savingsctl: binaries + "/savingsctl", socket: daemon.socket, runs: smoke ? 20 : 300, work: work)

let final = daemon.memory
figures.append(Figure(name: "RSS after the whole benchmark (anonymous + file-backed; peak)",
                      median: mb(final.rss) + " (" + mb(final.anonymous) + " + " + mb(final.fileBacked) + "; " + mb(final.peak) + ")", p99: "—",
                      baseline: "—", ratio: "—", target: "≤ 80 MB", met: final.rss <= 80 << 20))
daemon.stop()

say("upgrade: a copy of the database as schema v11 kept it, opened by this savingsd")
let upgrade = try upgradeFigures(database: databasePath, savingsd: savingsd, sqlite3: sqlite3, work: work, transactions: size.transactions)
figures += upgrade.figures
notes += upgrade.notes

// MARK: - Report

let report = Report(smoke: smoke, started: started, size: size, commit: currentCommit(), figures: figures, notes: notes).markdown
print("\n" + report)
if let output {
    try report.write(toFile: output, atomically: true, encoding: .utf8)
    say("wrote \(output)")
}
