import Foundation

/// What a legacy import writes, and its report: the steps of SPEC section 8 as pure
/// functions of the document, the clock and the names already taken.
public struct LegacyImportPlan: Sendable {
    public struct FixedAllocation: Sendable, Equatable {
        public var assetID: UUID
        public var goalID: UUID
        public var amount: Decimal
        public var legacyPercentage: Decimal
        /// When the balance it was computed from existed (its initial history row).
        public var at: Date
    }

    public struct Contribution: Sendable, Equatable {
        public var id: UUID
        public var goalID: UUID
        public var assetID: UUID?
        public var planID: UUID
        public var amount: Decimal
        public var currency: CurrencyCode
        public var date: Date
        public var month: MonthLabel
        public var sourceType: String?
    }

    /// A month the earlier app executed: closed ones become frozen records.
    public struct Month: Sendable, Equatable {
        public struct Line: Sendable, Equatable {
            public var goalID: UUID
            public var goalName: String
            public var currency: CurrencyCode
            public var planned: Decimal
            public var contributed: Decimal
            public var isProtected: Bool
            public var isSkipped: Bool
        }
        public var month: MonthLabel
        public var closed: Bool
        public var startedAt: Date
        public var completedAt: Date?
        public var lines: [Line]
    }

    public struct Archived: Sendable, Equatable {
        public var kind: String
        public var legacyID: String
        public var reason: String
        public var raw: String
    }

    public struct Step: Sendable, Equatable {
        public var name: String
        public var counts: [String: Int]
    }

    public var goals: [Goal] = []
    public var assets: [Asset] = []
    public var transactions: [AssetTransaction] = []
    public var allocations: [FixedAllocation] = []
    public var plans: [MonthlyPlan] = []
    public var contributions: [Contribution] = []
    public var months: [Month] = []
    public var archived: [Archived] = []
    public var steps: [Step] = []
    public var warnings: [String] = []
}

public enum LegacyImporter {
    /// Builds the import. `takenGoalNames`/`takenAssetNames` map name keys already used in the
    /// database to their ids, so a re-import keeps its names and a clash gets a suffix.
    public static func plan(_ document: LegacyDocument, now: Date, timeZone: TimeZone, thresholds: PlanningThresholds,
                            takenGoalNames: [String: UUID], takenAssetNames: [String: UUID]) throws -> LegacyImportPlan {
        try document.checkReferences()
        var plan = LegacyImportPlan()
        let current = MonthLabel(now, in: timeZone)

        // Goals and assets (with transactions, or one opening transaction for a bare balance).
        var goalNames = takenGoalNames, assetNames = takenAssetNames
        var goalsByLegacy: [String: Goal] = [:]
        for legacy in document.goals {
            let id = LegacyDocument.uuid(legacy.id, kind: "goal")
            let name = unique(legacy.name, id: id, taken: &goalNames, what: "goal", warnings: &plan.warnings)
            let created = legacy.createdAt ?? document.exportedAt ?? now
            let start = legacy.startDate ?? CalendarDate(created, in: timeZone)
            let goal = Goal(id: id, name: name, currency: legacy.currency, targetAmount: legacy.targetAmount, deadline: legacy.deadline,
                            startDate: min(start, legacy.deadline), archived: false, notes: nil, createdAt: created, updatedAt: created)
            goalsByLegacy[legacy.id] = goal
            plan.goals.append(goal)
        }
        var balances: [String: (asset: Asset, balance: Decimal, asOf: Date)] = [:]
        for legacy in document.assets {
            let id = LegacyDocument.uuid(legacy.id, kind: "asset")
            let name = unique(legacy.name, id: id, taken: &assetNames, what: "asset", warnings: &plan.warnings)
            let created = legacy.createdAt ?? legacy.transactions.map(\.date).min() ?? document.exportedAt ?? now
            let asset = Asset(id: id, name: name, currency: legacy.currency, kind: legacy.currency.isFiat ? .fiat : .crypto,
                              address: nil, notes: nil, createdAt: created, updatedAt: created)
            plan.assets.append(asset)
            var transactions = legacy.transactions.map { tx in
                AssetTransaction(id: LegacyDocument.uuid(tx.id, kind: "transaction"), assetID: id, amount: tx.amount, date: min(tx.date, now),
                                 source: tx.source == "onchain" ? .onchain : tx.source == "manual" ? .manual : .import,
                                 note: nil, externalID: "legacy:\(tx.id)", createdAt: now)
            }
            if transactions.isEmpty, let balance = legacy.balance, balance != 0 {
                transactions = [AssetTransaction(id: LegacyDocument.uuid("opening:\(legacy.id)", kind: "transaction"), assetID: id,
                                                 amount: balance, date: min(created, now), source: .import,
                                                 note: "opening balance from the earlier app", externalID: "legacy:opening:\(legacy.id)",
                                                 createdAt: now)]
            }
            let balance = transactions.reduce(Decimal(0)) { $0 + $1.amount }
            if let stated = legacy.balance, !legacy.transactions.isEmpty, stated != balance {
                plan.warnings.append("asset '\(name)': its transactions sum to \(Amount.plainText(balance)), not the stated balance \(Amount.plainText(stated)); the transactions are used")
            }
            plan.transactions += transactions
            balances[legacy.id] = (asset, balance, min(now, max(created, transactions.map(\.date).max() ?? created)))
        }

        // Step 1: percentage -> fixed allocations.
        var normalised = 0
        for (assetLegacyID, group) in Dictionary(grouping: document.allocations, by: \.assetID).sorted(by: { $0.key < $1.key }) {
            guard let (asset, balance, asOf) = balances[assetLegacyID] else { continue }
            let sum = group.reduce(Decimal(0)) { $0 + $1.percentage }
            if sum > 1 {
                normalised += 1
                plan.warnings.append("asset '\(asset.name)': allocations sum to \(Amount.format(sum * 100, scale: 1)) %; normalised proportionally to 100 %")
            }
            for allocation in group {
                guard let goal = goalsByLegacy[allocation.goalID] else { continue }
                var exact = max(0, balance) * (sum > 1 ? allocation.percentage / sum : allocation.percentage)
                var fixed = Decimal()
                NSDecimalRound(&fixed, &exact, asset.currency.minorUnits, .down)
                guard fixed > 0 else { continue }
                plan.allocations.append(.init(assetID: asset.id, goalID: goal.id, amount: fixed, legacyPercentage: allocation.percentage, at: asOf))
            }
        }
        plan.steps.append(.init(name: "fixed allocations", counts: ["allocations": plan.allocations.count, "normalised_assets": normalised]))

        // Step 2: month labels, by the fallback chain.
        let records = Dictionary(uniqueKeysWithValues: document.executionRecords.map { ($0.id, $0) })
        let contributionsByPlan = Dictionary(grouping: document.contributions.filter { $0.planID != nil }, by: { $0.planID! })
        var inferred: [String: Int] = [:]
        var labelled: [(plan: LegacyDocument.Plan, month: MonthLabel, needsReview: Bool)] = []
        for legacy in document.plans {
            var month = legacy.month, needsReview = false, source = "month_label"
            if month == nil, let record = legacy.executionRecordID.flatMap({ records[$0] }) {
                month = record.month
                source = "execution_record"
            }
            if month == nil, let earliest = contributionsByPlan[legacy.id]?.map(\.date).min() {
                month = MonthLabel(earliest, in: timeZone)
                source = "contribution"
            }
            if month == nil, let created = legacy.createdDate, created <= now,
               created > Calendar(identifier: .gregorian).date(byAdding: .year, value: -1, to: now)! {
                month = MonthLabel(created, in: timeZone)
                source = "created_date"
            }
            if month == nil {
                month = current
                needsReview = true
                source = "needs_review"
                plan.warnings.append("plan \(legacy.id): no month could be inferred; set to \(current) and marked needs_review")
            }
            inferred[source, default: 0] += 1
            labelled.append((legacy, month!, needsReview))
        }
        plan.steps.append(.init(name: "month labels", counts: inferred))

        // Step 3: duplicate (goal, month) plans merged, keeping user overrides; orphans archived.
        var kept: [String: (plan: LegacyDocument.Plan, month: MonthLabel, needsReview: Bool)] = [:]
        var planKeyOfLegacy: [String: String] = [:]
        var merged = 0, orphanPlans = 0
        for entry in labelled {
            guard let goalID = entry.plan.goalID, goalsByLegacy[goalID] != nil else {
                orphanPlans += 1
                plan.archived.append(.init(kind: "monthly_plan", legacyID: entry.plan.id, reason: "its goal no longer exists", raw: entry.plan.raw))
                continue
            }
            let key = "\(goalID)|\(entry.month)"
            planKeyOfLegacy[entry.plan.id] = key
            guard let existing = kept[key] else {
                kept[key] = entry
                continue
            }
            merged += 1
            kept[key] = mergePlans(existing, entry)
            plan.warnings.append("plans \(existing.plan.id) and \(entry.plan.id) are both for goal \(goalsByLegacy[goalID]!.name) in \(entry.month); merged keeping the user's overrides")
        }
        plan.steps.append(.init(name: "duplicate plans", counts: ["merged": merged, "orphaned_archived": orphanPlans]))

        // Step 4: contributions linked to plans (exact month, then +/- 1, then a new plan).
        var planOfKey: [String: (id: UUID, goal: Goal, month: MonthLabel)] = [:]
        for (key, entry) in kept {
            let goal = goalsByLegacy[entry.plan.goalID!]!
            planOfKey[key] = (LegacyDocument.uuid(entry.plan.id, kind: "plan"), goal, entry.month)
        }
        var linked = ["exact": 0, "nearby": 0, "created_plan": 0, "orphaned_archived": 0]
        var autoCreated: [String: [Decimal]] = [:]
        for legacy in document.contributions.sorted(by: { $0.date < $1.date }) {
            guard let goalLegacyID = legacy.goalID, let goal = goalsByLegacy[goalLegacyID] else {
                linked["orphaned_archived"]! += 1
                plan.archived.append(.init(kind: "contribution", legacyID: legacy.id, reason: "it has no goal (or its goal no longer exists)", raw: legacy.raw))
                continue
            }
            let month = legacy.month ?? MonthLabel(legacy.date, in: timeZone)
            var target: String?
            if let planID = legacy.planID, let key = planKeyOfLegacy[planID], planOfKey[key] != nil {
                target = key
                linked["exact"]! += 1
            } else if planOfKey["\(goalLegacyID)|\(month)"] != nil {
                target = "\(goalLegacyID)|\(month)"
                linked["exact"]! += 1
            } else if let near = [month.adding(-1), month.adding(1)].map({ "\(goalLegacyID)|\($0)" }).first(where: { planOfKey[$0] != nil }) {
                target = near
                linked["nearby"]! += 1
            } else {
                let key = "\(goalLegacyID)|\(month)"
                planOfKey[key] = (LegacyDocument.uuid("auto:\(goalLegacyID):\(month)", kind: "plan"), goal, month)
                autoCreated[key] = []
                target = key
                linked["created_plan"]! += 1
            }
            let owner = planOfKey[target!]!
            let currency = legacy.currency ?? goal.currency
            if autoCreated[target!] != nil, currency == goal.currency { autoCreated[target!]!.append(legacy.amount) }
            plan.contributions.append(.init(id: LegacyDocument.uuid(legacy.id, kind: "contribution"), goalID: goal.id,
                                            assetID: legacy.assetID.map { LegacyDocument.uuid($0, kind: "asset") }, planID: owner.id,
                                            amount: legacy.amount, currency: currency, date: legacy.date, month: owner.month,
                                            sourceType: legacy.sourceType))
        }
        plan.steps.append(.init(name: "contribution links", counts: linked))

        // Step 4.5 and 5: plans written with their requirement and state.
        let recordByMonth = Dictionary(document.executionRecords.map { ($0.month, $0) }, uniquingKeysWith: { a, b in
            (a.completedAt ?? .distantPast) >= (b.completedAt ?? .distantPast) ? a : b
        })
        var states: [String: Int] = [:]
        for (key, owner) in planOfKey.sorted(by: { $0.key < $1.key }) {
            let entry = kept[key]
            let contributed = autoCreated[key]?.reduce(0, +) ?? 0
            var requirement = RequirementCalculator.requirement(for: owner.goal, currentTotal: contributed, month: owner.month, thresholds: thresholds)
            if let entry { requirement.requiredMonthly = entry.plan.requiredMonthly }
            let state = planState(month: owner.month, current: current, record: recordByMonth[owner.month])
            states[state.rawValue, default: 0] += 1
            let created = entry?.plan.createdDate ?? now
            plan.plans.append(MonthlyPlan(id: owner.id, goalID: owner.goal.id, month: owner.month, currency: owner.goal.currency,
                                          requirement: requirement, state: state, customAmount: entry?.plan.customAmount,
                                          isProtected: entry?.plan.isProtected ?? false, isSkipped: entry?.plan.isSkipped ?? false,
                                          needsReview: entry?.needsReview ?? false, createdAt: min(created, now),
                                          updatedAt: min(entry?.plan.lastModified ?? created, now)))
        }
        plan.steps.append(.init(name: "recalculated plans", counts: ["recalculated": autoCreated.count]))
        plan.steps.append(.init(name: "plan states", counts: states))

        // Executed months: planned against the contributions the earlier app recorded.
        let goalsByID = Dictionary(uniqueKeysWithValues: plan.goals.map { ($0.id, $0) })
        let importedByPlan = Dictionary(grouping: plan.contributions, by: \.planID)
        for record in recordByMonth.values.sorted(by: { $0.month < $1.month }) where ["closed", "completed", "executing"].contains(record.status) {
            let closed = record.status != "executing"
            guard closed || record.month == current else { continue }
            let lines = plan.plans.filter { $0.month == record.month }.map { monthPlan in
                let goal = goalsByID[monthPlan.goalID]!
                let contributed = (importedByPlan[monthPlan.id] ?? []).filter { $0.currency == goal.currency }.reduce(Decimal(0)) { $0 + $1.amount }
                return LegacyImportPlan.Month.Line(goalID: goal.id, goalName: goal.name, currency: goal.currency, planned: monthPlan.plannedAmount,
                                                   contributed: contributed, isProtected: monthPlan.isProtected, isSkipped: monthPlan.isSkipped)
            }
            let started = record.startedAt ?? record.completedAt ?? now
            plan.months.append(.init(month: record.month, closed: closed, startedAt: min(started, now),
                                     completedAt: closed ? min(record.completedAt ?? started, now) : nil, lines: lines))
        }
        plan.steps.append(.init(name: "executed months", counts: ["closed": plan.months.filter(\.closed).count,
                                                                   "executing": plan.months.filter { !$0.closed }.count]))
        return plan
    }

    /// The merged plan keeps a user override from either (the most recently modified wins).
    static func mergePlans(_ a: (plan: LegacyDocument.Plan, month: MonthLabel, needsReview: Bool),
                           _ b: (plan: LegacyDocument.Plan, month: MonthLabel, needsReview: Bool))
        -> (plan: LegacyDocument.Plan, month: MonthLabel, needsReview: Bool) {
        let (newer, older) = (b.plan.lastModified ?? .distantPast) > (a.plan.lastModified ?? .distantPast) ? (b, a) : (a, b)
        func overridden(_ plan: LegacyDocument.Plan) -> Bool { plan.customAmount != nil || plan.isProtected || plan.isSkipped }
        var keep = overridden(newer.plan) || !overridden(older.plan) ? newer : older
        let other = keep.plan.id == newer.plan.id ? older : newer
        keep.plan.customAmount = keep.plan.customAmount ?? other.plan.customAmount
        keep.plan.isProtected = keep.plan.isProtected || other.plan.isProtected
        keep.plan.isSkipped = keep.plan.isSkipped || other.plan.isSkipped
        keep.plan.executionRecordID = keep.plan.executionRecordID ?? other.plan.executionRecordID
        keep.needsReview = keep.needsReview && other.needsReview
        return keep
    }

    /// Past months are completed; the current and later ones stay drafts unless the earlier app
    /// was executing the current month.
    static func planState(month: MonthLabel, current: MonthLabel, record: LegacyDocument.ExecutionRecord?) -> MonthlyPlan.State {
        if let record {
            if record.status == "closed" || record.status == "completed" { return .completed }
            if record.status == "executing" { return month == current ? .executing : .completed }
        }
        if month < current { return .completed }
        return .draft
    }

    static func unique(_ name: String, id: UUID, taken: inout [String: UUID], what: String, warnings: inout [String]) -> String {
        var candidate = name, n = 1
        while let owner = taken[Goal.nameKey(candidate)], owner != id {
            n += 1
            candidate = "\(name) (\(n))"
        }
        if candidate != name { warnings.append("\(what) '\(name)' is renamed '\(candidate)': the name is taken") }
        taken[Goal.nameKey(candidate)] = id
        return candidate
    }
}
