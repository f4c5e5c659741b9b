import Foundation
import SavingsCore

// Cost of the derived-contribution calculator against the number of change points in the
// window. Figures are ratios to the 1k-point run measured in the same process.


func timeline(points: Int, goals: Int, seed: UInt64) -> AssetTimeline {
    var random = SeededGenerator(state: seed)
    let ids = (0..<goals).map { _ in UUID() }
    let start = Date(timeIntervalSince1970: 1_800_000_000)
    var changes: [AssetTimeline.Change] = []
    changes.reserveCapacity(points)
    for index in 0..<points {
        let at = start.addingTimeInterval(TimeInterval(index))
        let amount = Decimal(Int(random.next() % 100_000)) / 100
        switch random.next() % 3 {
        case 0: changes.append(.transaction(at: at, amount: amount))
        case 1: changes.append(.transaction(at: at, amount: -amount / 2))
        default: changes.append(.target(at: at, createdAt: at, goalID: ids[Int(random.next() % UInt64(goals))], amount: amount))
        }
    }
    return AssetTimeline(assetID: UUID(), balanceAtStart: 10_000, targetsAtStart: Dictionary(uniqueKeysWithValues: ids.map { ($0, 1000) }),
                         changes: changes)
}

func median(_ runs: Int, _ body: () -> Void) -> Double {
    var samples: [Double] = []
    for _ in 0..<runs {
        let clock = ContinuousClock()
        let elapsed = clock.measure(body)
        samples.append(Double(elapsed.components.seconds) + Double(elapsed.components.attoseconds) / 1e18)
    }
    return samples.sorted()[samples.count / 2]
}

let sizes = CommandLine.arguments.contains("--smoke") ? [100, 1_000] : [1_000, 10_000, 100_000]
let goals = 5
print("derived-contribution calculator, \(goals) goals per asset, median of 5 runs")
print("| change points | median | per point | ratio to \(sizes[0]) | linear would be |")
print("|---:|---:|---:|---:|---:|")
var baseline = 0.0
for size in sizes {
    let input = timeline(points: size, goals: goals, seed: UInt64(size))
    var produced = 0
    let seconds = median(5) { produced = DerivedContributionCalculator.events(for: input).count }
    if baseline == 0 { baseline = seconds }
    print(String(format: "| %d | %.2f ms | %.2f µs | %.1fx | %.0fx |", size, seconds * 1000, seconds / Double(size) * 1e6,
                 seconds / baseline, Double(size) / Double(sizes[0])) + " (\(produced) events)")
}
