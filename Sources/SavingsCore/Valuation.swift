import Foundation

/// Everything the figures depend on, read in one consistent snapshot.
public struct Portfolio: Sendable {
    public var goals: [Goal]
    public var assets: [Asset]
    /// Balance of each asset now (sum of its transactions dated up to now).
    public var balances: [UUID: Decimal]
    public var allocations: [Allocation]
    public var rates: RateTable
    /// Rates with an `as_of` before this are stale: still used, but reported.
    public var staleBefore: Date?
    /// Which stored snapshot this is (0: not from the store). Figures computed from one
    /// snapshot may be reused for as long as the store hands out the same snapshot.
    public var snapshot: UInt64 = 0

    public init(goals: [Goal], assets: [Asset], balances: [UUID: Decimal], allocations: [Allocation], rates: RateTable,
                staleBefore: Date? = nil) {
        self.goals = goals
        self.assets = assets
        self.balances = balances
        self.allocations = allocations
        self.rates = rates
        self.staleBefore = staleBefore
    }

    /// Whether a conversion used a rate older than `staleBefore`.
    public func isStale(_ conversion: Conversion?) -> Bool {
        guard let staleBefore, let asOf = conversion?.asOf else { return false }
        return asOf < staleBefore
    }
}

/// What one asset contributes to one goal.
public struct AssetFunding: Sendable, Equatable {
    public var asset: Asset
    /// Funded amount in asset units.
    public var funded: Decimal
    /// Rate from the asset's currency to the goal's; nil when missing.
    public var conversion: Conversion?
    /// `funded` in the goal's currency; nil when the rate is missing.
    public var value: Decimal?
}

/// SPEC 4.2: a goal's total, progress and remaining, with the breakdown behind them.
public struct GoalFigures: Sendable, Equatable {
    public var goal: Goal
    public var currentTotal: Decimal
    /// min(total / target, 1), rounded down to 4 places so it never shows 1 before the end.
    public var progress: Decimal
    public var remaining: Decimal
    public var funding: [AssetFunding]
    /// Pairs ("BTC/EUR") that could not be converted; the total leaves those assets out.
    public var missingRates: [String]
    /// Pairs used with a rate older than `stale_after`.
    public var staleRates: [String] = []

    public var incomplete: Bool { !missingRates.isEmpty }
}

/// An asset's balance, how it is allocated and funded, and its value.
public struct AssetFigures: Sendable, Equatable {
    public struct Line: Sendable, Equatable {
        public var goalID: UUID
        public var goalName: String
        public var amount: Decimal
        public var funded: Decimal

        public init(goalID: UUID, goalName: String, amount: Decimal, funded: Decimal) {
            self.goalID = goalID
            self.goalName = goalName
            self.amount = amount
            self.funded = funded
        }
    }

    public var asset: Asset
    public var balance: Decimal
    public var allocated: Decimal
    public var unallocated: Decimal
    public var overAllocated: Bool
    public var allocations: [Line]
    public var value: Decimal?
    public var valueCurrency: CurrencyCode
    public var missingRate: String?
}

/// The overview: every active goal, totals in the display currency, what is incomplete.
public struct DashboardFigures: Sendable, Equatable {
    public var currency: CurrencyCode
    public var goals: [GoalFigures]
    public var goalsTotal: Decimal
    public var unallocatedValue: Decimal
    public var missingRates: [String]
    public var staleRates: [String]
    public var oldestRate: Date?
    public var newestRate: Date?
    public var rateCount: Int
}

/// The one calculation behind every figure savingsd shows (goal.get, goal.list, asset.*,
/// dashboard.get): funding splits per asset, then conversions at current rates.
public struct Valuation: Sendable {
    public private(set) var portfolio: Portfolio
    private let splits: [UUID: FundingCalculator.Split]
    private let goalsByID: [UUID: Goal]
    private let assetsByID: [UUID: Asset]
    /// Each goal's funding assets (indexes into `portfolio.assets`, in that order) with the
    /// amount funded: a goal's figures visit its own allocations, not every asset.
    private let fundingByGoal: [UUID: [(asset: Int, funded: Decimal)]]
    /// Conversions between the currencies in the portfolio, worked out once.
    private let conversions: [CurrencyPair: Conversion?]

    private struct CurrencyPair: Hashable, Sendable {
        var from: CurrencyCode
        var to: CurrencyCode
    }

    /// Each asset's allocation targets per goal (what its split was worked out from).
    private let targets: [UUID: [UUID: Decimal]]

    /// `earlier`: a valuation of an earlier snapshot, whose splits (of assets whose balance and
    /// allocations are as they were) and conversions (when the rates are) are taken over
    /// instead of being worked out again. The result is the same either way.
    public init(_ portfolio: Portfolio, reusing earlier: Valuation? = nil) {
        self.portfolio = portfolio
        goalsByID = Dictionary(uniqueKeysWithValues: portfolio.goals.map { ($0.id, $0) })
        assetsByID = Dictionary(uniqueKeysWithValues: portfolio.assets.map { ($0.id, $0) })
        let allocations = Dictionary(grouping: portfolio.allocations, by: \.assetID)
        var splits: [UUID: FundingCalculator.Split] = [:], targets: [UUID: [UUID: Decimal]] = [:]
        for asset in portfolio.assets {
            let assetTargets = Dictionary((allocations[asset.id] ?? []).map { ($0.goalID, $0.amount) }, uniquingKeysWith: +)
            let balance = portfolio.balances[asset.id] ?? 0
            if let earlier, let split = earlier.splits[asset.id], earlier.targets[asset.id] == assetTargets,
               earlier.portfolio.balances[asset.id] ?? 0 == balance {
                splits[asset.id] = split
            } else {
                splits[asset.id] = FundingCalculator.split(balance: balance, targets: assetTargets)
            }
            targets[asset.id] = assetTargets
        }
        self.splits = splits
        self.targets = targets
        var fundingByGoal: [UUID: [(asset: Int, funded: Decimal)]] = [:]
        for (index, asset) in portfolio.assets.enumerated() {
            for (goal, funded) in splits[asset.id]?.funded ?? [:] { fundingByGoal[goal, default: []].append((index, funded)) }
        }
        self.fundingByGoal = fundingByGoal
        var conversions: [CurrencyPair: Conversion?] = [:]
        let currencies = Set(portfolio.assets.map(\.currency)).union(portfolio.goals.map(\.currency))
        if let earlier, earlier.portfolio.rates == portfolio.rates {
            conversions = earlier.conversions
        }
        for from in currencies {
            for to in currencies where conversions[CurrencyPair(from: from, to: to)] == nil {
                conversions[CurrencyPair(from: from, to: to)] = .some(portfolio.rates.conversion(from: from, to: to))
            }
        }
        self.conversions = conversions
    }

    /// The same valuation judged at another `staleBefore` (which rates count as stale); the
    /// splits and conversions do not depend on it.
    public func judged(staleBefore: Date?) -> Valuation {
        var copy = self
        copy.portfolio.staleBefore = staleBefore
        return copy
    }

    /// How many of the rates in use are stale: the stale flags of every figure change only
    /// when this number does.
    public var staleRateCount: Int {
        guard let staleBefore = portfolio.staleBefore else { return 0 }
        return portfolio.rates.rates.reduce(0) { $0 + ($1.asOf < staleBefore ? 1 : 0) }
    }

    /// The pairs of the rates older than `staleBefore`.
    private var staleRates: Set<String> {
        guard let staleBefore = portfolio.staleBefore else { return [] }
        return Set(portfolio.rates.rates.filter { $0.asOf < staleBefore }.map(\.pair))
    }

    /// `RateTable.conversion`, from the table worked out at init when both currencies are known.
    private func conversion(from: CurrencyCode, to: CurrencyCode) -> Conversion? {
        if let known = conversions[CurrencyPair(from: from, to: to)] { return known }
        return portfolio.rates.conversion(from: from, to: to)
    }

    public func goal(_ id: UUID) -> GoalFigures? {
        goalsByID[id].map(figures)
    }

    public func figures(for goal: Goal) -> GoalFigures {
        var funding: [AssetFunding] = []
        var missing = Set<String>(), stale = Set<String>()
        var total = Decimal(0)
        for (index, funded) in fundingByGoal[goal.id] ?? [] {
            let asset = portfolio.assets[index]
            let conversion = conversion(from: asset.currency, to: goal.currency)
            if funded != 0, portfolio.isStale(conversion) { stale.insert(RateTable.missingPair(asset.currency, goal.currency)) }
            let value = conversion.map { funded * $0.rate }
            if let value {
                total += value
            } else if funded > 0 {
                missing.insert(RateTable.missingPair(asset.currency, goal.currency))
            }
            funding.append(AssetFunding(asset: asset, funded: funded, conversion: conversion, value: value))
        }
        var ratio = goal.targetAmount > 0 ? min(total / goal.targetAmount, 1) : 1
        var progress = Decimal()
        NSDecimalRound(&progress, &ratio, 4, .down)
        return GoalFigures(goal: goal, currentTotal: total, progress: progress, remaining: max(0, goal.targetAmount - total),
                           funding: funding, missingRates: missing.sorted(), staleRates: stale.sorted())
    }

    public func asset(_ id: UUID, valueCurrency: CurrencyCode) -> AssetFigures? {
        guard let asset = assetsByID[id], let split = splits[id] else { return nil }
        let balance = portfolio.balances[id] ?? 0
        let lines = portfolio.allocations.filter { $0.assetID == id }.map { allocation in
            AssetFigures.Line(goalID: allocation.goalID, goalName: goalsByID[allocation.goalID]?.name ?? "",
                              amount: allocation.amount, funded: split.funded[allocation.goalID] ?? 0)
        }.sorted { $0.goalName.lowercased() < $1.goalName.lowercased() }
        let conversion = conversion(from: asset.currency, to: valueCurrency)
        return AssetFigures(
            asset: asset, balance: balance, allocated: lines.reduce(0) { $0 + $1.amount },
            unallocated: split.unallocated, overAllocated: split.overAllocated, allocations: lines,
            value: conversion.map { max(balance, 0) * $0.rate }, valueCurrency: valueCurrency,
            missingRate: conversion == nil ? RateTable.missingPair(asset.currency, valueCurrency) : nil)
    }

    /// A goal's figures as `earlier` had them, when everything they come from is as it was:
    /// the goal, the assets funding it and the amounts they fund, the rates and which are stale.
    private func unchanged(_ goal: Goal, known: GoalFigures) -> GoalFigures? {
        guard known.goal == goal else { return nil }
        let funding = fundingByGoal[goal.id] ?? []
        guard known.funding.count == funding.count else { return nil }
        for (old, new) in zip(known.funding, funding) where old.funded != new.funded || old.asset != portfolio.assets[new.asset] {
            return nil
        }
        return known
    }

    /// Every active goal's figures. `earlier`: those of an earlier valuation, taken over for
    /// every goal whose inputs are as they were (after a deposit, all goals but those the asset
    /// funds). The result is the same either way. The earlier figures are met in the same
    /// order unless goals came or went (then they are looked up by id).
    public func activeGoals(reusing earlier: (valuation: Valuation, goals: [GoalFigures])? = nil) -> [GoalFigures] {
        guard let earlier, earlier.valuation.portfolio.rates == portfolio.rates, earlier.valuation.staleRates == staleRates else {
            return portfolio.goals.filter { !$0.archived }.map(figures(for:))
        }
        let previous = earlier.goals
        var byID: [UUID: Int]?
        var result: [GoalFigures] = []
        result.reserveCapacity(previous.count)
        for goal in portfolio.goals where !goal.archived {
            let position = result.count
            var known: GoalFigures?
            if position < previous.count, previous[position].goal.id == goal.id {
                known = previous[position]
            } else {
                if byID == nil {
                    byID = Dictionary(previous.enumerated().map { ($1.goal.id, $0) }, uniquingKeysWith: { first, _ in first })
                }
                known = byID?[goal.id].map { previous[$0] }
            }
            result.append(known.flatMap { unchanged(goal, known: $0) } ?? figures(for: goal))
        }
        return result
    }

    /// `goals`: `activeGoals()` of this valuation, when already at hand.
    public func dashboard(currency: CurrencyCode, goals: [GoalFigures]? = nil) -> DashboardFigures {
        var missing = Set<String>(), stale = Set<String>()
        var goalsTotal = Decimal(0)
        let goals = goals ?? activeGoals()
        // Summed in each goal's currency, then converted once per currency.
        var sums: [CurrencyCode: RunningTotal] = [:]
        for figures in goals {
            if !figures.missingRates.isEmpty { missing.formUnion(figures.missingRates) }
            if !figures.staleRates.isEmpty { stale.formUnion(figures.staleRates) }
            // Totals are never negative: a currency counts once one of its goals holds something.
            if figures.currentTotal > 0 { sums[figures.goal.currency, default: RunningTotal(0)].add(figures.currentTotal) }
        }
        for (code, total) in sums.map({ ($0.key, $0.value.value) }).sorted(by: { $0.0.code < $1.0.code }) {
            if let conversion = conversion(from: code, to: currency) {
                if portfolio.isStale(conversion) { stale.insert(RateTable.missingPair(code, currency)) }
                goalsTotal += total * conversion.rate
            } else {
                missing.insert(RateTable.missingPair(code, currency))
            }
        }
        var unallocatedValue = Decimal(0)
        for asset in portfolio.assets {
            let unallocated = splits[asset.id]?.unallocated ?? 0
            guard unallocated > 0 else { continue }
            if let conversion = conversion(from: asset.currency, to: currency) {
                if portfolio.isStale(conversion) { stale.insert(RateTable.missingPair(asset.currency, currency)) }
                unallocatedValue += unallocated * conversion.rate
            } else {
                missing.insert(RateTable.missingPair(asset.currency, currency))
            }
        }
        let dates = portfolio.rates.rates.map(\.asOf)
        return DashboardFigures(currency: currency, goals: goals, goalsTotal: goalsTotal, unallocatedValue: unallocatedValue,
                                missingRates: missing.sorted(), staleRates: stale.sorted(), oldestRate: dates.min(), newestRate: dates.max(),
                                rateCount: dates.count)
    }
}
