import Foundation
import SavingsCore
import Testing
@testable import SavingsDaemon

@Suite struct RateProviderParsingTests {
    let now = Date(timeIntervalSince1970: 1_763_800_000)
    func code(_ text: String) -> CurrencyCode { try! CurrencyCode(text) }
    func bytes(_ text: String) -> [UInt8] { Array(text.utf8) }

    var needs: RateNeeds {
        RateNeeds(assetCurrencies: [code("BTC"), code("ETH"), code("EUR"), code("FOO")], goalCurrencies: [code("EUR"), code("GBP")],
                  display: code("EUR"), pivot: code("USD"))
    }

    @Test func needsCoverAssetsIntoGoalsAndDisplayOnly() {
        let pairs = needs.pairs.map(\.description).sorted()
        #expect(pairs == ["BTC/EUR", "BTC/GBP", "ETH/EUR", "ETH/GBP", "EUR/GBP", "FOO/EUR", "FOO/GBP", "GBP/EUR"])
        #expect(RateNeeds(assetCurrencies: [code("EUR")], goalCurrencies: [code("EUR")], display: code("EUR"), pivot: code("USD")).isEmpty)
    }

    @Test func oneCoinGeckoQueryForEveryCoinInEveryFiatAndThePivot() throws {
        let query = try #require(needs.coinGeckoQuery(ids: CoinGeckoQuery.defaultIDs.merging(["ETH": "ethereum"]) { $1 }))
        #expect(query.ids == ["bitcoin", "ethereum"])
        #expect(query.vsCurrencies.map(\.code) == ["EUR", "GBP", "USD"])
        #expect(query.unknown == [code("FOO")], "a coin without an id is left missing")
        #expect(RateNeeds(assetCurrencies: [code("EUR")], goalCurrencies: [code("GBP")], display: code("EUR"), pivot: code("USD"))
            .coinGeckoQuery(ids: CoinGeckoQuery.defaultIDs) == nil, "no coins, no request")
    }

    @Test func oneFrankfurterQueryFromThePivot() throws {
        let query = try #require(needs.frankfurterQuery(display: code("EUR")))
        #expect(query.base == code("USD"))
        #expect(query.targets == [code("EUR"), code("GBP")])
        let unpublished = RateNeeds(assetCurrencies: [code("ARS")], goalCurrencies: [code("EUR")], display: code("EUR"), pivot: code("USD"))
        #expect(unpublished.frankfurterQuery(display: code("EUR"))?.unknown == [code("ARS")])
    }

    @Test func coinGeckoAnswersBecomeExactRatesWithTheirTime() throws {
        let query = try #require(needs.coinGeckoQuery(ids: CoinGeckoQuery.defaultIDs))
        let rates = try CoinGeckoProvider.parse(bytes(#"{"bitcoin":{"eur":50000.12,"gbp":4.3e4,"usd":55000,"last_updated_at":1763799000},"ethereum":{"eur":0.000012345}}"#),
                                                query: query, now: now)
        let byPair = Dictionary(uniqueKeysWithValues: rates.map { ($0.pair, $0) })
        #expect(byPair["BTC/EUR"]?.rate == Decimal(string: "50000.12"))
        #expect(byPair["BTC/GBP"]?.rate == 43000)
        #expect(byPair["ETH/EUR"]?.rate == Decimal(string: "0.000012345"))
        #expect(byPair["BTC/EUR"]?.asOf == Date(timeIntervalSince1970: 1_763_799_000))
        #expect(byPair["ETH/EUR"]?.asOf == now, "without last_updated_at the fetch time is the rate's time")
        #expect(byPair["ETH/GBP"] == nil, "what the answer leaves out stays missing")
        #expect(rates.allSatisfy { $0.provider == "coingecko" })
    }

    @Test(arguments: [
        "", "[]", "garbage", #"{"bitcoin":[1]}"#, #"{"bitcoin":{"eur":"50000"}}"#, #"{"bitcoin":{"eur":-1}}"#,
        #"{"bitcoin":{"eur":0}}"#, #"{"bitcoin":{"eur":1e999}}"#, "{}", #"{"dogecoin":{"eur":1}}"#,
    ])
    func malformedCoinGeckoAnswersFailWhole(body: String) throws {
        let query = try #require(needs.coinGeckoQuery(ids: CoinGeckoQuery.defaultIDs))
        #expect(throws: ProviderFailure.self) { try CoinGeckoProvider.parse(bytes(body), query: query, now: now) }
    }

    @Test func frankfurterAnswersAreTheReferenceRatesOfTheirDay() throws {
        let query = try #require(needs.frankfurterQuery(display: code("EUR")))
        let rates = try FrankfurterProvider.parse(bytes(#"{"amount":1.0,"base":"USD","date":"2025-11-20","rates":{"EUR":0.8623,"GBP":0.76}}"#),
                                                  query: query, now: now)
        #expect(rates.map(\.pair) == ["USD/EUR", "USD/GBP"])
        #expect(rates.first?.rate == Decimal(string: "0.8623"))
        #expect(rates.first?.asOf == (try Timestamp.parse("2025-11-20T13:15:00Z", field: "t")))
        for body in [#"{"amount":1.0,"base":"EUR","date":"2025-11-20","rates":{"GBP":0.8}}"#,
                     #"{"amount":10,"base":"USD","date":"2025-11-20","rates":{"GBP":0.8}}"#,
                     #"{"amount":1,"base":"USD","date":"yesterday","rates":{"GBP":0.8}}"#,
                     #"{"amount":1,"base":"USD","date":"2025-11-20","rates":{"GBP":"0.8"}}"#,
                     #"{"message":"not found"}"#] {
            #expect(throws: ProviderFailure.self, "\(body)") { try FrankfurterProvider.parse(bytes(body), query: query, now: now) }
        }
    }

    @Test func retryAfterIsSecondsOrAnHTTPDate() {
        #expect(ProviderHTTP.retryAfter("120", now: now) == 120)
        #expect(ProviderHTTP.retryAfter(" 7 ", now: now) == 7)
        let date = Date(timeIntervalSince1970: 1_763_800_090)
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss 'GMT'"
        #expect(ProviderHTTP.retryAfter(formatter.string(from: date), now: now) == 90)
        #expect(ProviderHTTP.retryAfter("soon", now: now) == nil)
        #expect(ProviderHTTP.retryAfter(nil, now: now) == nil)
    }

    @Test func configNamesProvidersURLsAndCoinIDs() throws {
        let config = try ConfigLoader.load(options: DaemonOptions(), environment: ["HOME": "/h"], uid: 1000) { _ in
            """
            [rates]
            provider = "coingecko"
            fiat_provider = "frankfurter"
            base_url = "https://pro-api.coingecko.com/api/v3/"
            api_key_file = "/etc/savingsd/cg.key"
            [rates.coingecko_ids]
            FOO = "foo-token"
            BTC = "wrapped-bitcoin"
            """
        }
        #expect(config.ratesBaseURL == "https://pro-api.coingecko.com/api/v3")
        #expect(config.coinGeckoIDs["FOO"] == "foo-token")
        #expect(config.coinGeckoIDs["BTC"] == "wrapped-bitcoin")
        #expect(config.coinGeckoIDs["ETH"] == "ethereum", "the built-in map stays underneath")
        #expect(config.rendered.contains("rates.coingecko_ids.FOO = \"foo-token\""))
        let provider = CoinGeckoProvider(http: ProviderHTTP(client: .shared), baseURL: config.ratesBaseURL, ids: [:], apiKeyFile: nil)
        #expect(provider.apiKeyHeader == "x-cg-pro-api-key")

        for (text, fragment) in [("[rates]\nprovider = \"yahoo\"", "not a rates provider"),
                                 ("[rates]\nfiat_provider = \"ecb\"", "not a fiat rates provider"),
                                 ("[rates]\nbase_url = \"ftp://x\"", "not an http(s) URL"),
                                 ("[rates.coingecko_ids]\nBTC = \"Bit Coin\"", "not a CoinGecko coin id")] {
            do {
                _ = try ConfigLoader.load(options: DaemonOptions(), environment: ["HOME": "/h"], uid: 1000) { _ in text }
                Issue.record("accepted \(text)")
            } catch {
                #expect(error.message.contains(fragment), "\(error.message)")
            }
        }
    }

    @Test func systemdCredentialsSupplyTheKeyFile() throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("cred-\(UUID())").path
        try FileManager.default.createDirectory(atPath: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(atPath: directory) }
        try "k".write(toFile: directory + "/coingecko_api_key", atomically: true, encoding: .utf8)
        let config = try ConfigLoader.load(options: DaemonOptions(), environment: ["HOME": "/h", "CREDENTIALS_DIRECTORY": directory],
                                           uid: 1000) { _ in nil }
        #expect(config.apiKeyFile == directory + "/coingecko_api_key")
    }
}
