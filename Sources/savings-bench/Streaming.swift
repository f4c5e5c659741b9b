import Foundation
import SavingsRPC
#if canImport(Glibc)
import Glibc
#endif

/// Files over the connection: the benchmark's rows imported as one file by a daemon-side path
/// and, on an identical fresh database, streamed by `savingsctl tx import` (as a user of the
/// system service does); then the streamed database's backup received by `savingsctl backup`.
/// Each daemon's peak RSS (VmHWM) and savingsctl's (ru_maxrss) show memory staying flat
/// whatever the file's size.
func streamingFigures(work: String, allRows: String, rows: Int, savingsd: String, savingsctl: String,
                      manyFiles: [ManyFile]) throws -> (figures: [Figure], notes: [String]) {
    let file = work + "/stream.csv"
    let writer = try Writer(path: file)
    writer.write("date,amount,note\n")
    try writer.close()
    guard let out = FileHandle(forWritingAtPath: file), let source = FileHandle(forReadingAtPath: allRows) else {
        throw BenchError("cannot prepare \(file)")
    }
    out.seekToEndOfFile()
    while let chunk = try source.read(upToCount: 1 << 20), !chunk.isEmpty { out.write(chunk) }
    try out.close()
    let bytes = (try FileManager.default.attributesOfItem(atPath: file)[.size] as? Int) ?? 0

    /// A fresh daemon on a database of its own, with one empty account.
    func freshDaemon(_ name: String) throws -> DaemonUnderTest {
        let directory = work + "/" + name
        try FileManager.default.createDirectory(atPath: directory + "/db", withIntermediateDirectories: true)
        let daemon = try DaemonUnderTest(executable: savingsd, directory: directory, database: directory + "/db/savings.db")
        _ = try daemon.client().call("asset.create", ["name": "Account", "currency": "EUR", "kind": "fiat"])
        return daemon
    }

    // Seven rounds in alternating order, so a passing disturbance of the machine weighs on both
    // alike, and the median of each. One import of a million rows took from 6.9 to 10.0 s from
    // run to run on a shared machine; with three rounds the ratio ran from 0.88× to 1.04× over
    // five runs, where a streamed and a by-path import by hand took the same time. Only the
    // daemon being measured runs: the streamed one of an earlier round is stopped first, and
    // the last round's, streamed last, is kept for the backup.
    // The same rows as one file per account (the dataset's files) on a fresh database of
    // those accounts, in the same rounds (first, last or between the other two in turn).
    let orders: [[Bool]] = (0..<7).map { $0 % 2 == 0 ? [false, true] : [true, false] }
    var pathTimes: [Double] = [], streamTimes: [Double] = [], manyTimes: [Double] = [], pathPeak = 0, streamPeak = 0, clientPeak = 0
    var streamed: DaemonUnderTest?
    for (round, order) in orders.enumerated() {
        // First, between or last; first in the last round, whose streamed database is kept.
        let position = round == orders.count - 1 ? 0 : round % 3
        func manyFilesLeg() throws { manyTimes.append(try importManyFiles(manyFiles, rows: rows, work: work, savingsd: savingsd, before: &streamed)) }
        for (leg, streaming) in order.enumerated() {
            if position == leg { try manyFilesLeg() }
            streamed?.stop()
            streamed = nil
            // What the last daemon wrote goes to disk now, not during the next measurement.
            sync()
            let name = streaming ? "streamed" : "by-path"
            try? FileManager.default.removeItem(atPath: work + "/" + name)
            let daemon = try freshDaemon(name)
            if streaming {
                let uploadLog = work + "/savingsctl-import.log"
                try? FileManager.default.removeItem(atPath: uploadLog)
                let upload = try spawnMeasured(savingsctl, ["--socket", daemon.socket, "tx", "import", "Account", file], log: uploadLog)
                let said = (try? String(contentsOfFile: uploadLog, encoding: .utf8)) ?? ""
                guard said.hasPrefix("\(rows) imported, 0 already present") else { throw BenchError("the streamed import said: \(said.prefix(400))") }
                streamTimes.append(upload.seconds)
                clientPeak = max(clientPeak, upload.peakRSS)
                streamPeak = max(streamPeak, daemon.memory.peak)
                streamed = daemon
            } else {
                let start = monotonicSeconds()
                let result = try daemon.client().call("tx.import", ["asset": "Account", "path": .string(file)], timeoutMilliseconds: 3_600_000)
                pathTimes.append(monotonicSeconds() - start)
                guard result["imported"]?.intValue == rows else { throw BenchError("tx.import by path: \(JSONSerializer.serialize(result))") }
                pathPeak = max(pathPeak, daemon.memory.peak)
                daemon.stop()
            }
        }
        if position == 2 { try manyFilesLeg() }
    }
    guard let streamed else { throw BenchError("no streamed database to back up") }
    let pathSeconds = pathTimes.sorted()[pathTimes.count / 2]
    let streamSeconds = streamTimes.sorted()[streamTimes.count / 2]
    let manyFilesRate = Double(rows) / manyTimes.sorted()[manyTimes.count / 2]
    let pathRate = Double(rows) / pathSeconds, streamRate = Double(rows) / streamSeconds

    let copy = work + "/streamed-backup.db"
    let backup = try spawnMeasured(savingsctl, ["--socket", streamed.socket, "backup", copy], log: work + "/savingsctl-backup.log")
    let backupPeak = streamed.memory.peak
    let backupBytes = (try? FileManager.default.attributesOfItem(atPath: copy)[.size] as? Int) ?? 0
    streamed.stop()
    try? FileManager.default.removeItem(atPath: copy)
    for name in ["by-path", "streamed", "many-files"] { try? FileManager.default.removeItem(atPath: work + "/" + name) }
    try? FileManager.default.removeItem(atPath: file)

    let megabytes = Double(bytes) / 1_048_576
    let figures = [
        Figure(name: "`savingsctl tx import` streaming \(rows) rows as one file (\(String(format: "%.0f", megabytes)) MB) over the connection (median of \(orders.count) rounds, in alternating order)",
               median: rate(streamRate) + " (\(String(format: "%.1f", streamSeconds)) s)", p99: "—",
               baseline: "`tx.import` of the same file by daemon-side path on an identical database: " + rate(pathRate),
               ratio: ratio(streamRate / pathRate), target: "≥ 0.9×", met: streamRate / pathRate >= 0.9),
        Figure(name: "the same streamed import, against `tx.import` by path of the same rows in one file per account, on a fresh database of those accounts (median of \(manyTimes.count) rounds, among the others)",
               median: rate(streamRate), p99: "—", baseline: "by path, one file per account: " + rate(manyFilesRate),
               ratio: ratio(streamRate / manyFilesRate), target: "—", met: nil),
        Figure(name: "daemon peak RSS (VmHWM) importing that file streamed / by path", median: mb(streamPeak) + " / " + mb(pathPeak), p99: "—",
               baseline: "—", ratio: "—", target: "≤ 80 MB streamed", met: streamPeak <= 80 << 20),
        Figure(name: "`savingsctl backup` of that database over the connection (a \(mb(backupBytes)) file)",
               median: String(format: "%.0f MB/s (%.1f s)", Double(backupBytes) / 1_048_576 / backup.seconds, backup.seconds), p99: "—",
               baseline: "—", ratio: "—", target: "—", met: nil),
        Figure(name: "peak RSS streaming: savingsctl sending the import / receiving the backup; the daemon after the backup",
               median: mb(clientPeak) + " / " + mb(backup.peakRSS) + "; " + mb(backupPeak), p99: "—", baseline: "—", ratio: "—",
               target: "flat (≤ 80 MB)", met: max(clientPeak, backup.peakRSS, backupPeak) <= 80 << 20),
    ]
    let notes = ["files over the connection: the streamed import's time includes savingsctl's start, the base64 chunks and the daemon holding the file before it imports it; the backup is taken with SQLite's backup API into a nameless file, then sent (\(mb(backupBytes)))",
                 "one file of a million rows into one account against the same rows as one file per account: rows without an external_id go into no idempotency index (since schema v13), and one file per account appends each account's rows in date order; the one file is the 200 files one after another, so its rows go back and forth in date across the one account's part of the table, which the import's page cache (sized by the file, up to 12 MiB) holds only in part"]
    return (figures, notes)
}

/// One of the dataset's files, with the account it goes to.
struct ManyFile {
    let asset: String
    let currency: String
    let crypto: Bool
    let path: String
    let rows: Int
}

/// The dataset's rows as one file per account by daemon-side path, on a fresh database of those
/// accounts (the streamed daemon kept from a round before is stopped first); the seconds the
/// imports took.
func importManyFiles(_ files: [ManyFile], rows: Int, work: String, savingsd: String, before streamed: inout DaemonUnderTest?) throws -> Double {
    streamed?.stop()
    streamed = nil
    let directory = work + "/many-files"
    try? FileManager.default.removeItem(atPath: directory)
    try FileManager.default.createDirectory(atPath: directory + "/db", withIntermediateDirectories: true)
    let daemon = try DaemonUnderTest(executable: savingsd, directory: directory, database: directory + "/db/savings.db")
    defer { daemon.stop() }
    let client = try daemon.client()
    for file in files {
        _ = try client.call("asset.create", ["name": .string(file.asset), "currency": .string(file.currency), "kind": file.crypto ? "crypto" : "fiat"])
    }
    sync()
    var seconds = 0.0, imported = 0
    for file in files {
        let start = monotonicSeconds()
        let result = try client.call("tx.import", ["asset": .string(file.asset), "path": .string(file.path)], timeoutMilliseconds: 600_000)
        seconds += monotonicSeconds() - start
        guard result["imported"]?.intValue == file.rows else { throw BenchError("tx.import of \(file.path): \(JSONSerializer.serialize(result))") }
        imported += file.rows
    }
    guard imported == rows else { throw BenchError("the files held \(imported) rows, not \(rows)") }
    return seconds
}

/// Runs a program to completion (output to `log`); its wall time and peak RSS (as last seen,
/// every 2 ms, in /proc: a peak in its final moments may be missed).
func spawnMeasured(_ executable: String, _ arguments: [String], log: String) throws -> (seconds: Double, peakRSS: Int) {
    var actions = posix_spawn_file_actions_t()
    posix_spawn_file_actions_init(&actions)
    defer { posix_spawn_file_actions_destroy(&actions) }
    posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0)
    posix_spawn_file_actions_addopen(&actions, 1, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    posix_spawn_file_actions_addopen(&actions, 2, log, O_WRONLY | O_CREAT | O_APPEND, 0o600)
    let argv = ([executable] + arguments).map { strdup($0) } + [nil]
    defer { argv.forEach { free($0) } }
    var pid: pid_t = 0
    let start = monotonicSeconds()
    guard posix_spawn(&pid, executable, &actions, nil, argv, environ) == 0 else { throw BenchError("cannot start \(executable)") }
    // The child's own peak (VmHWM), read while it runs: wait4's ru_maxrss starts from this
    // process's size, which a spawned child's is counted from until its exec.
    var status: Int32 = 0
    var peak = 0
    while true {
        let report = (try? String(contentsOfFile: "/proc/\(pid)/status", encoding: .utf8)) ?? ""
        if let line = report.split(separator: "\n").first(where: { $0.hasPrefix("VmHWM:") }),
           let kilobytes = Int(line.split(separator: " ").dropFirst().first ?? "") {
            peak = max(peak, kilobytes * 1024)
        }
        let done = waitpid(pid, &status, WNOHANG)
        if done == pid { break }
        guard done == 0 || errno == EINTR else { throw BenchError("waitpid: errno \(errno)") }
        usleep(2_000)
    }
    let seconds = monotonicSeconds() - start
    guard status == 0 else {
        let tail = ((try? String(contentsOfFile: log, encoding: .utf8)) ?? "").suffix(400)
        throw BenchError("\(executable) \(arguments.joined(separator: " ")) failed: \(tail)")
    }
    return (seconds, peak)
}
