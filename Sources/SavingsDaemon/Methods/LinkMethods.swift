import Foundation
import SavingsCore
import SavingsRPC

/// `asset.link`, `asset.unlink` (issue 50): assets that take their transactions from an account
/// at an exchange or a bank. `asset.sync` (WatchMethods) syncs them with the watches.
enum LinkMethods {
    /// The dashboard's view of the links: how many, the oldest last sync, and the assets whose
    /// last sync failed or whose balance differs from the service's.
    static func summary(context: DaemonContext) async throws -> JSONValue {
        let links = try await context.database.links()
        guard !links.isEmpty else { return ["linked": 0] }
        return .object(try await WatchMethods.syncSummary(links.values.map { ($0.assetID, $0.lastSyncAt, $0.lastError != nil, $0.reconciled) },
                                                          count: "linked", context: context))
    }

    /// The account a link names when none is given: the asset's currency as the service writes it.
    static func defaultAccount(_ service: LinkedService, asset: Asset) throws -> String {
        let code = asset.currency.code
        switch service {
        case .kraken:
            // Kraken's older codes, which its ledger still uses for these (XXBT, ZEUR).
            let older = ["BTC": "XXBT", "ETH": "XETH", "LTC": "XLTC", "XRP": "XXRP", "XLM": "XXLM", "XMR": "XXMR", "ETC": "XETC", "ZEC": "XZEC",
                         "DOGE": "XXDG", "EUR": "ZEUR", "USD": "ZUSD", "GBP": "ZGBP", "CAD": "ZCAD", "JPY": "ZJPY", "CHF": "CHF", "AUD": "ZAUD"]
            return older[code] ?? code
        case .binance, .coinbase: return code
        case .simplefin:
            throw DomainError.invalidField("account", "name the SimpleFIN account's id (the bank account to read)")
        }
    }

    static func register(into registry: inout MethodRegistry, context: DaemonContext, syncer: LinkSyncer) {
        let database = context.database

        registry.register(MethodSpec(
            "asset.link", summary: "Link an asset to an account at an exchange or a bank; its transactions then come from there.",
            params: [
                AssetMethods.reference,
                .required("service", .string, LinkedService.names),
                .optional("account", .string, "the account at the service: Kraken's asset code (XXBT), Binance's coin, Coinbase's account id or currency, SimpleFIN's account id (default: the asset's currency)"),
                .required("credential", .string, "the name of the credential file that holds the read-only key (never the key itself)"),
            ],
            result: ResultSpec("asset", "the asset (with link), and warnings when it already holds transactions not from the service",
                               schema: Schema.ref("Asset")),
            writes: true)) { params, _ in
            let service = try LinkedService(name: try params.requiredString("service"))
            let credential = try params.requiredString("credential")
            let config = context.liveConfig.current
            guard let store = CredentialStore.current(configured: config.linked.credentials) else {
                throw DomainError(.notConfigured, "no credentials directory: set linked.credentials in the configuration (a directory only you can read), then reload",
                                  details: ["key": "linked.credentials"])
            }
            do throws(CredentialStore.Failure) {
                _ = try store.secret(credential)
            } catch {
                throw DomainError.invalidField("credential", error.description)
            }
            let (found, _) = try await database.link(asset: try params.requiredString("asset"))
            let account = try params.string("account").map(AccountLink.checkAccount) ?? defaultAccount(service, asset: found)
            // A sync of the link this one replaces stores nothing more.
            await syncer.forget(found.id)
            let (asset, _, byHand) = try await database.link(asset: found.id.uuidString, service: service, account: account,
                                                             credential: credential, now: context.clock.now())
            // The first sync starts now, in the background; asset.sync waits for it.
            await syncer.request(asset.id)
            guard case .object(var result) = try await AssetMethods.encode(asset, context: context) else { return .null }
            if byHand > 0 {
                result["warnings"] = [.string("'\(asset.name)' already holds \(byHand) transaction\(byHand == 1 ? "" : "s") not from \(service.title); "
                    + "the service's are added beside them, so remove any it also has (tx.list, tx.delete)")]
            }
            return .object(result)
        }

        registry.register(MethodSpec(
            "asset.unlink", summary: "End an asset's link to its account; the transactions imported so far stay.",
            params: [AssetMethods.reference], result: AssetMethods.assetResult, writes: true)) { params, _ in
            let (asset, _) = try await database.link(asset: try params.requiredString("asset"))
            await syncer.forget(asset.id)
            return try await AssetMethods.encode(try await database.unlinkAccount(asset: asset.id.uuidString), context: context)
        }
    }
}
