import Foundation

/// An exchange rate: 1 `base` = `rate` `quote`, as of a time, from a provider.
public struct ExchangeRate: Sendable, Equatable {
    public var base: CurrencyCode
    public var quote: CurrencyCode
    public var rate: Decimal
    public var asOf: Date
    public var provider: String
    public var fetchedAt: Date

    public init(base: CurrencyCode, quote: CurrencyCode, rate: Decimal, asOf: Date, provider: String, fetchedAt: Date) {
        self.base = base
        self.quote = quote
        self.rate = rate
        self.asOf = asOf
        self.provider = provider
        self.fetchedAt = fetchedAt
    }

    public var pair: String { "\(base)/\(quote)" }

    public static func validRate(_ text: String) throws -> Decimal {
        let rate = try Amount.parse(text, field: "rate")
        guard rate > 0 else {
            throw DomainError(.invalidAmount, "rate: must be greater than zero (got \(text))", details: ["field": "rate"])
        }
        return rate
    }
}

/// How one currency converts into another with the rates at hand.
public struct Conversion: Sendable, Equatable {
    public var rate: Decimal
    /// The oldest `as_of` among the rates used (nil for a currency to itself).
    public var asOf: Date?
    /// The pairs used, e.g. ["BTC/USD", "USD/EUR"]; an inverse pair is written "EUR/USD^-1".
    public var path: [String]
    /// The providers of the rates used, in path order without repeats.
    public var providers: [String] = []
}

/// The newest rate of each pair, and conversions through the direct pair, its inverse, or
/// triangulation through the pivot currency. A missing rate is reported, never guessed.
public struct RateTable: Sendable, Equatable {
    private let latest: [String: ExchangeRate]
    public let pivot: CurrencyCode

    public init(rates: [ExchangeRate], pivot: CurrencyCode) {
        var latest: [String: ExchangeRate] = [:]
        for rate in rates where latest[rate.pair].map({ $0.asOf <= rate.asOf }) ?? true {
            latest[rate.pair] = rate
        }
        self.latest = latest
        self.pivot = pivot
    }

    public var rates: [ExchangeRate] { latest.values.sorted { $0.pair < $1.pair } }

    public func conversion(from: CurrencyCode, to: CurrencyCode) -> Conversion? {
        if from == to { return Conversion(rate: 1, asOf: nil, path: []) }
        if let direct = leg(from, to) { return direct.conversion }
        guard from != pivot, to != pivot, let first = leg(from, pivot), let second = leg(pivot, to) else { return nil }
        // Multiply the numerators and divide once, so 60000 / 1.2 stays exactly 50000.
        let combined = Leg(multiply: first.multiply * second.multiply, divide: first.divide * second.divide,
                           asOf: min(first.asOf, second.asOf), path: first.path + second.path,
                           providers: first.providers + second.providers.filter { !first.providers.contains($0) })
        return combined.conversion
    }

    /// A rate as a fraction: inverse pairs divide instead of multiplying by a rounded 1/x.
    private struct Leg {
        var multiply: Decimal
        var divide: Decimal
        var asOf: Date
        var path: [String]
        var providers: [String]

        var conversion: Conversion {
            var exact = multiply / divide
            var rounded = Decimal()
            NSDecimalRound(&rounded, &exact, Amount.maxFractionDigits, .plain)
            return Conversion(rate: rounded, asOf: asOf, path: path, providers: providers)
        }
    }

    private func leg(_ from: CurrencyCode, _ to: CurrencyCode) -> Leg? {
        if let direct = latest["\(from)/\(to)"] {
            return Leg(multiply: direct.rate, divide: 1, asOf: direct.asOf, path: [direct.pair], providers: [direct.provider])
        }
        if let inverse = latest["\(to)/\(from)"] {
            return Leg(multiply: 1, divide: inverse.rate, asOf: inverse.asOf, path: [inverse.pair + "^-1"], providers: [inverse.provider])
        }
        return nil
    }

    /// The pair name used when reporting a missing rate.
    public static func missingPair(_ from: CurrencyCode, _ to: CurrencyCode) -> String { "\(from)/\(to)" }
}
