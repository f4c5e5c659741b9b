import Foundation
import Logging
import NIOCore
import SavingsCore
import SavingsRPC
import ServiceLifecycle

/// Syncs linked accounts from their services (issue 50), as `ChainSyncer` does watches: one
/// sync per asset at a time (a sync asked for while one runs shares its outcome), each link on
/// its own schedule and backoff, every page stored in its own transaction, and serving never
/// waits for any of it. The secret is read from its credential at each sync and goes nowhere
/// but the signature.
actor LinkSyncer {
    let context: DaemonContext
    let logger: Logger
    let http: ProviderHTTP
    let proxies: ProxyClients
    /// Called after a sync changed stored transactions (goal checks).
    let changed: @Sendable () async -> Void
    private var running: [UUID: Task<Result<LinkSyncOutcome, SyncFailure>, Never>] = [:]
    private var schedules: [UUID: ProviderSchedule] = [:]
    /// Kraken's call counter is kept per API key: one pace per credential.
    private var paces: [String: CallPace] = [:]
    /// The Kraken sync running with each credential: Kraken wants a key's nonces in order, so
    /// two syncs with one key (two of its currencies) take turns rather than race.
    private var krakenTurns: [String: Task<Result<LinkSyncOutcome, SyncFailure>, Never>] = [:]
    /// SimpleFIN setup tokens being claimed, by credential.
    private var claims: [String: Task<String, any Error>] = [:]
    private let nonces = NonceSource()
    /// Binance's request weight is counted per address and per account: one for the daemon.
    private let binanceWeights = BinanceWeights()
    private var wake: EventLoopPromise<Void>?
    private var requested = Set<UUID>()
    private var stopped = false
    /// Largest answer read: a page of a service's history is tens of KiB.
    static let maxAnswer = 4 << 20

    init(context: DaemonContext, http: ProviderHTTP, proxies: ProxyClients, logger: Logger, changed: @escaping @Sendable () async -> Void) {
        self.context = context
        self.http = http
        self.proxies = proxies
        self.logger = logger
        self.changed = changed
    }

    /// Syncs one linked asset now, or waits for the sync of it already running.
    func sync(_ assetID: UUID) async -> Result<LinkSyncOutcome, SyncFailure> {
        if let task = running[assetID] { return await task.value }
        guard !stopped else { return .failure(SyncFailure(description: "savingsd is stopping")) }
        let task = Task { await self.perform(assetID) }
        running[assetID] = task
        let result = await task.value
        // A link changed meanwhile may have a sync of its own running by now.
        if running[assetID] == task { running[assetID] = nil }
        return result
    }

    /// Stops the sync of an asset whose link is changing (relinked, unlinked): what it reads
    /// belongs to the link before, so it stores nothing more, and nobody waits for it.
    func forget(_ assetID: UUID) {
        running.removeValue(forKey: assetID)?.cancel()
        schedules[assetID] = nil
    }

    /// Has the service sync an asset soon (a new link's first sync), without the caller waiting.
    func request(_ assetID: UUID) {
        requested.insert(assetID)
        wake?.succeed()
        wake = nil
    }

    /// Syncs every link that is due, and those asked for.
    func syncDue() async {
        let links: [UUID: AccountLink]
        do {
            links = try await context.database.links()
        } catch {
            if !Task.isCancelled, !(error is CancellationError) { logger.error("link sync: cannot read the links: \(error)") }
            return
        }
        let now = NIODeadline.now()
        let asked = requested
        requested = []
        schedules = schedules.filter { links[$0.key] != nil }
        for assetID in links.keys.sorted(by: { $0.uuidString < $1.uuidString })
        where asked.contains(assetID) || (schedules[assetID]?.due ?? now) <= now {
            _ = await sync(assetID)
        }
    }

    /// Sleeps until a link is due (at most a minute, so new links and a reloaded configuration
    /// are picked up), or until a new link asks for its first sync.
    func sleepUntilDue() async {
        let now = NIODeadline.now()
        let next = schedules.values.map(\.due).min() ?? now + .seconds(60)
        guard requested.isEmpty else { return }
        let sleep = WakeableSleep(for: max(.milliseconds(50), min(.seconds(60), next - now)))
        wake = sleep.promise
        await sleep.wait()
    }

    func stop() {
        stopped = true
        for task in running.values { task.cancel() }
        wake?.succeed()
        wake = nil
    }

    /// The session for a link, its secret read from the credential now.
    private func session(_ link: AccountLink, config: DaemonConfig) async throws -> any LinkedSession {
        guard let store = CredentialStore.current(configured: config.linked.credentials) else {
            throw ProviderFailure("no credentials directory: set linked.credentials in the configuration, or run savingsd with systemd's LoadCredential=")
        }
        let secret: Secret
        do throws(CredentialStore.Failure) {
            secret = try store.secret(link.credential)
        } catch {
            throw ProviderFailure(error.description)
        }
        let settings = config.linked.service(link.service)
        let http = try await proxies.http(self.http, proxy: settings.proxy, maxBody: Self.maxAnswer)
        switch link.service {
        case .kraken:
            let (key, privateKey) = try LinkedCredential.keyAndSecret(secret, service: .kraken)
            let pace = settings.tier.map { tier in
                paces[link.credential] ?? CallPace(maximum: tier.maximum, decayPerSecond: tier.decayPerSecond)
            }
            paces[link.credential] = pace
            return KrakenSession(base: settings.url, code: link.account, key: key, secret: privateKey, http: http, nonces: nonces, pace: pace)
        case .binance:
            let (key, privateKey) = try LinkedCredential.keyAndSecret(secret, service: .binance)
            return BinanceSession(base: settings.url, coin: link.account.uppercased(), key: key, secret: privateKey, http: http, weights: binanceWeights)
        case .coinbase:
            let (name, pem) = try CoinbaseAnswers.credential(secret.reveal(), name: secret.name)
            return CoinbaseSession(base: settings.url, accountName: link.account, keyName: name, privateKey: pem, http: http)
        case .simplefin:
            var accessURL = secret.reveal()
            if !accessURL.lowercased().hasPrefix("http") {
                // A setup token: claimed once, its access URL kept in its place (SimpleFIN's protocol).
                accessURL = try await claim(secret, store: store, http: http)
            }
            let access: (base: URL, authorization: String)
            do throws(ServiceSigning.Failure) {
                access = try SimpleFINAccess.split(accessURL: accessURL)
            } catch {
                throw ProviderFailure("the credential '\(secret.name)' is not a SimpleFIN access URL: \(error.description)")
            }
            var base = access.base.absoluteString
            while base.hasSuffix("/") { base.removeLast() }
            return SimpleFINSession(base: base, authorization: access.authorization, accountID: link.account, http: http)
        }
    }

    /// Claims the SimpleFIN setup token a credential holds and writes the access URL it gives
    /// over it, checking first that it can (a token claimed is spent: its URL must be kept).
    private func claim(_ token: Secret, store: CredentialStore, http: ProviderHTTP) async throws -> String {
        // Two links of one bank share the token: the second waits for the first's claim, and a
        // credential claimed since it was read is read again, never claimed twice.
        if let pending = claims[token.name] { return try await pending.value }
        if let now = try? store.secret(token.name), now.reveal().lowercased().hasPrefix("http") { return now.reveal() }
        let task = Task { try await self.claimOnce(token, store: store, http: http) }
        claims[token.name] = task
        defer { claims[token.name] = nil }
        return try await task.value
    }

    private func claimOnce(_ token: Secret, store: CredentialStore, http: ProviderHTTP) async throws -> String {
        guard store.writable, ProcessInfo.processInfo.environment["CREDENTIALS_DIRECTORY"] == nil else {
            throw ProviderFailure("the credential '\(token.name)' holds a SimpleFIN setup token, and savingsd may not write its access URL there: "
                + "claim it yourself (curl -X POST \"$(base64 -d < FILE)\" > FILE) and keep the answer in the credential")
        }
        let accessURL = try await SimpleFINSession.claim(setupToken: token.reveal(), http: http)
        do throws(CredentialStore.Failure) {
            try store.replace(token.name, with: accessURL)
        } catch {
            throw ProviderFailure("the setup token was claimed, but \(error.description): make a new setup token at SimpleFIN Bridge")
        }
        logger.notice("SimpleFIN setup token claimed; its access URL replaced it in the credential", metadata: ["credential": "\(token.name)"])
        return accessURL
    }

    private func perform(_ assetID: UUID) async -> Result<LinkSyncOutcome, SyncFailure> {
        let database = context.database
        let config = context.liveConfig.current
        guard let found = try? await database.link(asset: assetID.uuidString), let link = found.1 else {
            return .failure(SyncFailure(description: "the asset is not linked to an account"))
        }
        let asset = found.0
        let service = link.service
        if let held = schedules[assetID]?.heldSeconds {
            let wait = held + 1
            return .failure(SyncFailure(description: "\(service.title) asked to wait; next try in \(wait) s", retryInSeconds: wait))
        }
        var turn: Task<Result<LinkSyncOutcome, SyncFailure>, Never>?
        if service == .kraken {
            while let other = krakenTurns[link.credential], other != running[assetID] {
                _ = await other.value
                if krakenTurns[link.credential] == other { krakenTurns[link.credential] = nil }
            }
            turn = running[assetID]
            krakenTurns[link.credential] = turn
        }
        defer { if let turn, krakenTurns[link.credential] == turn { krakenTurns[link.credential] = nil } }
        let started = ContinuousClock.now
        do {
            let session = try await session(link, config: config)
            if !config.linked.allowTradingKeys, let powers = try await session.powers(), !powers.isEmpty {
                throw ProviderFailure("the \(service.title) key may do more than read (\(powers.joined(separator: ", "))): make a key that can only query (see the README), or set linked.allow_trading_keys = true")
            }
            let before = try await session.account()
            if let currency = before.currency, currency != asset.currency.code {
                throw ProviderFailure("the \(service.title) account holds \(currency), but '\(asset.name)' holds \(asset.currency.code)")
            }
            let window = try await database.linkedWindow(link)
            let seen = Seen()
            let timeZone = context.timeZone
            let clock = context.clock
            let listed = try await session.history(since: window.since, resume: link.cursor) { rows, cursor in
                seen.note(rows)
                seen.added += try await database.storeLinkedRows(link, rows, cursor: cursor, now: clock.now(), timeZone: timeZone)
            }
            var removed: [String] = []
            // A first sync removes nothing: what is stored came from before this link.
            if let listed, link.lastSyncAt != nil {
                removed = LinkSyncPlan.removed(stored: window.stored, listed: listed, since: window.since, coveredFrom: seen.oldest)
                if removed.count > ChainSyncer.maxRemovedAtOnce, removed.count * 2 > window.stored.count {
                    throw ProviderFailure("\(service.title) no longer lists \(removed.count) of the \(window.stored.count) stored rows; nothing was removed")
                }
            }
            let reported = try await session.account().balance
            let notices = await session.notices()
            let finish = try await database.finishLinkSync(link, removing: removed, reported: reported,
                                                           notice: notices.isEmpty ? nil : "\(service.title): " + notices.joined(separator: "; "),
                                                           now: context.clock.now())
            var outcome = LinkSyncOutcome()
            outcome.added = seen.added
            outcome.removed = finish.removed
            outcome.balance = finish.balance
            outcome.reportedBalance = reported
            outcome.reconciled = finish.reconciled
            settle(assetID, failure: nil, config: config, service: service)
            logger.info("link sync", metadata: [
                "asset": "\(assetID)", "service": "\(service.rawValue)", "added": "\(outcome.added)", "removed": "\(outcome.removed.count)",
                "reconciled": "\(outcome.reconciled)", "ms": "\(Int((ContinuousClock.now - started) / .milliseconds(1)))",
            ])
            if outcome.added > 0 || !outcome.removed.isEmpty {
                context.events.publish("data.changed", ["method": "asset.sync", "asset": Wire.id(assetID)])
                await changed()
            }
            context.events.publish("asset.synced", [
                "asset": Wire.id(assetID), "service": .string(service.rawValue), "added": .int(outcome.added),
                "removed": .array(outcome.removed.map { .string($0) }), "reconciled": .bool(outcome.reconciled),
                "balance": .string(Amount.plainText(outcome.balance)), "reported_balance": .string(Amount.plainText(reported)),
            ])
            return .success(outcome)
        } catch {
            if Task.isCancelled || error is CancellationError {
                let why = stopped ? "savingsd is stopping" : "the link changed"
                logger.notice("link sync stopped: \(why)", metadata: ["asset": "\(assetID)"])
                return .failure(SyncFailure(description: "the sync was stopped: \(why)"))
            }
            let reason = (error as? ProviderFailure)?.description ?? (error as? DomainError)?.message ?? "the sync could not be stored"
            if !(error is ProviderFailure), !(error is DomainError) { logger.error("link sync failed: \(error)", metadata: ["asset": "\(assetID)"]) }
            let retry = settle(assetID, failure: error, config: config, service: service)
            try? await database.recordLinkSyncFailure(link, error: reason)
            logger.warning("link sync failed: \(reason)", metadata: ["asset": "\(assetID)", "service": "\(service.rawValue)", "retry_in": "\(retry)s"])
            context.events.publish("asset.sync_failed", [
                "asset": Wire.id(assetID), "service": .string(service.rawValue), "error": .string(reason), "retry_in_seconds": .int(retry),
            ])
            return .failure(SyncFailure(description: reason, retryInSeconds: retry))
        }
    }

    /// Moves a link's schedule after a sync; returns the seconds until the next try.
    @discardableResult
    private func settle(_ assetID: UUID, failure: (any Error)?, config: DaemonConfig, service: LinkedService) -> Int {
        var schedule = schedules[assetID] ?? ProviderSchedule()
        defer { schedules[assetID] = schedule }
        guard let failure else {
            schedule.succeeded(interval: config.linked.interval(of: service), jitter: true)
            return config.linked.interval(of: service)
        }
        let delay = schedule.failed(retryMin: config.retryMin, retryMax: config.retryMax, retryAfter: (failure as? ProviderFailure)?.retryAfter)
        return Int(delay.rounded(.up))
    }

    /// Rows added so far and the oldest row the service gave, touched only by the sync's own
    /// pages, one after another.
    private final class Seen: @unchecked Sendable {
        var added = 0
        var oldest: Date?

        func note(_ rows: [LinkedRow]) {
            for row in rows where oldest.map({ row.date < $0 }) ?? true { oldest = row.date }
        }
    }
}

/// Why a sync failed, and when the next try goes out.
struct SyncFailure: Error, CustomStringConvertible {
    var description: String
    var retryInSeconds: Int?
}

extension LinkSyncer: DueSyncing {}

/// The daemon's two kinds of sync, which `asset.sync` shares.
struct Syncers: Sendable {
    let chains: ChainSyncer
    let links: LinkSyncer
}
