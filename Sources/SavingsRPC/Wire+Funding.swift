import Foundation
import SavingsCore

extension Wire {
    public static func id(_ uuid: UUID) -> JSONValue { .string(uuid.uuidString.lowercased()) }

    /// Seconds between `date` and `now`, for freshness fields.
    public static func age(_ date: Date?, now: Date) -> JSONValue {
        date.map { .int(max(0, Int(now.timeIntervalSince($0)))) } ?? .null
    }

    /// A goal with its figures (SPEC 4.2): the same object wherever a goal is returned.
    public static func goal(_ figures: GoalFigures) -> JSONValue {
        guard case .object(var object) = goal(figures.goal) else { return .null }
        let currency = figures.goal.currency
        object["current_total"] = money(figures.currentTotal, currency)
        object["progress"] = .string(Amount.format(figures.progress, scale: 4))
        object["remaining"] = money(figures.remaining, currency)
        object["incomplete"] = .bool(figures.incomplete)
        object["missing_rates"] = .array(figures.missingRates.map(JSONValue.string))
        object["stale"] = .bool(!figures.staleRates.isEmpty)
        object["stale_rates"] = .array(figures.staleRates.map(JSONValue.string))
        object["funding"] = .array(figures.funding.map { funding in
            [
                "asset_id": id(funding.asset.id),
                "asset_name": .string(funding.asset.name),
                "asset_currency": .string(funding.asset.currency.code),
                "funded": .string(funding.asset.format(funding.funded)),
                "rate": funding.conversion.map { .string(Amount.plainText($0.rate)) } ?? .null,
                "rate_as_of": funding.conversion?.asOf.map(timestamp) ?? .null,
                "rate_path": .array((funding.conversion?.path ?? []).map(JSONValue.string)),
                "rate_providers": .array((funding.conversion?.providers ?? []).map(JSONValue.string)),
                "value": funding.value.map { money($0, currency) } ?? .null,
            ]
        })
        return .object(object)
    }

    /// `watch`: the asset's `Wire.watch` object, null when it does not watch a chain.
    public static func asset(_ figures: AssetFigures, watch: JSONValue = .null, link: JSONValue = .null) -> JSONValue {
        let asset = figures.asset
        return [
            "id": id(asset.id),
            "name": .string(asset.name),
            "currency": .string(asset.currency.code),
            "kind": .string(asset.kind.rawValue),
            "address": .optional(asset.address),
            "notes": .optional(asset.notes),
            "balance": .string(asset.format(figures.balance)),
            "allocated": .string(asset.format(figures.allocated)),
            "unallocated": .string(asset.format(figures.unallocated)),
            "over_allocated": .bool(figures.overAllocated),
            "value": figures.value.map { money($0, figures.valueCurrency) } ?? .null,
            "value_currency": .string(figures.valueCurrency.code),
            "missing_rates": .array(figures.missingRate.map { [.string($0)] } ?? []),
            "allocations": .array(figures.allocations.map { line in
                ["goal_id": id(line.goalID), "goal_name": .string(line.goalName),
                 "amount": .string(asset.format(line.amount)), "funded": .string(asset.format(line.funded))]
            }),
            "watch": watch,
            "link": link,
            "created_at": timestamp(asset.createdAt),
            "updated_at": timestamp(asset.updatedAt),
        ]
    }

    public static func transaction(_ tx: AssetTransaction, asset: Asset?) -> JSONValue {
        [
            "id": id(tx.id),
            "asset_id": id(tx.assetID),
            "amount": .string(asset?.format(tx.amount) ?? Amount.plainText(tx.amount)),
            "date": timestamp(tx.date),
            "source": .string(tx.source.rawValue),
            "note": .optional(tx.note),
            "external_id": .optional(tx.externalID),
            "created_at": timestamp(tx.createdAt),
        ]
    }

    public static func historyEntry(_ entry: AllocationHistoryEntry, asset: Asset?) -> JSONValue {
        [
            "id": id(entry.id),
            "asset_id": id(entry.assetID),
            "goal_id": id(entry.goalID),
            "amount": .string(asset?.format(entry.amount) ?? Amount.plainText(entry.amount)),
            "timestamp": timestamp(entry.timestamp),
            "created_at": timestamp(entry.createdAt),
            "month": .string(entry.monthLabel.description),
        ]
    }

    public static func rate(_ rate: ExchangeRate, now: Date, staleBefore: Date? = nil) -> JSONValue {
        [
            "stale": .bool(staleBefore.map { rate.asOf < $0 } ?? false),
            "base": .string(rate.base.code),
            "quote": .string(rate.quote.code),
            "rate": .string(Amount.plainText(rate.rate)),
            "as_of": timestamp(rate.asOf),
            "age_seconds": age(rate.asOf, now: now),
            "provider": .string(rate.provider),
            "fetched_at": timestamp(rate.fetchedAt),
        ]
    }

    /// `goals`: the goal lines when already rendered from these figures.
    public static func dashboard(_ figures: DashboardFigures, now: Date, goals: JSONValue? = nil) -> JSONValue {
        [
            "currency": .string(figures.currency.code),
            "goals": goals ?? .array(figures.goals.map(goal)),
            "totals": [
                "goals_total": money(figures.goalsTotal, figures.currency),
                "unallocated_value": money(figures.unallocatedValue, figures.currency),
            ],
            "rates": [
                "count": .int(figures.rateCount),
                "oldest_as_of": figures.oldestRate.map(timestamp) ?? .null,
                "newest_as_of": figures.newestRate.map(timestamp) ?? .null,
                "oldest_age_seconds": age(figures.oldestRate, now: now),
            ],
            "incomplete": .bool(!figures.missingRates.isEmpty),
            "missing_rates": .array(figures.missingRates.map(JSONValue.string)),
            "stale": .bool(!figures.staleRates.isEmpty),
            "stale_rates": .array(figures.staleRates.map(JSONValue.string)),
        ]
    }
}
