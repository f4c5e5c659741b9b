import SavingsCore

/// The named types of results, beside the `Wire` functions that write them: `rpc.discover`
/// carries them under `components.schemas`, and results refer to them with `Schema.ref`.
extension Wire {
    public static let components: [String: JSONValue] = [
        "GoalRecord": goalRecordSchema,
        "Goal": goalSchema,
        "Funding": fundingSchema,
        "Asset": assetSchema,
        "AssetAllocation": assetAllocationSchema,
        "Allocation": allocationSchema,
        "Watch": watchSchema,
        "PendingTransaction": pendingSchema,
        "Link": linkSchema,
        "Transaction": transactionSchema,
        "AllocationHistoryEntry": historyEntrySchema,
        "Rate": rateSchema,
        "Plan": planSchema,
        "MonthGoal": monthGoalSchema,
        "MonthTotals": monthTotalsSchema,
        "MonthProgress": monthProgressSchema,
        "MonthSummary": monthSummarySchema,
        "OnchainSummary": syncSummary(count: "watched", "The assets that watch a chain at a glance; with none, only `watched` (0).",
                                      extra: ["pending": Schema.described(Schema.count, "transactions waiting for confirmations")]),
        "LinkedSummary": syncSummary(count: "linked", "The assets linked to an account at a glance; with none, only `linked` (0)."),
        "AssetName": assetNameSchema,
        "Counts": countsSchema,
    ]

    static let goalRecordProperties: [String: JSONValue] = [
        "id": Schema.id,
        "name": Schema.string,
        "currency": Schema.currency,
        "target_amount": Schema.decimal,
        "deadline": Schema.date,
        "start_date": Schema.date,
        "archived": Schema.boolean,
        "notes": Schema.nullable(Schema.string),
        "created_at": Schema.timestamp,
        "updated_at": Schema.timestamp,
    ]

    static let goalRecordSchema = Schema.object(goalRecordProperties, "A goal as stored, without its figures.")

    /// The properties of a goal with its figures (SPEC 4.2).
    public static let goalProperties: [String: JSONValue] = goalRecordProperties.merging([
        "current_total": Schema.described(Schema.decimal, "what the goal's allocations are worth, in its currency"),
        "progress": Schema.described(Schema.decimal, "current_total / target_amount, 4 places, at most 1"),
        "remaining": Schema.described(Schema.decimal, "target_amount less current_total, at least 0"),
        "incomplete": Schema.described(Schema.boolean, "a rate is missing: current_total leaves out what it could not convert"),
        "missing_rates": Schema.array(Schema.pair),
        "stale": Schema.described(Schema.boolean, "a rate used is older than the staleness limit"),
        "stale_rates": Schema.array(Schema.pair),
        "funding": Schema.array(Schema.ref("Funding")),
    ]) { $1 }

    static let goalSchema = Schema.object(goalProperties, "A goal with its figures: the same object wherever a goal is returned.")

    static let fundingSchema = Schema.object([
        "asset_id": Schema.id,
        "asset_name": Schema.string,
        "asset_currency": Schema.currency,
        "funded": Schema.described(Schema.decimal, "the part of the asset allocated to the goal, in the asset's currency"),
        "rate": Schema.nullable(Schema.decimal),
        "rate_as_of": Schema.nullable(Schema.timestamp),
        "rate_path": Schema.array(Schema.ratePath),
        "rate_providers": Schema.array(Schema.string),
        "value": Schema.described(Schema.nullable(Schema.decimal), "funded in the goal's currency; null without a rate"),
    ], "One asset's part of a goal.")

    static let assetSchema = Schema.object([
        "id": Schema.id,
        "name": Schema.string,
        "currency": Schema.currency,
        "kind": Schema.enumeration(Asset.Kind.self),
        "address": Schema.nullable(Schema.string),
        "notes": Schema.nullable(Schema.string),
        "balance": Schema.decimal,
        "allocated": Schema.decimal,
        "unallocated": Schema.decimal,
        "over_allocated": Schema.boolean,
        "value": Schema.described(Schema.nullable(Schema.decimal), "the balance in value_currency; null without a rate"),
        "value_currency": Schema.currency,
        "missing_rates": Schema.array(Schema.pair),
        "allocations": Schema.array(Schema.ref("AssetAllocation")),
        "watch": Schema.described(Schema.nullable(Schema.ref("Watch")), "the chain it watches (asset.watch), or null"),
        "link": Schema.described(Schema.nullable(Schema.ref("Link")), "the account it is linked to (asset.link), or null"),
        "warnings": Schema.described(Schema.array(Schema.string), "asset.watch and asset.link: transactions it already holds that did not come from there"),
        "created_at": Schema.timestamp,
        "updated_at": Schema.timestamp,
    ], optional: ["warnings"], "An asset with its balance, allocations and value.")

    static let assetAllocationSchema = Schema.object([
        "goal_id": Schema.id, "goal_name": Schema.string,
        "amount": Schema.described(Schema.decimal, "the amount allocated, in the asset's currency"),
        "funded": Schema.described(Schema.decimal, "the part of it the balance covers"),
    ], "One goal's allocation of an asset.")

    static let allocationSchema = Schema.object([
        "asset_id": Schema.id, "asset_name": Schema.string, "goal_id": Schema.id, "goal_name": Schema.string,
        "amount": Schema.decimal, "funded": Schema.decimal,
    ], "An allocation of an asset to a goal, in the asset's currency.")

    static let watchSchema = Schema.object([
        "chain": Schema.enumeration(Chain.self),
        "provider": Schema.nullable(Schema.string),
        "xpub": Schema.described(Schema.nullable(Schema.string), "shortened: first 8 and last 4 characters"),
        "addresses": Schema.array(Schema.string),
        "token": Schema.nullable(Schema.string),
        "min_confirmations": Schema.count,
        "last_sync_at": Schema.nullable(Schema.timestamp),
        "last_error": Schema.nullable(Schema.string),
        "height": Schema.nullable(Schema.count),
        "pending": Schema.array(Schema.ref("PendingTransaction")),
        "reported_balance": Schema.nullable(Schema.decimal),
        "reconciled": Schema.nullable(Schema.boolean),
    ], "The chain an asset watches and how its last sync went.")

    static let pendingSchema = Schema.object([
        "txid": Schema.string, "amount": Schema.decimal, "confirmations": Schema.count,
    ], "A transaction with fewer confirmations than min_confirmations: reported, not stored.")

    static let linkSchema = Schema.object([
        "service": Schema.enumeration(LinkedService.self),
        "account": Schema.string,
        "credential": Schema.described(Schema.string, "the credential's name, never its content"),
        "created_at": Schema.timestamp,
        "last_sync_at": Schema.nullable(Schema.timestamp),
        "last_error": Schema.nullable(Schema.string),
        "reported_balance": Schema.nullable(Schema.decimal),
        "reconciled": Schema.nullable(Schema.boolean),
        "first_sync_unfinished": Schema.boolean,
    ], "The account an asset is linked to and how its last sync went.")

    public static let transactionSchema = Schema.object([
        "id": Schema.id,
        "asset_id": Schema.id,
        "amount": Schema.described(Schema.decimal, "signed: a withdrawal is negative"),
        "date": Schema.timestamp,
        "source": Schema.enumeration(AssetTransaction.Source.self),
        "note": Schema.nullable(Schema.string),
        "external_id": Schema.nullable(Schema.string),
        "created_at": Schema.timestamp,
    ], "A transaction of an asset.")

    static let historyEntrySchema = Schema.object([
        "id": Schema.id, "asset_id": Schema.id, "goal_id": Schema.id, "amount": Schema.decimal,
        "timestamp": Schema.timestamp, "created_at": Schema.timestamp, "month": Schema.month,
    ], "An allocation's amount from a moment on.")

    static let rateSchema = Schema.object([
        "base": Schema.currency,
        "quote": Schema.currency,
        "rate": Schema.described(Schema.decimal, "1 base = rate quote"),
        "as_of": Schema.timestamp,
        "age_seconds": Schema.count,
        "stale": Schema.boolean,
        "provider": Schema.string,
        "fetched_at": Schema.timestamp,
    ], "An exchange rate.")

    static let planSchema = Schema.object([
        "id": Schema.id,
        "goal_id": Schema.id,
        "goal_name": Schema.string,
        "month": Schema.month,
        "currency": Schema.currency,
        "required_monthly": Schema.decimal,
        "remaining_amount": Schema.decimal,
        "months_remaining": Schema.count,
        "status": Schema.enumeration(Requirement.Status.self),
        "state": Schema.enumeration(MonthlyPlan.State.self),
        "custom_amount": Schema.nullable(Schema.decimal),
        "effective_amount": Schema.decimal,
        "planned_amount": Schema.described(Schema.decimal, "what the month counts on: 0 when skipped"),
        "is_protected": Schema.boolean,
        "is_skipped": Schema.boolean,
        "flex_state": Schema.enumeration(MonthlyPlan.FlexState.self),
        "needs_review": Schema.boolean,
        "created_at": Schema.timestamp,
        "updated_at": Schema.timestamp,
    ], "A goal's plan for one month.")

    static let monthGoalSchema = Schema.object([
        "goal_id": Schema.id, "goal_name": Schema.string, "currency": Schema.currency,
        "planned": Schema.decimal, "contributed": Schema.decimal, "remaining": Schema.decimal,
        "percent": Schema.described(Schema.nullable(Schema.decimal), "contributed / planned in percent, 1 place; null when nothing was planned"),
        "fulfilled": Schema.boolean,
    ], "One goal's line of a month: planned against contributed, in the goal's currency.")

    static let monthTotalsSchema = Schema.object([
        "currency": Schema.currency, "planned": Schema.decimal, "contributed": Schema.decimal, "remaining": Schema.decimal,
    ], "A month's totals in the display currency.")

    /// A month's execution status (the store's `ExecutionRecord.Status`, which this module does not see).
    public static let executionStatus = Schema.enumeration(["draft", "executing", "closed"])

    static let monthProgressSchema = Schema.object([
        "month": Schema.month,
        "status": executionStatus,
        "started_at": Schema.timestamp,
        "completed_at": Schema.nullable(Schema.timestamp),
        "can_undo_until": Schema.nullable(Schema.timestamp),
        "goals": Schema.array(Schema.ref("MonthGoal")),
        "totals": Schema.described(Schema.nullable(Schema.ref("MonthTotals")), "null for an imported month whose goals had several currencies"),
        "source": Schema.described(Schema.enumeration(["legacy_import"]), "a month imported from the earlier app"),
        "events": Schema.array(Schema.object([
            "at": Schema.timestamp, "asset_id": Schema.id, "goal_id": Schema.id,
            "asset_amount": Schema.decimal, "goal_amount": Schema.nullable(Schema.decimal),
            "kind": Schema.enumeration(DerivedEvent.Kind.self),
        ])),
        "rates": Schema.array(Schema.object(["pair": Schema.pair, "rate": Schema.decimal, "as_of": Schema.nullable(Schema.timestamp)])),
        "incomplete": Schema.boolean,
        "missing_rates": Schema.array(Schema.pair),
    ], optional: ["source"], "A started month: each goal's contributions against its plan, and the events that made them.")

    static let monthSummarySchema = Schema.object([
        "month": Schema.month, "status": executionStatus, "currency": Schema.currency,
        "planned": Schema.decimal, "contributed": Schema.decimal, "remaining": Schema.decimal,
        "goals": Schema.count, "incomplete": Schema.boolean,
    ], "This month in one line, in the dashboard's currency.")

    /// The dashboard's view of synced assets: how many (under `count`), then, when there are
    /// any, the oldest last sync and the assets failing or unreconciled.
    static func syncSummary(count: String, _ description: String, extra: [String: JSONValue] = [:]) -> JSONValue {
        let more: [String: JSONValue] = [
            "oldest_sync_at": Schema.described(Schema.nullable(Schema.timestamp), "null while one has never synced"),
            "failing": Schema.described(Schema.array(Schema.string), "assets whose last sync failed, by name"),
            "unreconciled": Schema.described(Schema.array(Schema.string), "assets whose balance differs from the outside one, by name"),
        ].merging(extra) { $1 }
        return Schema.object(more.merging([count: Schema.count]) { $1 }, optional: Set(more.keys), description)
    }

    static let assetNameSchema = Schema.object(["id": Schema.id, "name": Schema.string], "An asset by id and name.")

    static let countsSchema = Schema.map(Schema.count, "Rows per table or section.")
}
