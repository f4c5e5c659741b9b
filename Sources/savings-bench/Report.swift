import Foundation
import SavingsCore

/// BENCHMARKS.md: the run's conditions, every figure against its baseline, and the notes.
struct Report {
    let smoke: Bool
    let started: Date
    let size: DatasetSize
    let commit: String
    let figures: [Figure]
    let notes: [String]

    var markdown: String {
        var report = """
        # Benchmarks

        Written by `make bench` (\(smoke ? "smoke mode: a tiny dataset, timings meaningless" : "release build")).

        - machine: \(machine())
        - date: \(Timestamp.format(started))
        - commit: \(commit)
        - dataset (seed 20261122, relative to the current month, loaded through `data.legacy_import` and `tx.import`): \(size.goals) goals in EUR/USD/GBP, \(size.assets) assets (crypto and fiat) plus one for the progress steps, \(size.transactions) transactions over the five years before this month, about \(size.historyRows) allocation-history rows, plans for 12 months of which 6 are closed, the current month executing
        - latency client: compiled Swift, blocking Unix-socket I/O; the baseline server is `bench-echo` (C, one thread per connection)
        - ratios are savingsd ÷ baseline measured in this run (for throughput, savingsd's rate ÷ the baseline's)

        | figure | median | p99 | baseline (same run) | ratio | target | met |
        |---|---:|---:|---|---:|---|:---:|

        """
        for figure in figures {
            let met = figure.met.map { $0 ? "yes" : "**no**" } ?? "—"
            report += "| \(figure.name) | \(figure.median) | \(figure.p99) | \(figure.baseline) | \(figure.ratio) | \(figure.target) | \(met) |\n"
        }
        return report + "\nNotes:\n\n" + notes.map { "- " + $0 }.joined(separator: "\n") + "\n"
    }
}

/// The short hash of the checkout the benchmark was built from.
func currentCommit() -> String {
    (try? run("/usr/bin/git", ["-C", URL(fileURLWithPath: #filePath).deletingLastPathComponent().path, "rev-parse", "--short", "HEAD"]))?
        .trimmingCharacters(in: .whitespacesAndNewlines) ?? "unknown"
}
