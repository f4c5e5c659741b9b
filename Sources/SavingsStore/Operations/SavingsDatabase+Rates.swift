import Foundation
import GRDB
import SavingsCore

extension SavingsDatabase {
    /// Records a rate; history is kept, the newest `as_of` of a pair is the current one.
    public func recordRate(_ rate: ExchangeRate) async throws -> ExchangeRate {
        try await write { db in
            var record = RateRecord(rate)
            try record.insert(db)
            return rate
        }
    }

    /// Records a refresh's rates all together, or none of them.
    public func recordRates(_ rates: [ExchangeRate]) async throws {
        try await write { db in
            for rate in rates {
                var record = RateRecord(rate)
                try record.insert(db)
            }
        }
    }

    /// The conversions the data needs: asset currencies into the currencies of active goals and
    /// the display currency, and goal currencies into the display currency.
    public func rateNeeds(display: CurrencyCode, pivot: CurrencyCode) async throws -> RateNeeds {
        try await read { db in
            let assets = try String.fetchAll(db, sql: "SELECT DISTINCT currency FROM asset")
            let goals = try String.fetchAll(db, sql: "SELECT DISTINCT currency FROM goal WHERE archived = 0")
            return RateNeeds(assetCurrencies: Set(assets.compactMap { try? CurrencyCode($0) }),
                             goalCurrencies: Set(goals.compactMap { try? CurrencyCode($0) }), display: display, pivot: pivot)
        }
    }

    /// The `as_of` of the stalest pair in use: the oldest among each pair's newest rate.
    public func oldestCurrentRate() async throws -> Date? {
        try await read { db in
            try String.fetchOne(db, sql: "SELECT MIN(latest) FROM (SELECT MAX(as_of) AS latest FROM rate GROUP BY base, quote)")
                .map { try Timestamp.parse($0, field: "as_of") }
        }
    }

    /// Every recorded rate, oldest first, optionally of one pair.
    public func rateHistory(base: CurrencyCode?, quote: CurrencyCode?, from: Date? = nil, to: Date? = nil,
                            limit: Int) async throws -> [ExchangeRate] {
        try await read { db in
            var request = RateRecord.all()
            if let base { request = request.filter(Column("base") == base.code) }
            if let quote { request = request.filter(Column("quote") == quote.code) }
            if let from { request = request.filter(Column("as_of") >= Timestamp.format(from)) }
            if let to { request = request.filter(Column("as_of") <= Timestamp.format(to)) }
            return try request.order(Column("as_of").desc, Column("id").desc).limit(limit).fetchAll(db)
                .reversed().map { try $0.exchangeRate() }
        }
    }
}
