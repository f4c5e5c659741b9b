import Foundation
import Testing
@testable import SavingsCore

@Suite struct DerivedContributionTests {
    let asset = UUID(), a = UUID(), b = UUID()
    func t(_ seconds: TimeInterval) -> Date { Date(timeIntervalSince1970: 1_800_000_000 + seconds) }

    @Test func depositIntoADedicatedAssetCounts() {
        let timeline = AssetTimeline(assetID: asset, balanceAtStart: 100, targetsAtStart: [a: 100], changes: [
            .transaction(at: t(10), amount: 200), .target(at: t(10), createdAt: t(10), goalID: a, amount: 300),
        ])
        let events = DerivedContributionCalculator.events(for: timeline)
        #expect(events == [DerivedEvent(at: t(10), assetID: asset, goalID: a, assetAmount: 200, kind: .deposit)])
    }

    @Test func aSharedAssetsDepositCountsOnlyOnceAllocated() {
        let timeline = AssetTimeline(assetID: asset, balanceAtStart: 100, targetsAtStart: [a: 50, b: 50], changes: [
            .transaction(at: t(10), amount: 100),
            .target(at: t(20), createdAt: t(20), goalID: a, amount: 80),
        ])
        let events = DerivedContributionCalculator.events(for: timeline)
        #expect(events.count == 1)
        #expect(events.first?.kind == .allocation)
        #expect(events.first?.assetAmount == 30)
    }

    @Test func aMoveIsOneReallocationThatNetsToZero() {
        let timeline = AssetTimeline(assetID: asset, balanceAtStart: 100, targetsAtStart: [a: 60, b: 40], changes: [
            .target(at: t(10), createdAt: t(10), goalID: a, amount: 50),
            .target(at: t(10), createdAt: t(10.001), goalID: b, amount: 50),
        ])
        let events = DerivedContributionCalculator.events(for: timeline)
        #expect(events.map(\.kind) == [.reallocation, .reallocation])
        #expect(DerivedContributionCalculator.totals(events) == [a: -10, b: 10])
        #expect(events.reduce(Decimal(0)) { $0 + $1.assetAmount } == 0)
    }

    @Test func aWithdrawalThatOverAllocatesReducesEveryGoalProportionally() {
        let timeline = AssetTimeline(assetID: asset, balanceAtStart: 100, targetsAtStart: [a: 60, b: 40], changes: [
            .transaction(at: t(10), amount: -50),
        ])
        let totals = DerivedContributionCalculator.totals(DerivedContributionCalculator.events(for: timeline))
        #expect(totals == [a: -30, b: -20])
    }

    @Test func eventsAddUpToTheChangeOfFundingOverTheWindow() {
        var random = SeededGenerator(state: 4_5)
        let goals = [a, b, UUID()]
        for _ in 0..<500 {
            var balance = random.amount(maxUnits: 20, scale: 4)
            var targets: [UUID: Decimal] = [:]
            for goal in goals where random.next() % 2 == 0 { targets[goal] = random.amount(maxUnits: 10, scale: 4) }
            let start = FundingCalculator.split(balance: balance, targets: targets).funded
            let initial = (balance, targets)
            var changes: [AssetTimeline.Change] = []
            for step in 0..<Int(random.next() % 12) {
                let at = t(TimeInterval(random.next() % 6))  // collisions on purpose
                switch random.next() % 3 {
                case 0:
                    let amount = random.amount(maxUnits: 10, scale: 4)
                    changes.append(.transaction(at: at, amount: amount))
                case 1:
                    let amount = -random.amount(maxUnits: 10, scale: 4)
                    changes.append(.transaction(at: at, amount: amount))
                default:
                    let goal = goals[Int(random.next() % 3)]
                    changes.append(.target(at: at, createdAt: t(TimeInterval(step) / 1000), goalID: goal,
                                           amount: random.amount(maxUnits: 10, scale: 4)))
                }
            }
            let timeline = AssetTimeline(assetID: asset, balanceAtStart: initial.0, targetsAtStart: initial.1, changes: changes)
            let totals = DerivedContributionCalculator.totals(DerivedContributionCalculator.events(for: timeline))
            // Replay independently to the end state.
            for change in changes.sorted(by: { $0.at < $1.at }) {
                if case .transaction(_, let amount, _) = change { balance += amount }
            }
            var finalTargets = targets
            let rows = changes.enumerated().compactMap { item -> (Date, Date, Int, UUID, Decimal)? in
                if case .target(let at, let createdAt, let goal, let amount) = item.element { return (at, createdAt, item.offset, goal, amount) }
                return nil
            }.sorted { ($0.0, $0.1, $0.2) < ($1.0, $1.1, $1.2) }
            for row in rows { finalTargets[row.3] = row.4 }
            let end = FundingCalculator.split(balance: balance, targets: finalTargets).funded
            for goal in goals {
                #expect((totals[goal] ?? 0) == (end[goal] ?? 0) - (start[goal] ?? 0))
            }
        }
    }
}

/// Skipping the split at change points where every target stays covered changes nothing: the
/// events equal those of splitting at every change point, on random timelines that cross in
/// and out of over-allocation.
@Suite struct DerivedContributionShortcutTests {
    /// The definition, without the shortcut: funded amounts after every change point.
    static func reference(_ timeline: AssetTimeline) -> [UUID: Decimal] {
        var balance = timeline.balanceAtStart, targets = timeline.targetsAtStart
        var totals: [UUID: Decimal] = [:]
        var funded = FundingCalculator.split(balance: balance, targets: targets).funded
        for change in timeline.changes.sorted(by: { $0.at < $1.at }) {
            switch change {
            case .transaction(_, let amount, _): balance += amount
            case .target(_, _, let goal, let amount): targets[goal] = amount
            }
            let next = FundingCalculator.split(balance: balance, targets: targets).funded
            for goal in Set(next.keys).union(funded.keys) { totals[goal, default: 0] += (next[goal] ?? 0) - (funded[goal] ?? 0) }
            funded = next
        }
        return totals.filter { $0.value != 0 }
    }

    /// 40 random change points over three goals: one in `targetEvery` retargets, and
    /// `perInstant` points share each instant (target rows then written up to 2 s apart).
    static func randomTimeline(_ random: inout SeededGenerator, goals: [UUID], targetEvery: UInt64, perInstant: Int) -> AssetTimeline {
        var changes: [AssetTimeline.Change] = []
        for step in 0..<40 {
            let at = Date(timeIntervalSince1970: 1_800_000_000 + Double(step / perInstant))
            if random.next() % targetEvery == 0 {
                let createdAt = perInstant > 1 ? at.addingTimeInterval(Double(random.next() % 3)) : at
                changes.append(.target(at: at, createdAt: createdAt, goalID: goals[Int(random.next() % 3)], amount: Decimal(Int(random.next() % 60))))
            } else {
                changes.append(.transaction(at: at, amount: Decimal(Int(random.next() % 41)) - 20))
            }
        }
        return AssetTimeline(assetID: UUID(), balanceAtStart: Decimal(Int(random.next() % 100)),
                             targetsAtStart: [goals[0]: 30, goals[1]: Decimal(Int(random.next() % 50))], changes: changes)
    }

    @Test func sameTotalsAsSplittingAtEveryChangePoint() {
        var random = SeededGenerator(state: 42)
        let goals = [UUID(), UUID(), UUID()]
        for _ in 0..<300 {
            let timeline = Self.randomTimeline(&random, goals: goals, targetEvery: 5, perInstant: 1)
            let totals = DerivedContributionCalculator.totals(DerivedContributionCalculator.events(for: timeline)).filter { $0.value != 0 }
            #expect(totals == Self.reference(timeline))
        }
    }

    /// A walk continued with later points gives the events a walk over all of them gives,
    /// wherever the points are cut (several points may share an instant, never across the cut).
    @Test func aWalkGoesOnAsIfItHadWalkedEverything() {
        var random = SeededGenerator(state: 4_577)
        let goals = [UUID(), UUID(), UUID()]
        for _ in 0..<300 {
            let timeline = Self.randomTimeline(&random, goals: goals, targetEvery: 4, perInstant: 2)
            let changes = timeline.changes
            let cut = Date(timeIntervalSince1970: 1_800_000_000 + Double(random.next() % 21))
            // As the store reads them: transactions, then target rows, on each side of the cut.
            func side(_ keep: (Date) -> Bool) -> [AssetTimeline.Change] {
                changes.filter { if case .transaction = $0 { keep($0.at) } else { false } }
                    + changes.filter { if case .target = $0 { keep($0.at) } else { false } }
            }
            var prefix = timeline
            prefix.changes = side { $0 <= cut }
            var walk = DerivedContributionWalk(prefix)
            walk.walk(side { $0 > cut })
            #expect(walk.events == DerivedContributionCalculator.events(for: timeline))
        }
    }
}

@Suite struct RunningTotalTests {
    @Test(arguments: ["0", "12.5", "-12.5", "0.000000000000000001", "170141183460469231731.6873037158841", "99999999999999999999.999999999999999999", "-3"])
    func unitsRoundTripExactly(_ text: String) throws {
        let value = try Amount.parse(text)
        if let units = RunningTotal.units(text) {
            #expect(RunningTotal.decimal(units: units) == value)
        }
        var total = RunningTotal(0)
        total.add(value)
        total.add(value, units: RunningTotal.units(text))
        #expect(total.value == value * 2)
        #expect(total.plainText == Amount.plainText(value * 2) && total.isZero == (value == 0))
    }

    @Test func refusesWhatIsNotPlainOrTooFine() {
        for text in ["1e3", "1.", ".5x", "", "-", "0.0000000000000000001", "1,5", "1.2.3"] {
            #expect(RunningTotal.units(text) == nil, "\(text)")
        }
        #expect(RunningTotal.units(".5") == 500_000_000_000_000_000)
    }

    /// Sums beyond 128 bits carry on in Decimal: no overflow, no rounding.
    @Test func sumsPastTheIntegerRangeStayExact() throws {
        let big = try Amount.parse("100000000000000000000")  // 10^20: fits, twice does not
        var total = RunningTotal(big)
        total.add(big)
        total.add(try Amount.parse("0.5"))
        #expect(total.value == (try Amount.parse("200000000000000000000.5")))
        #expect(total.plainText == "200000000000000000000.5" && !total.isZero)
        #expect(!total.isNegative)
        #expect(RunningTotal(-5).isCovered(by: RunningTotal(0)) && RunningTotal(0).isCovered(by: RunningTotal(-5)))
        #expect(!RunningTotal(1).isCovered(by: RunningTotal(-5)))
        #expect(RunningTotal(big).isCovered(by: total) && !total.isCovered(by: RunningTotal(big)))
    }

    /// A Decimal's units read from its own fields agree with those read from its text, for
    /// products and sums of every shape (signs, lengths of 1 to 8 words, trailing zeros, more
    /// than 18 decimals, past 128 bits); on this platform that reading is the one used.
    @Test func unitsFromTheDecimalAgreeWithItsText() throws {
        #expect(DecimalParts.layoutHolds, "Foundation's Decimal layout changed: figures fall back to reading text")
        // The units from the fields are the text's, or, past the 38 digits the text is read to, exactly the value.
        func agreesWithText(_ value: Decimal) -> Bool {
            let fromParts = RunningTotal.units(of: value)
            if let text = RunningTotal.units(value.description) { return fromParts == text }
            return fromParts.map { RunningTotal.decimal(units: $0) == value } ?? true
        }
        var generator = SeededGenerator(state: 11)
        var values: [Decimal] = [0, 1, -1, .nan, Decimal(string: "1e30")!, Decimal(string: "1e-30")!, Decimal(string: "-0.00")!]
        for _ in 0..<2_000 {
            let digits = Int.random(in: 1...30, using: &generator), decimals = Int.random(in: 0...24, using: &generator)
            var text = (0..<digits).map { _ in String(Int.random(in: 0...9, using: &generator)) }.joined()
            if decimals < digits { text.insert(".", at: text.index(text.startIndex, offsetBy: digits - decimals)) }
            if Bool.random(using: &generator) { text = "-" + text }
            guard let value = Decimal(string: text, locale: Locale(identifier: "en_US_POSIX")) else { continue }
            values.append(value)
            values.append(value * Decimal(string: "1.0825")!)
            values.append(value + Decimal(string: "0.000000000000000001")!)
        }
        for value in values {
            #expect(value.isNaN ? RunningTotal.units(of: value) == nil : agreesWithText(value), "\(value)")
            if let units = RunningTotal.units(of: value) { #expect(RunningTotal.decimal(units: units) == value, "\(value)") }
        }
    }
}
