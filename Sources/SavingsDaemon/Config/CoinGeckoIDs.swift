import SavingsCore

/// `[rates.coingecko_ids]`: which CoinGecko coin a currency symbol is, on top of the built-in map.
extension ConfigLoader {
    static let coinGeckoIDsPrefix = "rates.coingecko_ids."

    /// `[rates.coingecko_ids]` entries: `SYMBOL = "coin-id"`, adding to the built-in map.
    static func coinGeckoID(_ entry: TOMLReader.Entry, into config: inout DaemonConfig) throws(ConfigError) {
        let symbol = String(entry.key.dropFirst(coinGeckoIDsPrefix.count))
        guard let code = try? CurrencyCode(symbol) else { throw ConfigError(message: "'\(symbol)' is not a currency symbol") }
        let id = try string(entry.value)
        guard !id.isEmpty, id.utf8.count <= 100,
              id.unicodeScalars.allSatisfy({ ("a"..."z").contains($0) || ("0"..."9").contains($0) || $0 == "-" || $0 == "_" }) else {
            throw ConfigError(message: "'\(id)' is not a CoinGecko coin id (lower-case letters, digits and dashes)")
        }
        config.coinGeckoIDs[code.code] = id
    }
}
