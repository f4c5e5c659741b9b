import Foundation
import Logging
import SavingsCore
import SavingsRPC
import ServiceLifecycle

/// A source of exchange rates. Providers return every rate of one refresh or throw; a
/// refresh is stored all together or not at all.
protocol RateProvider: Sendable {
    var name: String { get }
    func fetch(now: Date) async throws -> [ExchangeRate]
}

/// The `file` provider: `{"rates": [{"base", "quote", "rate", "as_of"}]}`, re-read on each refresh.
struct FileRateProvider: RateProvider {
    let path: String
    let name = "file"
    static let maxBytes = 4 << 20

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    func fetch(now: Date) async throws -> [ExchangeRate] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw Failure(description: "cannot read the rates file: \(error.localizedDescription)")
        }
        guard data.count <= Self.maxBytes else { throw Failure(description: "the rates file is larger than \(Self.maxBytes) bytes") }
        guard let document = try? JSONParser.parse(Array(data)), let items = document["rates"]?.arrayValue else {
            throw Failure(description: "the rates file is not a JSON object with a \"rates\" array")
        }
        return try items.enumerated().map { index, item in
            do {
                guard let base = item["base"]?.stringValue, let quote = item["quote"]?.stringValue else {
                    throw Failure(description: "base and quote are required")
                }
                let rateText: String
                switch item["rate"] {
                case .string(let text)?: rateText = text
                case .number(let literal)?: rateText = literal
                default: throw Failure(description: "rate must be a decimal string or number")
                }
                let asOf = try item["as_of"]?.stringValue.map { try Timestamp.parse($0, field: "as_of") } ?? now
                return ExchangeRate(base: try CurrencyCode(base, field: "base"), quote: try CurrencyCode(quote, field: "quote"),
                                    rate: try ExchangeRate.validRate(rateText), asOf: asOf, provider: name, fetchedAt: now)
            } catch {
                throw Failure(description: "rates[\(index)]: \(error)")
            }
        }
    }
}

/// Runs refreshes one at a time and remembers how they went, for the service's backoff,
/// `rates.refresh` and status reporting.
actor RateRefresher {
    enum Outcome: Sendable, Equatable {
        case updated(count: Int, provider: String)
        case failed(provider: String, reason: String)
        case manual
    }

    let context: DaemonContext
    let logger: Logger
    private(set) var consecutiveFailures = 0

    init(context: DaemonContext, logger: Logger) {
        self.context = context
        self.logger = logger
    }

    func provider() -> (any RateProvider)? {
        let config = context.liveConfig.current
        switch config.ratesProvider {
        case "file": return config.ratesFile.map { FileRateProvider(path: $0) }
        default: return nil
        }
    }

    func refresh() async -> Outcome {
        guard let provider = provider() else { return .manual }
        let outcome: Outcome
        do {
            let rates = try await provider.fetch(now: context.clock.now())
            try await context.database.recordRates(rates)
            consecutiveFailures = 0
            outcome = .updated(count: rates.count, provider: provider.name)
            context.events.publish("rates.updated", ["provider": .string(provider.name), "count": .int(rates.count)])
        } catch {
            consecutiveFailures += 1
            outcome = .failed(provider: provider.name, reason: "\(error)")
            // One line per failed refresh, never one per request.
            logger.warning("rates refresh failed: \(error)", metadata: ["provider": "\(provider.name)", "failures": "\(consecutiveFailures)"])
            context.events.publish("rates.failed", ["provider": .string(provider.name), "error": .string("\(error)"),
                                                    "retry_in_seconds": .int(Int(nextDelay()))])
        }
        return outcome
    }

    /// Seconds until the next refresh: the interval with up to 10 % jitter after a success,
    /// exponential backoff from retry_min to retry_max after failures.
    func nextDelay() -> TimeInterval {
        let config = context.liveConfig.current
        guard consecutiveFailures > 0 else {
            let interval = TimeInterval(config.refreshInterval)
            return interval + TimeInterval.random(in: 0...(interval / 10))
        }
        let exponent = min(consecutiveFailures - 1, 30)
        return min(TimeInterval(config.retryMax), TimeInterval(config.retryMin) * pow(2, TimeInterval(exponent)))
    }
}

/// Refreshes rates at start and on schedule; requests never wait for it.
struct RatesService: Service {
    let refresher: RateRefresher

    func run() async throws {
        await cancelWhenGracefulShutdown {
            while !Task.isCancelled {
                if await refresher.refresh() == .manual {
                    // Nothing to fetch; look again later in case the configuration changes.
                    try? await Pause.sleep(for: .seconds(60))
                    continue
                }
                try? await Pause.sleep(for: .milliseconds(Int64(await refresher.nextDelay() * 1000)))
            }
        }
    }
}
