import Foundation
import SavingsCore
import SavingsRPC

/// `asset.watch`, `asset.unwatch`, `asset.sync` (SPEC 10): crypto assets that read their
/// transactions from the chain.
enum WatchMethods {
    /// The dashboard's view of the watches: how many, the oldest last sync, and the assets whose
    /// last sync failed or whose balance differs from the provider's.
    static func summary(context: DaemonContext) async throws -> JSONValue {
        let watches = try await context.database.watches()
        guard !watches.isEmpty else { return ["watched": 0] }
        var summary = try await syncSummary(watches.values.map { ($0.assetID, $0.lastSyncAt, $0.lastError != nil, $0.reconciled) },
                                            count: "watched", context: context)
        summary["pending"] = .int(watches.values.reduce(0) { $0 + $1.pending.count })
        return .object(summary)
    }

    /// What the dashboard says of synced assets (watched chains, linked accounts): how many
    /// (under `count`), the oldest last sync (null while one has none), and by name the assets
    /// whose last sync failed or whose balance differs from the outside one.
    static func syncSummary(_ states: [(asset: UUID, lastSync: Date?, failing: Bool, reconciled: Bool?)], count: String,
                            context: DaemonContext) async throws -> [String: JSONValue] {
        let names = Dictionary(uniqueKeysWithValues: try await context.portfolio().assets.map { ($0.id, $0.name) })
        func named(_ ids: [UUID]) -> JSONValue { .array(ids.compactMap { names[$0] }.sorted().map { .string($0) }) }
        let syncs = states.map(\.lastSync)
        return [
            count: .int(states.count),
            "oldest_sync_at": syncs.contains(nil) ? .null : syncs.compactMap { $0 }.min().map(Wire.timestamp) ?? .null,
            "failing": named(states.filter(\.failing).map(\.asset)),
            "unreconciled": named(states.filter { $0.reconciled == false }.map(\.asset)),
        ]
    }

    /// `asset.sync`: per asset, what a chain's sync did, what a linked account's did, or why it failed.
    static let syncResult = Schema.object(["assets": Schema.array(Schema.oneOf([
        Schema.object([
            "asset": Schema.ref("AssetName"), "added": Schema.count,
            "removed": Schema.described(Schema.array(Schema.string), "txids no longer listed in a block"),
            "pending": Schema.array(Schema.ref("PendingTransaction")), "balance": Schema.decimal, "reported_balance": Schema.decimal,
            "reconciled": Schema.boolean, "height": Schema.nullable(Schema.count),
        ], "a chain's sync"),
        Schema.object([
            "asset": Schema.ref("AssetName"), "service": Schema.enumeration(LinkedService.self), "added": Schema.count,
            "removed": Schema.described(Schema.array(Schema.string), "the service's ids of rows it no longer lists"),
            "balance": Schema.decimal, "reported_balance": Schema.decimal, "reconciled": Schema.boolean,
        ], "a linked account's sync"),
        Schema.object(["asset": Schema.ref("AssetName"), "error": Schema.string], "a sync that failed (when several assets were synced)"),
    ]))])

    static func register(into registry: inout MethodRegistry, context: DaemonContext, syncers: Syncers) {
        let syncer = syncers.chains
        let database = context.database

        registry.register(MethodSpec(
            "asset.watch", summary: "Watch a chain for a crypto asset: an extended public key or addresses, optionally an ERC-20 token.",
            params: [
                AssetMethods.reference,
                .required("chain", .string, "\(Chain.names)"),
                .optional("xpub", .string, "an extended public key (xpub/ypub/zpub, tpub/vpub on testnet, Ltub/Mtub): receive and change chains"),
                .optional("addresses", .stringArray, "addresses instead of a key (base58 or bech32/bech32m; ethereum: 0x and 40 hex)"),
                .optional("token", .string, "an ERC-20 contract on ethereum: the asset then holds that token"),
                .optional("min_confirmations", .integer(min: 1, max: WatchTarget.maxConfirmations), "confirmations before a transaction counts (default 1)"),
            ],
            result: ResultSpec("asset", "the asset (with watch), and warnings when it already holds transactions not from the chain",
                               schema: Schema.ref("Asset")),
            writes: true)) { params, _ in
            let chain = try Chain(name: try params.requiredString("chain"))
            let target = try WatchTarget(chain: chain, xpub: params.string("xpub"), addresses: params.strings("addresses") ?? [],
                                         token: params.string("token"), minConfirmations: params.int("min_confirmations") ?? 1)
            guard context.liveConfig.current.chainProviders[chain.rawValue] != nil else {
                throw DomainError(.notConfigured, "no provider is configured for \(chain.rawValue): add [onchain.\(chain.rawValue)] with provider and url to the configuration, then reload",
                                  details: ["key": "onchain.\(chain.rawValue)"])
            }
            let (asset, _, byHand) = try await database.watch(asset: try params.requiredString("asset"), target: target, now: context.clock.now())
            // The first sync starts now, in the background; asset.sync waits for it.
            await syncer.request(asset.id)
            guard case .object(var result) = try await AssetMethods.encode(asset, context: context) else { return .null }
            if byHand > 0 {
                result["warnings"] = [.string("'\(asset.name)' already holds \(byHand) transaction\(byHand == 1 ? "" : "s") not from the chain; "
                    + "the chain's are added beside them, so remove any that the chain also has (tx.list, tx.delete)")]
            }
            return .object(result)
        }

        registry.register(MethodSpec(
            "asset.unwatch", summary: "Stop watching the chain; the transactions imported so far stay.",
            params: [AssetMethods.reference], result: AssetMethods.assetResult, writes: true)) { params, _ in
            try await AssetMethods.encode(try await database.unwatch(asset: try params.requiredString("asset")), context: context)
        }

        registry.register(MethodSpec(
            "asset.sync", summary: "Sync watched and linked assets now (all of them, or one): from their chains, exchanges and banks.",
            params: [
                .optional("asset", .reference, "one asset's id or name (default: every watched or linked asset)"),
                .optional("progress", .boolean, "send progress notifications {method: \"progress\", params: {phase: \"pages\", done, total}} while a long chain history is read"),
            ],
            result: ResultSpec("synced", "{\"assets\": [{asset, added, removed, pending, balance, reported_balance, reconciled, height} | {asset, service, added, removed, balance, reported_balance, reconciled} | {asset, error}]}",
                               schema: Self.syncResult),
            writes: true)) { params, call in
            var assets: [Asset] = []
            let links = try await database.links()
            if let reference = params.string("asset") {
                let (asset, watch) = try await database.watch(asset: reference)
                guard watch != nil || links[asset.id] != nil else {
                    throw DomainError(.invalidState, "'\(asset.name)' neither watches a chain nor is linked to an account; asset.watch or asset.link first",
                                      details: ["asset": asset.id.uuidString])
                }
                assets = [asset]
            } else {
                let watches = try await database.watches()
                assets = try await context.portfolio().assets.filter { watches[$0.id] != nil || links[$0.id] != nil }
            }
            let progress: ChainSyncer.Progress? = params.bool("progress") == true
                ? { @Sendable page, pages in call.progress("asset.sync", phase: "pages", done: page, total: pages) } : nil
            var results: [JSONValue] = []
            for asset in assets {
                let result: Result<JSONValue, SyncFailure>
                if let link = links[asset.id] {
                    result = await syncers.links.sync(asset.id).map { Wire.linkOutcome($0, asset: asset, service: link.service) }
                } else {
                    result = await syncer.sync(asset.id, progress: progress).map { Wire.syncOutcome($0, asset: asset) }
                }
                switch result {
                case .success(let outcome): results.append(outcome)
                case .failure(let failure):
                    // One asset: its failure is the call's; several: each says how it went.
                    if assets.count == 1, params.string("asset") != nil {
                        throw DomainError(.providerUnavailable, "'\(asset.name)' could not be synced: \(failure.description)",
                                          details: failure.retryInSeconds.map { ["retry_in_seconds": String($0)] } ?? [:])
                    }
                    results.append(["asset": ["id": Wire.id(asset.id), "name": .string(asset.name)], "error": .string(failure.description)])
                }
            }
            return ["assets": .array(results)]
        }
    }
}
