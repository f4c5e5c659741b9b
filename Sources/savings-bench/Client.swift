import Foundation
import SavingsRPC
#if canImport(Glibc)
import Glibc
#endif

// The client's start-up against socat, and the system calls behind one round trip.

/// hyperfine's mean time of each command, in seconds. Every command runs through the shell
/// (hyperfine subtracts the shell's own start), since socat's request comes on its standard input.
func hyperfineMeans(_ commands: [String], runs: Int, work: String) throws -> [Double] {
    guard let hyperfine = which("hyperfine") else { throw BenchError("hyperfine is not installed (make bench installs it)") }
    let export = work + "/hyperfine.json"
    try run(hyperfine, ["--warmup", "20", "--runs", String(runs), "--style", "none", "--export-json", export] + commands)
    let document = try JSONParser.parse(try String(contentsOfFile: export, encoding: .utf8))
    guard let results = document["results"]?.arrayValue, results.count == commands.count else {
        throw BenchError("hyperfine wrote no results to \(export)")
    }
    return try results.map { result in
        guard case .number(let text)? = result["mean"]?.unwrapped, let mean = Double(text) else { throw BenchError("hyperfine result without a mean") }
        return mean
    }
}

/// A program's peak resident memory (bytes), as GNU time reports it. (A child's own rusage
/// would not do: spawned from this large process, it counts this process's pages until exec.)
func peakRSS(_ executable: String, _ arguments: [String]) throws -> Int {
    let time = "/usr/bin/time"
    guard access(time, X_OK) == 0 else { throw BenchError("GNU time is not installed (make bench installs it)") }
    let report = NSTemporaryDirectory() + "bench-time-\(UUID().uuidString)"
    defer { try? FileManager.default.removeItem(atPath: report) }
    try run(time, ["-f", "%M", "-o", report, executable] + arguments)
    guard let kilobytes = Int(try String(contentsOfFile: report, encoding: .utf8).trimmingCharacters(in: .whitespacesAndNewlines)) else {
        throw BenchError("GNU time gave no peak memory for \(executable)")
    }
    return kilobytes * 1024
}

/// The system calls a server makes while it answers `count` requests on one connection,
/// counted by `strace -c` attached to it (all its threads): per request, in total and by call.
func syscallsPerRequest(server pid: pid_t, socket path: String, line: [UInt8], count: Int, work: String) throws -> (total: Double, calls: [(String, Double)]) {
    guard let strace = which("strace") else { throw BenchError("strace is not installed (make bench installs it)") }
    let output = work + "/strace-\(pid).txt"
    let tracer = Process()
    tracer.executableURL = URL(fileURLWithPath: strace)
    tracer.arguments = ["-c", "-f", "-q", "-o", output, "-p", String(pid)]
    try Children.run(tracer)
    let connection = try LineSocket(path: path)
    // Attaching takes a moment: requests before every thread is traced would go uncounted.
    usleep(500_000)
    for _ in 0..<count { _ = try connection.roundTrip(line) }
    usleep(100_000)
    kill(tracer.processIdentifier, SIGINT)
    tracer.waitUntilExit()
    var calls: [(String, Double)] = []
    var total = 0.0
    for row in try String(contentsOfFile: output, encoding: .utf8).split(separator: "\n") {
        let fields = row.split(separator: " ", omittingEmptySubsequences: true)
        guard fields.count >= 5, let n = Double(fields[3]) else { continue }
        if fields.last == "total" { total = n } else { calls.append((String(fields.last!), n / Double(count))) }
    }
    return (total / Double(count), calls.sorted { $0.1 > $1.1 })
}

/// "12.0 (read 4.0, write 4.0, …)": the calls of one request, the most frequent first.
func describeCalls(_ counted: (total: Double, calls: [(String, Double)])) -> String {
    let parts = counted.calls.filter { $0.1 >= 0.05 }.prefix(6).map { String(format: "%@ %.1f", $0.0, $0.1) }
    return String(format: "%.1f", counted.total) + " (" + parts.joined(separator: ", ") + ")"
}

/// `savingsctl --version` and a `daemon.ping` round trip through savingsctl, against socat
/// sending the same request (hyperfine, same run), and the peak memory of `savingsctl status`.
func clientStartFigures(savingsctl: String, socket: String, runs: Int, work: String) throws -> [Figure] {
    guard let socat = which("socat") else { throw BenchError("socat is not installed (make bench installs it)") }
    let request = work + "/ping.json"
    try #"{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}"#.appending("\n").write(toFile: request, atomically: true, encoding: .utf8)
    let means = try hyperfineMeans(["\(socat) - UNIX-CONNECT:\(socket) < \(request)", "\(savingsctl) --version",
                                    "\(savingsctl) --socket \(socket) call daemon.ping", "\(savingsctl) --socket \(socket) status"],
                                   runs: runs, work: work)
    let baseline = "`socat` sending `daemon.ping`: " + ms(means[0])
    let rss = try peakRSS(savingsctl, ["--socket", socket, "status"])
    return [
        Figure(name: "`savingsctl --version`, whole process (hyperfine mean)", median: ms(means[1]), p99: "—", baseline: baseline,
               ratio: ratio(means[1] / means[0]), target: "≤ 1.5×", met: means[1] / means[0] <= 1.5),
        Figure(name: "`savingsctl call daemon.ping`, whole process (hyperfine mean)", median: ms(means[2]), p99: "—", baseline: baseline,
               ratio: ratio(means[2] / means[0]), target: "≤ 1.5×", met: means[2] / means[0] <= 1.5),
        Figure(name: "`savingsctl status` (a command read by ArgumentParser), whole process (hyperfine mean)", median: ms(means[3]),
               p99: "—", baseline: baseline, ratio: ratio(means[3] / means[0]), target: "—", met: nil),
        Figure(name: "peak RSS of `savingsctl status`", median: mb(rss), p99: "—", baseline: "—", ratio: "—", target: "—", met: nil),
    ]
}
