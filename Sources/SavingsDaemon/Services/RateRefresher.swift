import Foundation
import Logging
import NIOCore
import NIOPosix
import SavingsCore
import SavingsRPC
import ServiceLifecycle

/// Runs refreshes one at a time (a refresh asked for while one runs joins it), keeps each
/// provider's schedule and backoff, and stores each provider's answer all together or not at all.
actor RateRefresher {
    struct ProviderOutcome: Sendable, Equatable {
        enum Status: String, Sendable, CaseIterable {
            /// Rates were fetched and stored.
            case updated
            /// The data needs nothing this provider offers; no request was made.
            case idle
            case failed
            /// The provider asked us to wait (HTTP 429 Retry-After); no request was made.
            case deferred
        }
        var provider: String
        var status: Status
        var count = 0
        var error: String?
        var retryInSeconds: Int?

        var json: JSONValue {
            var object: [String: JSONValue] = ["provider": .string(provider), "status": .string(status.rawValue), "count": .int(count)]
            if let error { object["error"] = .string(error) }
            if let retryInSeconds { object["retry_in_seconds"] = .int(retryInSeconds) }
            return .object(object)
        }
    }

    enum Outcome: Sendable, Equatable {
        case manual
        case ran([ProviderOutcome])
    }

    let context: DaemonContext
    let logger: Logger
    let http: ProviderHTTP
    private var schedules: [String: ProviderSchedule] = [:]
    private var inFlight: Task<Outcome, Never>?
    /// Completed to wake the service early when a refresh moved a provider's schedule.
    private var wake: EventLoopPromise<Void>?

    init(context: DaemonContext, http: ProviderHTTP, logger: Logger) {
        self.context = context
        self.http = http
        self.logger = logger
    }

    /// The providers the current configuration names, crypto/file first, then fiat.
    func providers() -> [any RateProvider] {
        let config = context.liveConfig.current
        var providers: [any RateProvider] = []
        switch config.ratesProvider {
        case "file": if let file = config.ratesFile { providers.append(FileRateProvider(path: file)) }
        case "coingecko":
            providers.append(CoinGeckoProvider(http: http, baseURL: config.ratesBaseURL, ids: config.coinGeckoIDs,
                                               apiKeyFile: config.apiKeyFile))
        default: break
        }
        if config.fiatProvider == "frankfurter" {
            providers.append(FrankfurterProvider(http: http, baseURL: config.fiatBaseURL, display: config.displayCurrency))
        }
        return providers
    }

    /// Refreshes now: every provider when a client asks (`onlyDue: false`), only the providers
    /// whose time has come when the schedule does. A 429's wait is honoured either way.
    func refresh(onlyDue: Bool = false) async -> Outcome {
        if let inFlight { return await inFlight.value }
        let task = Task { await self.perform(onlyDue: onlyDue) }
        inFlight = task
        let outcome = await task.value
        inFlight = nil
        return outcome
    }

    /// How long the service may sleep before some provider is due (at most a minute, so a
    /// reloaded configuration is picked up).
    func untilNextDue() -> TimeAmount {
        let now = NIODeadline.now()
        let dues = providers().map { schedules[$0.name]?.due ?? now }
        let next = dues.min() ?? now + .seconds(60)
        return max(.milliseconds(50), min(.seconds(60), next - now))
    }

    /// Sleeps until the next provider is due, or until a refresh asked for by a client moves a
    /// schedule (a 429's Retry-After or a backoff must not wait for the old deadline).
    func sleepUntilDue() async {
        let sleep = WakeableSleep(for: untilNextDue())
        wake = sleep.promise
        await sleep.wait()
    }

    private func perform(onlyDue: Bool) async -> Outcome {
        let providers = providers()
        guard !providers.isEmpty else { return .manual }
        let config = context.liveConfig.current
        let start = NIODeadline.now()
        let chosen = providers.filter { !onlyDue || (schedules[$0.name]?.due ?? start) <= start }
        guard !chosen.isEmpty else { return .ran([]) }
        var outcomes: [ProviderOutcome] = []
        let needs: RateNeeds
        do {
            needs = try await context.database.rateNeeds(display: config.displayCurrency, pivot: config.ratesPivot)
        } catch {
            logger.error("rates refresh: cannot read which rates are needed: \(error)")
            return .ran(chosen.map { ProviderOutcome(provider: $0.name, status: .failed, error: "storage_error") })
        }
        let now = context.clock.now()
        // Providers are independent: one slow service does not hold back the other.
        let results = await withTaskGroup(of: (Int, Result<[ExchangeRate], any Error>?).self) { group in
            for (index, provider) in chosen.enumerated() {
                if let hold = schedules[provider.name]?.holdUntil, hold > start { group.addTask { (index, nil) }; continue }
                group.addTask {
                    do { return (index, .success(try await provider.fetch(needs: needs, now: now))) } catch { return (index, .failure(error)) }
                }
            }
            var results = [Result<[ExchangeRate], any Error>?](repeating: nil, count: chosen.count)
            for await (index, result) in group { results[index] = result }
            return results
        }
        for (provider, result) in zip(chosen, results) {
            outcomes.append(await settle(provider.name, result, config: config))
        }
        wake?.succeed()
        wake = nil
        return .ran(outcomes)
    }

    /// Stores one provider's answer and moves its schedule.
    private func settle(_ name: String, _ result: Result<[ExchangeRate], any Error>?, config: DaemonConfig) async -> ProviderOutcome {
        var schedule = schedules[name] ?? ProviderSchedule()
        defer { schedules[name] = schedule }
        guard let result else {
            return ProviderOutcome(provider: name, status: .deferred, error: "the provider asked to wait (HTTP 429)", retryInSeconds: schedule.heldSeconds ?? 0)
        }
        do {
            let rates = try result.get()
            if !rates.isEmpty { try await context.database.recordRates(rates) }
            schedule.succeeded(interval: config.refreshInterval, jitter: true)
            guard !rates.isEmpty else { return ProviderOutcome(provider: name, status: .idle) }
            logger.debug("rates refreshed", metadata: ["provider": "\(name)", "count": "\(rates.count)"])
            context.events.publish("rates.updated", ["provider": .string(name), "count": .int(rates.count)])
            return ProviderOutcome(provider: name, status: .updated, count: rates.count)
        } catch {
            let retryAfter = (error as? ProviderFailure)?.retryAfter
            let delay = schedule.failed(retryMin: config.retryMin, retryMax: config.retryMax, retryAfter: retryAfter)
            let reason = (error as? ProviderFailure)?.description ?? "the rates could not be stored"
            if !(error is ProviderFailure) { logger.error("storing rates failed: \(error)", metadata: ["provider": "\(name)"]) }
            // One line per failed refresh, never one per request.
            logger.warning("rates refresh failed: \(reason)",
                           metadata: ["provider": "\(name)", "failures": "\(schedule.failures)", "retry_in": "\(Int(delay.rounded(.up)))s"])
            context.events.publish("rates.failed", ["provider": .string(name), "error": .string(reason),
                                                    "retry_in_seconds": .int(Int(delay.rounded(.up)))])
            return ProviderOutcome(provider: name, status: .failed, error: reason, retryInSeconds: Int(delay.rounded(.up)))
        }
    }
}

/// Refreshes rates at start and on each provider's schedule; requests never wait for it.
struct RatesService: Service {
    let refresher: RateRefresher

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                _ = await refresher.refresh(onlyDue: true)
                await refresher.sleepUntilDue()
            }
        }
    }
}
