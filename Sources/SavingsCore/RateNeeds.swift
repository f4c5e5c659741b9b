import Foundation

/// The conversions the stored data needs: every asset currency into every goal currency and
/// the display currency, and every goal currency into the display currency. Providers ask for
/// exactly these (batched), so a refresh fetches nothing the figures never use.
public struct RateNeeds: Sendable, Equatable {
    public struct Pair: Sendable, Hashable, Comparable, CustomStringConvertible {
        public var base: CurrencyCode
        public var quote: CurrencyCode
        public init(base: CurrencyCode, quote: CurrencyCode) {
            self.base = base
            self.quote = quote
        }
        public var description: String { "\(base)/\(quote)" }
        public static func < (a: Pair, b: Pair) -> Bool { (a.base, a.quote) < (b.base, b.quote) }
    }

    public var pairs: Set<Pair>
    /// The currency conversions go through when no direct pair exists.
    public var pivot: CurrencyCode

    public init(assetCurrencies: Set<CurrencyCode>, goalCurrencies: Set<CurrencyCode>, display: CurrencyCode, pivot: CurrencyCode) {
        var pairs = Set<Pair>()
        for asset in assetCurrencies {
            for target in goalCurrencies.union([display]) where target != asset {
                pairs.insert(Pair(base: asset, quote: target))
            }
        }
        for goal in goalCurrencies where goal != display {
            pairs.insert(Pair(base: goal, quote: display))
        }
        self.pairs = pairs
        self.pivot = pivot
    }

    /// Every currency taking part in a needed conversion.
    public var currencies: Set<CurrencyCode> { Set(pairs.flatMap { [$0.base, $0.quote] }) }
    public var isEmpty: Bool { pairs.isEmpty }

    /// One CoinGecko simple-price request: the coin ids of every crypto currency involved, priced
    /// in every fiat currency involved plus the pivot, so crypto-to-crypto and crypto-to-fiat
    /// pairs all resolve directly or through the pivot. Symbols without a known id are returned
    /// in `unknown` (their pairs stay missing, never guessed).
    public func coinGeckoQuery(ids: [String: String]) -> CoinGeckoQuery? {
        let crypto = currencies.filter { !$0.isFiat }
        guard !crypto.isEmpty else { return nil }
        var symbolsByID: [String: [CurrencyCode]] = [:]
        var unknown: [CurrencyCode] = []
        for symbol in crypto.sorted() {
            if let id = ids[symbol.code] { symbolsByID[id, default: []].append(symbol) } else { unknown.append(symbol) }
        }
        guard !symbolsByID.isEmpty else { return CoinGeckoQuery(symbolsByID: [:], vsCurrencies: [], unknown: unknown) }
        var vs = currencies.filter(\.isFiat)
        vs.insert(pivot.isFiat ? pivot : (try! CurrencyCode("USD")))
        return CoinGeckoQuery(symbolsByID: symbolsByID, vsCurrencies: vs.sorted(), unknown: unknown)
    }

    /// One Frankfurter request: from the pivot (or the display currency when the pivot is not
    /// fiat) to every other fiat currency involved that the service publishes.
    public func frankfurterQuery(display: CurrencyCode) -> FrankfurterQuery? {
        let fiat = currencies.filter { $0.isFiat }
        let base = pivot.isFiat ? pivot : display
        guard base.isFiat, FrankfurterQuery.published.contains(base.code) else { return nil }
        // Crypto pairs priced in fiat still convert through the pivot, so the pivot's
        // fiat legs are needed whenever any fiat currency other than the base is involved.
        let targets = fiat.filter { $0 != base && FrankfurterQuery.published.contains($0.code) }
        guard !targets.isEmpty else { return nil }
        let unknown = fiat.filter { $0 != base && !FrankfurterQuery.published.contains($0.code) }
        return FrankfurterQuery(base: base, targets: targets.sorted(), unknown: unknown.sorted())
    }
}

public struct CoinGeckoQuery: Sendable, Equatable {
    /// Coin id → the symbols it prices (normally one).
    public var symbolsByID: [String: [CurrencyCode]]
    public var vsCurrencies: [CurrencyCode]
    public var unknown: [CurrencyCode]

    public var ids: [String] { symbolsByID.keys.sorted() }

    /// Built-in symbol → CoinGecko id map; `[rates.coingecko_ids]` adds to and overrides it.
    public static let defaultIDs: [String: String] = [
        "BTC": "bitcoin", "ETH": "ethereum", "SOL": "solana", "USDT": "tether", "USDC": "usd-coin",
        "BNB": "binancecoin", "XRP": "ripple", "ADA": "cardano", "DOGE": "dogecoin", "DOT": "polkadot",
        "LTC": "litecoin", "TRX": "tron", "AVAX": "avalanche-2", "LINK": "chainlink", "XLM": "stellar",
        "XMR": "monero", "BCH": "bitcoin-cash", "ATOM": "cosmos", "DAI": "dai", "MATIC": "matic-network",
        "POL": "polygon-ecosystem-token", "TON": "the-open-network", "SHIB": "shiba-inu", "ALGO": "algorand",
        "ETC": "ethereum-classic", "XTZ": "tezos", "NEAR": "near", "UNI": "uniswap", "ARB": "arbitrum",
        "OP": "optimism", "KAS": "kaspa", "SUI": "sui", "APT": "aptos", "PAXG": "pax-gold",
    ]
}

public struct FrankfurterQuery: Sendable, Equatable {
    public var base: CurrencyCode
    public var targets: [CurrencyCode]
    public var unknown: [CurrencyCode]

    /// The currencies of the European Central Bank's reference rates.
    public static let published: Set<String> = [
        "AUD", "BGN", "BRL", "CAD", "CHF", "CNY", "CZK", "DKK", "EUR", "GBP", "HKD", "HUF", "IDR", "ILS",
        "INR", "ISK", "JPY", "KRW", "MXN", "MYR", "NOK", "NZD", "PHP", "PLN", "RON", "SEK", "SGD", "THB",
        "TRY", "USD", "ZAR",
    ]
}
