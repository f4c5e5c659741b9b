import SavingsCore
import SavingsRPC

/// `asset.*`: where money sits, with balance, allocation and value.
enum AssetMethods {
    static let assetResult = ResultSpec("asset", "an asset with balance, allocated, unallocated, value and allocations",
                                        schema: Schema.ref("Asset"))
    static let reference = ParamSpec.required("asset", .reference, "the asset's id or unique name")

    /// The asset object: figures from the one valuation, value in the display currency.
    static func encode(_ asset: Asset, context: DaemonContext) async throws -> JSONValue {
        let valuation = try await context.valuation()
        guard let figures = valuation.asset(asset.id, valueCurrency: context.liveConfig.current.displayCurrency) else {
            throw DomainError.notFound("asset", asset.name)
        }
        return try await encode(figures, context: context)
    }

    /// The asset object of these figures, with the chain it watches or the account it is linked to:
    /// the same object whichever method returns it.
    static func encode(_ figures: AssetFigures, context: DaemonContext) async throws -> JSONValue {
        let asset = figures.asset
        let watch = try await context.database.watch(asset: asset.id.uuidString).1
        let link = try await context.database.link(asset: asset.id.uuidString).1
        return Wire.asset(figures, watch: watch.map { watchJSON($0, asset: asset, context: context) } ?? .null,
                          link: link.map { Wire.link($0, asset: asset) } ?? .null)
    }

    /// The watch object, naming the provider the configuration has for its chain now.
    static func watchJSON(_ watch: AssetWatch, asset: Asset, context: DaemonContext) -> JSONValue {
        let configured = context.liveConfig.current.chainProviders[watch.target.chain.rawValue]?.kind.rawValue
        return Wire.watch(watch, provider: configured ?? watch.provider, asset: asset)
    }

    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        let database = context.database

        registry.register(MethodSpec(
            "asset.create", summary: "Create an asset (a crypto holding or a fiat account).",
            params: [
                .required("name", .string, "unique name"),
                .required("currency", .string, "its currency or coin (BTC, ETH, EUR)"),
                .required("kind", .string, "\"crypto\" or \"fiat\""),
                .optional("address", .string, "wallet address or account reference"),
                .optional("notes", .string, "free text"),
            ],
            result: assetResult, writes: true)) { params, _ in
            let new = try NewAsset(name: try params.requiredString("name"), currency: try params.requiredString("currency"),
                                   kind: try params.requiredString("kind"), address: params.string("address"),
                                   notes: params.string("notes"))
            return try await encode(try await database.createAsset(new, now: context.clock.now()), context: context)
        }

        registry.register(MethodSpec(
            "asset.list", summary: "Every asset with its balance, allocation and value.",
            result: ResultSpec("assets", "{\"assets\": [asset]}", schema: Schema.object(["assets": Schema.array(Schema.ref("Asset"))])),
            writes: false)) { _, _ in
            let valuation = try await context.valuation()
            let currency = context.liveConfig.current.displayCurrency
            let watches = try await database.watches()
            let links = try await database.links()
            return ["assets": .array(valuation.portfolio.assets.compactMap { asset in
                valuation.asset(asset.id, valueCurrency: currency).map { figures in
                    Wire.asset(figures, watch: watches[asset.id].map { watchJSON($0, asset: asset, context: context) } ?? .null,
                               link: links[asset.id].map { Wire.link($0, asset: asset) } ?? .null)
                }
            })]
        }

        registry.register(MethodSpec(
            "asset.get", summary: "One asset by id or name.", params: [reference],
            result: assetResult, writes: false)) { params, _ in
            try await encode(try await database.asset(try params.requiredString("asset")), context: context)
        }

        registry.register(MethodSpec(
            "asset.update", summary: "Change an asset's name, kind, address, notes (currency only while it has no history).",
            params: [
                reference,
                .optional("name", .string, "new unique name"),
                .optional("currency", .string, "new currency (only without transactions or allocations)"),
                .optional("kind", .string, "\"crypto\" or \"fiat\""),
                ParamSpec("address", .string, nullable: true, "new address; null clears it"),
                ParamSpec("notes", .string, nullable: true, "new notes; null clears them"),
            ],
            result: assetResult, writes: true)) { params, _ in
            let changes = AssetChanges(
                name: params.string("name"), currency: params.string("currency"), kind: params.string("kind"),
                address: params.isNull("address") ? "" : params.string("address"),
                notes: params.isNull("notes") ? "" : params.string("notes"))
            guard !changes.isEmpty else {
                throw RPCError.invalidParams("nothing to update: give at least one of name, currency, kind, address, notes")
            }
            let asset = try await database.updateAsset(try params.requiredString("asset"), changes: changes, now: context.clock.now())
            return try await encode(asset, context: context)
        }

        registry.register(MethodSpec(
            "asset.delete", summary: "Delete an asset; one with transactions or allocations only with force.",
            params: [reference, .optional("force", .boolean, "also delete its transactions, allocations and history")],
            result: ResultSpec("deleted", "{\"deleted\": true, \"asset\": {id, name}}",
                               schema: Schema.object(["deleted": Schema.constant(true), "asset": Schema.ref("AssetName")])),
            writes: true)) { params, _ in
            let asset = try await database.deleteAsset(try params.requiredString("asset"), force: params.bool("force") ?? false)
            return ["deleted": true, "asset": ["id": Wire.id(asset.id), "name": .string(asset.name)]]
        }
    }
}
