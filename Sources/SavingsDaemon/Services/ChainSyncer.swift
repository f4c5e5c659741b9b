import AsyncHTTPClient
import Foundation
import Logging
import NIOCore
import NIOPosix
import SavingsCore
import SavingsRPC
import ServiceLifecycle

/// Syncs watched assets from their chains' providers (SPEC 10): one sync per asset at a time
/// (a sync asked for while one runs waits for it and shares its outcome), each chain's provider
/// on its own schedule and backoff, and serving never waits for any of it.
actor ChainSyncer {
    typealias Progress = @Sendable (_ page: Int, _ pages: Int) -> Void

    typealias Failure = SyncFailure

    let context: DaemonContext
    let logger: Logger
    let http: ProviderHTTP
    /// Called after a sync changed stored transactions (goal checks).
    let changed: @Sendable () async -> Void
    private var running: [UUID: Task<Result<ChainSyncOutcome, Failure>, Never>] = [:]
    private var schedules: [Chain: ProviderSchedule] = [:]
    let proxies: ProxyClients
    private var wake: EventLoopPromise<Void>?
    /// Assets to sync at the service's next turn whatever their chain's schedule (a new watch).
    private var requested = Set<UUID>()
    private var stopped = false
    /// Removals beyond this many (and beyond half of what is stored) in one sync are taken for a
    /// provider that lost its index, not for a reorganisation: the sync fails and removes nothing.
    static let maxRemovedAtOnce = 10
    /// Transactions wanted that a walk finds on its first page or two (new ones come first).
    static let shortWalk = 50

    init(context: DaemonContext, http: ProviderHTTP, proxies: ProxyClients, logger: Logger, changed: @escaping @Sendable () async -> Void) {
        self.context = context
        self.http = http
        self.proxies = proxies
        self.logger = logger
        self.changed = changed
    }

    /// Syncs one asset now, or waits for the sync of it already running.
    func sync(_ assetID: UUID, progress: Progress? = nil) async -> Result<ChainSyncOutcome, Failure> {
        if let task = running[assetID] { return await task.value }
        guard !stopped else { return .failure(Failure(description: "savingsd is stopping")) }
        let task = Task { await self.perform(assetID, progress: progress) }
        running[assetID] = task
        let result = await task.value
        running[assetID] = nil
        return result
    }

    /// Has the service sync an asset soon (a new watch's first sync), without the caller waiting.
    func request(_ assetID: UUID) {
        requested.insert(assetID)
        wake?.succeed()
        wake = nil
    }

    /// Syncs every watched asset whose chain is due, and those asked for.
    func syncDue() async {
        let watches: [UUID: AssetWatch]
        do {
            watches = try await context.database.watches()
        } catch {
            // Stopping is no failure: a read cancelled by shutdown is not worth a line.
            if !Task.isCancelled, !(error is CancellationError) { logger.error("chain sync: cannot read the watches: \(error)") }
            return
        }
        let now = NIODeadline.now()
        let configured = context.liveConfig.current.chainProviders
        // The chains due now, decided before any sync moves their schedules.
        let due = Set(Chain.allCases.filter { configured[$0.rawValue] != nil && (schedules[$0]?.due ?? now) <= now })
        let asked = requested
        requested = []
        for (assetID, watch) in watches.sorted(by: { $0.key.uuidString < $1.key.uuidString })
        where due.contains(watch.target.chain) || asked.contains(assetID) {
            _ = await sync(assetID)
        }
        wake?.succeed()
        wake = nil
    }

    /// Sleeps until a chain is due (at most a minute, so new watches and a reloaded
    /// configuration are picked up), or until a sync moved a schedule.
    func sleepUntilDue() async {
        let now = NIODeadline.now()
        let next = Chain.allCases.compactMap { schedules[$0]?.due }.min() ?? now + .seconds(60)
        // A new watch asked for its first sync while the last turn ran: no sleep.
        guard requested.isEmpty else { return }
        let sleep = WakeableSleep(for: max(.milliseconds(50), min(.seconds(60), next - now)))
        wake = sleep.promise
        await sleep.wait()
    }

    /// Stops every sync now (savingsd is shutting down): each ends at its next request or page,
    /// and none starts after.
    func stop() {
        stopped = true
        for task in running.values { task.cancel() }
        wake?.succeed()
        wake = nil
    }

    /// A block explorer's page of a thousand transactions is a few megabytes (Blockbook's
    /// details of 1,000 ordinary transactions: 2-4 MB). Pages are read one transaction at a
    /// time, so what an answer costs beyond its bytes is one transaction's tree.
    static let maxAnswer = 16 << 20

    private func perform(_ assetID: UUID, progress: Progress?) async -> Result<ChainSyncOutcome, Failure> {
        let database = context.database
        let config = context.liveConfig.current
        guard let found = try? await database.watch(asset: assetID.uuidString), let watch = found.1 else {
            return .failure(Failure(description: "the asset is not watching a chain"))
        }
        let chain = watch.target.chain
        guard let provider = config.chainProviders[chain.rawValue] else {
            return .failure(Failure(description: "no provider is configured for \(chain.rawValue) ([onchain.\(chain.rawValue)] provider and url)"))
        }
        let label = watch.target.summary
        if let held = schedules[chain]?.heldSeconds {
            let wait = held + 1
            return .failure(Failure(description: "\(provider.kind.rawValue) asked to wait (HTTP 429); next try in \(wait) s", retryInSeconds: wait))
        }
        let started = ContinuousClock.now
        do {
            let session = provider.session(watch.target, http: try await proxies.http(http, proxy: provider.proxy, maxBody: Self.maxAnswer), maxTransactions: config.onchainMaxTransactions)
            let outcome = try await run(session, watch: watch, progress: progress)
            settle(chain, failure: nil, config: config)
            logger.info("chain sync", metadata: [
                "asset": "\(assetID)", "watch": "\(label)", "added": "\(outcome.added)", "removed": "\(outcome.removed.count)",
                "pending": "\(outcome.pending.count)", "reconciled": "\(outcome.reconciled)",
                "ms": "\(Int((ContinuousClock.now - started) / .milliseconds(1)))",
            ])
            let data: JSONValue = [
                "asset": Wire.id(assetID), "added": .int(outcome.added), "removed": .array(outcome.removed.map { .string($0) }),
                "pending": .int(outcome.pending.count), "reconciled": .bool(outcome.reconciled), "balance": .string(Amount.plainText(outcome.balance)),
            ]
            if outcome.added > 0 || !outcome.removed.isEmpty {
                context.events.publish("data.changed", ["method": "asset.sync", "asset": Wire.id(assetID)])
                await changed()
            }
            context.events.publish("asset.synced", data)
            return .success(outcome)
        } catch {
            if Task.isCancelled || error is CancellationError {
                logger.notice("chain sync stopped: savingsd is stopping", metadata: ["asset": "\(assetID)"])
                return .failure(Failure(description: "the sync was stopped: savingsd is stopping"))
            }
            let reason = (error as? ProviderFailure)?.description ?? (error as? DomainError)?.message ?? "the sync could not be stored"
            if !(error is ProviderFailure), !(error is DomainError) { logger.error("chain sync failed: \(error)", metadata: ["asset": "\(assetID)"]) }
            let retry = settle(chain, failure: error, config: config)
            try? await database.recordChainSyncFailure(assetID: assetID, provider: provider.kind.rawValue, error: reason, now: context.clock.now())
            // One line per failed sync, never one per request; the key only shortened.
            logger.warning("chain sync failed: \(reason)", metadata: ["asset": "\(assetID)", "watch": "\(label)", "retry_in": "\(retry)s"])
            context.events.publish("asset.sync_failed", ["asset": Wire.id(assetID), "error": .string(reason), "retry_in_seconds": .int(retry)])
            return .failure(Failure(description: reason, retryInSeconds: retry))
        }
    }

    /// Moves a chain's schedule after a sync; returns the seconds until the next try.
    @discardableResult
    private func settle(_ chain: Chain, failure: (any Error)?, config: DaemonConfig) -> Int {
        var schedule = schedules[chain] ?? ProviderSchedule()
        defer { schedules[chain] = schedule }
        guard let failure else {
            schedule.succeeded(interval: config.onchainInterval)
            return config.onchainInterval
        }
        let delay = schedule.failed(retryMin: config.retryMin, retryMax: config.retryMax, retryAfter: (failure as? ProviderFailure)?.retryAfter)
        return Int(delay.rounded(.up))
    }

    /// One sync: the listing, the details of what is new or was pending (one database
    /// transaction per page, or per run of pages read ahead; resumable), then removals and the
    /// reported figures.
    private func run(_ session: any ChainSession, watch: AssetWatch, progress: Progress?) async throws -> ChainSyncOutcome {
        let database = context.database
        let assetID = watch.assetID
        let storedDates = try await database.chainTransactions(assetID: assetID)
        let stored = Set(storedDates.keys)
        let minimum = watch.target.minConfirmations
        let timeZone = context.timeZone
        let clock = context.clock
        /// Walks the details from `start`, storing what `walk` still wants, page by page.
        func details(_ walk: WalkState, from start: Int) async throws {
            // A long walk reads the next page while it stores one; a short one asks for no page it may not need.
            try await session.details(from: start, readAhead: (walk.remaining?.count ?? .max) > Self.shortWalk) { page in
                let relevant = walk.wanted(page.transactions)
                let split = ChainSyncPlan.split(relevant, minConfirmations: minimum)
                // An unfinished walk of the same history goes on where it stopped.
                let cursor = page.page < page.pages ? "count=\(page.total);page=\(page.page + 1)" : nil
                walk.added += try await database.storeChainTransactions(assetID: assetID, split.store, cursor: cursor, now: clock.now(),
                                                                        timeZone: timeZone)
                walk.take(relevant, split: split)
                progress?(page.page, page.pages)
                return !walk.done
            }
        }
        let listing: ChainListing
        let walk: WalkState
        if stored.isEmpty, watch.pending.isEmpty, session.walksWithoutListing {
            // A first sync: everything the walk finds is new, and beside it only what the
            // listing adds to the walk (the balance, the height) is asked for.
            walk = WalkState(remaining: nil)
            async let listed = session.summary()
            try await details(walk, from: 1)
            listing = try await listed
        } else {
            listing = try await session.listing(stored: stored)
            let plan = ChainSyncPlan(listed: listing.txids, unconfirmed: listing.unconfirmed, stored: stored,
                                     pending: Set(watch.pending.map(\.txid)), ignored: watch.ignored)
            walk = WalkState(remaining: plan.wanted)
            var start = 1
            let resumed = "count=\(listing.txids.count);page="
            if let saved = watch.cursor, saved.hasPrefix(resumed), let page = Int(saved.dropFirst(resumed.count)) { start = page }
            if !walk.done { try await details(walk, from: start) }
            // A listing that stopped at settled history says nothing of what is older.
            walk.removed = plan.removed.filter { txid in listing.settledBefore.map { (storedDates[txid] ?? .distantPast) > $0 } ?? true }
        }
        // Known zero-net transactions stay known while listed (or older than a partial listing).
        var ignored = listing.settledBefore == nil ? watch.ignored.intersection(listing.txids) : watch.ignored
        ignored.formUnion(walk.zero)
        let removed = walk.removed.filter { !walk.confirmed.contains($0) }
        if removed.count > Self.maxRemovedAtOnce, removed.count * 2 > stored.count {
            throw ProviderFailure("the provider no longer lists \(removed.count) of the \(stored.count) stored transactions; nothing was removed (is it synced with the chain?)")
        }
        let finish = try await database.finishChainSync(
            assetID: assetID, removing: removed, provider: session.provider, pending: walk.pending, ignored: ignored,
            reported: listing.balance, height: listing.height, now: context.clock.now())
        var outcome = ChainSyncOutcome()
        outcome.added = walk.added
        outcome.removed = finish.removed
        outcome.pending = walk.pending
        outcome.balance = finish.balance
        outcome.reportedBalance = listing.balance
        outcome.reconciled = finish.reconciled
        outcome.height = listing.height
        return outcome
    }

    /// What a walk has seen so far; touched only by the walk's own pages, one after another.
    private final class WalkState: @unchecked Sendable {
        /// What the walk still wants; nil: everything (a first sync).
        var remaining: Set<String>?
        var added = 0
        /// Stored transactions the listing no longer has in a block.
        var removed: [String] = []
        var pending: [PendingTransaction] = []
        var confirmed = Set<String>()
        var zero = Set<String>()

        init(remaining: Set<String>?) { self.remaining = remaining }

        var done: Bool { remaining?.isEmpty == true }

        func wanted(_ transactions: [ChainTransaction]) -> [ChainTransaction] {
            guard let remaining else { return transactions }
            return transactions.filter { remaining.contains($0.txid) }
        }

        func take(_ relevant: [ChainTransaction], split: (store: [ChainTransaction], pending: [PendingTransaction])) {
            for transaction in relevant { remaining?.remove(transaction.txid) }
            // A transaction that moves nothing for the set is not worth showing as pending.
            pending += split.pending.filter { $0.amount != 0 }
            for transaction in split.store {
                // Only a walk after a listing has stored transactions it may remove (a first
                // sync has none) and so needs to know which of them it found confirmed.
                if remaining != nil { confirmed.insert(transaction.txid) }
                if transaction.amount == 0 { zero.insert(transaction.txid) }
            }
        }
    }
}

/// What a sync service drives: syncs of what is due, sleeps until the next is, and a stop.
protocol DueSyncing: Actor {
    func syncDue() async
    func sleepUntilDue() async
    func stop()
}

extension ChainSyncer: DueSyncing {}

/// Syncs at start and on each schedule (watched chains, linked accounts).
struct SyncService<Syncer: DueSyncing>: Service {
    let syncer: Syncer

    func run() async throws {
        // A sync runs in a task of its own (callers of asset.sync share it): shutdown stops it
        // there, or a provider that never ends its history would hold savingsd's exit.
        await withGracefulShutdownHandler {
            await cancelWhenGracefulShutdown {
                while !Task.isCancelled {
                    await syncer.syncDue()
                    await syncer.sleepUntilDue()
                }
            }
        } onGracefulShutdown: {
            Task { await syncer.stop() }
        }
    }
}
