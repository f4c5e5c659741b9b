import ArgumentParser

/// The command line (ArgumentParser: `--help` prints this, an unknown argument is refused).
struct BenchOptions: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "savings-bench",
        abstract: "Measure the figures of BENCHMARKS.md against baselines measured in the same run.",
        discussion: "Interrupted (SIGINT, SIGTERM), it stops the daemons and servers it started and removes its work directory.")
    @Flag(help: "A tiny dataset and few repetitions (keeps the benchmark from rotting; its timings mean nothing).") var smoke = false
    @Flag(help: "Leave the work directory (dataset files and database) for profiling by hand.") var keep = false
    @Option(help: "Write the table to this file (else it is printed only).") var output: String?
    @Option(help: ArgumentHelp("Measure only the web view's figures, against the daemon already serving this socket.", valueName: "socket"))
    var web: String?
    @Flag(help: "Measure only the first sync of a linked Kraken account, on a daemon of its own.") var linked = false
    @Flag(help: "Measure only the first sync and re-sync of an xpub from a loopback Blockbook, on a daemon of its own.") var onchain = false
    @Flag(name: .customLong("one-cpu"), help: "Measure only the round trips with client and server on one CPU (the C echo, a SwiftNIO echo, daemon.ping, the blocking prototype).")
    var oneCPU = false
    @Option(help: ArgumentHelp("Serve a SwiftNIO line echo on this socket (the benchmark starts it itself).", valueName: "socket", visibility: .hidden))
    var nioEcho: String?
    @Option(help: ArgumentHelp("Serve daemon.ping on this socket from blocking threads (the benchmark starts it itself).", valueName: "socket", visibility: .hidden))
    var blockingPing: String?
}
