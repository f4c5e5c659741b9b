import Foundation
import SavingsCore
import SavingsRPC

/// `rates.*` and `dashboard.get`: conversions and the overview in one currency.
enum RateMethods {
    static func register(into registry: inout MethodRegistry, context: DaemonContext, refresher: RateRefresher) {
        let database = context.database

        registry.register(MethodSpec(
            "rates.refresh", summary: "Refresh rates from the configured provider now.",
            params: [.optional("wait", .boolean, "wait for the outcome (default true)"), ParamSpec.progress],
            result: ResultSpec("refresh", "{\"status\": updated|partial|failed|manual|started, \"providers\": [{provider, status, count, error?, retry_in_seconds?}]}",
                               schema: Self.refreshResult),
            writes: true)) { params, _ in
            guard params.bool("wait") ?? true else {
                Task { _ = await refresher.refresh() }
                return ["status": "started"]
            }
            switch await refresher.refresh() {
            case .manual:
                return ["status": "manual", "providers": [],
                        "message": "no rates provider is configured (rates.provider = \"manual\"): set rates with rates.set"]
            case .ran(let outcomes):
                let failed = outcomes.filter { $0.status == .failed || $0.status == .deferred }
                let status = failed.isEmpty ? "updated" : failed.count == outcomes.count ? "failed" : "partial"
                var result: [String: JSONValue] = ["status": .string(status), "providers": .array(outcomes.map(\.json)),
                                                   "count": .int(outcomes.reduce(0) { $0 + $1.count })]
                if let error = failed.first?.error { result["error"] = .string(error) }
                if outcomes.count == 1 { result["provider"] = .string(outcomes[0].provider) }
                return .object(result)
            }
        }

        registry.register(MethodSpec(
            "rates.history", summary: "Recorded rates of one pair over time, oldest first.",
            params: [.required("base", .string, "base currency"), .required("quote", .string, "quote currency"),
                     .optional("from", .string, "from this date or timestamp"), .optional("to", .string, "up to this date or timestamp"),
                     .optional("limit", .integer(min: 1, max: 10_000), "most entries (default 1000)")],
            result: ResultSpec("history", "{\"rates\": [rate]}", schema: Schema.object(["rates": Schema.array(Schema.ref("Rate"))])), writes: false)) { params, _ in
            let now = context.clock.now()
            let rates = try await database.rateHistory(
                base: try CurrencyCode(try params.requiredString("base"), field: "base"),
                quote: try CurrencyCode(try params.requiredString("quote"), field: "quote"),
                from: try context.bound(params.string("from"), field: "from"),
                to: try context.bound(params.string("to"), field: "to", endOfDay: true), limit: params.int("limit") ?? 1000)
            return ["rates": .array(rates.map { Wire.rate($0, now: now, staleBefore: context.staleBefore) })]
        }

        registry.register(MethodSpec(
            "rates.set", summary: "Record an exchange rate by hand: 1 base = rate quote.",
            params: [
                .required("base", .string, "currency converted from (BTC)"),
                .required("quote", .string, "currency converted to (EUR)"),
                .required("rate", .decimal, "how many quote units one base unit is worth, > 0"),
                .optional("as_of", .string, "when the rate was true, ISO 8601 (default now)"),
            ],
            result: ResultSpec("rate", "the recorded rate", schema: Schema.ref("Rate")), writes: true)) { params, _ in
            let base = try CurrencyCode(try params.requiredString("base"), field: "base")
            let quote = try CurrencyCode(try params.requiredString("quote"), field: "quote")
            guard base != quote else { throw DomainError.invalidField("quote", "must differ from base") }
            let now = context.clock.now()
            let rate = ExchangeRate(base: base, quote: quote, rate: try ExchangeRate.validRate(try params.requiredDecimalText("rate")),
                                    asOf: try context.effectiveDate(params.string("as_of"), field: "as_of"),
                                    provider: "manual", fetchedAt: now)
            return Wire.rate(try await database.recordRate(rate), now: now, staleBefore: context.staleBefore)
        }

        registry.register(MethodSpec(
            "rates.list", summary: "The current rate of every pair, or the history of rates.",
            params: [
                .optional("history", .boolean, "every recorded rate instead of the newest per pair"),
                .optional("base", .string, "only this base (with history)"),
                .optional("quote", .string, "only this quote (with history)"),
                .optional("limit", .integer(min: 1, max: 10_000), "most history entries (default 1000)"),
            ],
            result: ResultSpec("rates", "{\"rates\": [rate], \"pivot\": code, \"provider\": name}", schema: Schema.object([
                "rates": Schema.array(Schema.ref("Rate")),
                "pivot": Schema.described(Schema.currency, "the currency conversions go through when no direct rate exists"),
                "provider": Schema.described(Schema.string, "rates.provider of the configuration"),
            ])), writes: false)) { params, _ in
            let now = context.clock.now()
            let rates: [ExchangeRate]
            if params.bool("history") == true {
                rates = try await database.rateHistory(
                    base: try params.string("base").map { try CurrencyCode($0, field: "base") },
                    quote: try params.string("quote").map { try CurrencyCode($0, field: "quote") },
                    limit: params.int("limit") ?? 1000)
            } else {
                rates = try await context.valuation().portfolio.rates.rates
            }
            return ["rates": .array(rates.map { Wire.rate($0, now: now, staleBefore: context.staleBefore) }),
                    "pivot": .string(context.liveConfig.current.ratesPivot.code),
                    "provider": .string(context.liveConfig.current.ratesProvider)]
        }

        registry.register(MethodSpec(
            "rates.convert", summary: "Convert an amount with the current rates (direct, inverse or through the pivot).",
            params: [
                .required("amount", .decimal, "the amount to convert"),
                .required("from", .string, "its currency"),
                .required("to", .string, "the target currency"),
            ],
            result: ResultSpec("conversion", "result, rate, as_of, age_seconds, path", schema: Schema.object([
                "amount": Schema.decimal, "from": Schema.currency, "to": Schema.currency,
                "result": Schema.described(Schema.decimal, "amount in `to`, rounded to its minor units"),
                "rate": Schema.decimal, "as_of": Schema.nullable(Schema.timestamp), "age_seconds": Schema.nullable(Schema.count),
                "path": Schema.described(Schema.array(Schema.ratePath), "the rates multiplied, `^-1` where inverted; empty from a currency to itself"),
                "providers": Schema.array(Schema.string), "stale": Schema.boolean,
            ])),
            writes: false)) { params, _ in
            let amount = try Amount.parse(try params.requiredDecimalText("amount"))
            let from = try CurrencyCode(try params.requiredString("from"), field: "from")
            let to = try CurrencyCode(try params.requiredString("to"), field: "to")
            let portfolio = try await context.valuation().portfolio
            let rates = portfolio.rates
            guard let conversion = rates.conversion(from: from, to: to) else {
                let pair = RateTable.missingPair(from, to)
                throw DomainError(.rateUnavailable, "no rate for \(pair), directly, inverted or through \(rates.pivot)",
                                  details: ["missing": pair])
            }
            return [
                "amount": .string(Amount.plainText(amount)), "from": .string(from.code), "to": .string(to.code),
                "result": Wire.money(amount * conversion.rate, to),
                "rate": .string(Amount.plainText(conversion.rate)),
                "as_of": conversion.asOf.map(Wire.timestamp) ?? .null,
                "age_seconds": Wire.age(conversion.asOf, now: context.clock.now()),
                "path": .array(conversion.path.map(JSONValue.string)),
                "providers": .array(conversion.providers.map(JSONValue.string)),
                "stale": .bool(portfolio.isStale(conversion)),
            ]
        }

        registry.register(MethodSpec(
            "dashboard.get", summary: "Every active goal with its figures, totals in one currency, this month's plan and progress, stale drafts, rate freshness.",
            params: [.optional("currency", .string, "totals in this currency (default display_currency)"),
                     .optional("goal_fields", .stringArray, "only these fields of each goal, e.g. [\"id\", \"name\", \"progress\"] (default all)")],
            result: ResultSpec("dashboard", "goals, totals, month {month, status, currency, planned, contributed, remaining, goals, incomplete}, stale_drafts, rates, incomplete, missing_rates, onchain {watched, oldest_sync_at, failing, unreconciled, pending}, linked {linked, ...}",
                               schema: Self.dashboardResult),
            writes: false)) { params, _ in
            let currency = try params.string("currency").map { try CurrencyCode($0) } ?? context.liveConfig.current.displayCurrency
            let goalFields = try params.strings("goal_fields").map(Self.goalFields)
            guard case .object(var dashboard) = try await context.dashboard(currency: currency, goalFields: goalFields) else { return .null }
            dashboard["onchain"] = try await WatchMethods.summary(context: context)
            dashboard["linked"] = try await LinkMethods.summary(context: context)
            return .object(dashboard)
        }
    }

    static let refreshResult = Schema.object([
        "status": Schema.enumeration(["updated", "partial", "failed", "manual", "started"]),
        "providers": Schema.array(Schema.object([
            "provider": Schema.string, "status": Schema.enumeration(RateRefresher.ProviderOutcome.Status.self), "count": Schema.count,
            "error": Schema.string, "retry_in_seconds": Schema.count,
        ], optional: ["error", "retry_in_seconds"])),
        "count": Schema.described(Schema.count, "rates stored, over all providers"),
        "error": Schema.described(Schema.string, "the first failure's reason"),
        "provider": Schema.described(Schema.string, "with one provider: its name"),
        "message": Schema.described(Schema.string, "status manual: why nothing was fetched"),
    ], optional: ["providers", "count", "error", "provider", "message"],
       "`wait: false` answers {status: started} at once; `manual` when no provider is configured")

    static let dashboardResult = Schema.object([
        "currency": Schema.currency,
        "goals": Schema.described(Schema.array(Schema.object(Wire.goalProperties, optional: Set(Wire.goalProperties.keys))),
                                  "each active goal (see Goal), with only the fields goal_fields names when given"),
        "totals": Schema.object(["goals_total": Schema.decimal, "unallocated_value": Schema.decimal]),
        "rates": Schema.object([
            "count": Schema.count, "oldest_as_of": Schema.nullable(Schema.timestamp), "newest_as_of": Schema.nullable(Schema.timestamp),
            "oldest_age_seconds": Schema.nullable(Schema.count),
        ]),
        "incomplete": Schema.boolean, "missing_rates": Schema.array(Schema.pair),
        "stale": Schema.boolean, "stale_rates": Schema.array(Schema.pair),
        "month": Schema.ref("MonthSummary"),
        "stale_drafts": Schema.described(Schema.count, "plans of past months nobody executed (plan.stale)"),
        "onchain": Schema.ref("OnchainSummary"),
        "linked": Schema.ref("LinkedSummary"),
    ])

    static let knownGoalFields = Set(Wire.goalProperties.keys)

    /// `goal_fields` checked against the fields a dashboard goal has.
    static func goalFields(_ names: [String]) throws -> Set<String> {
        if let unknown = names.first(where: { !knownGoalFields.contains($0) }) {
            throw RPCError.invalidParams("goal_fields: a goal has no field '\(unknown)' (it has \(knownGoalFields.sorted().joined(separator: ", ")))",
                                         param: "goal_fields")
        }
        return Set(names)
    }
}
