import Foundation
import SavingsRPC
import Testing

/// The HTTP providers against a loopback stub speaking the CoinGecko and Frankfurter shapes.
@Suite struct RateProviderTests {
    static let apiKey = "cg-SECRET-7f3a9c21e4"

    /// Yesterday in UTC: the day of the reference rates the stub publishes.
    static let fixingDay: String = {
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "UTC")
        formatter.dateFormat = "yyyy-MM-dd"
        return formatter.string(from: Date().addingTimeInterval(-86_400))
    }()

    /// CoinGecko prices per coin and Frankfurter rates from USD, answered for whatever is asked.
    static func market(bitcoinEUR: String = "50000.0") -> HTTPStub.Responder {
        { request in
            if request.path.hasSuffix("/simple/price") {
                let prices: [String: [String: String]] = ["bitcoin": ["eur": bitcoinEUR, "gbp": "43000", "usd": "55000.5"],
                                                          "ethereum": ["eur": "3000", "usd": "3300"]]
                let asked = (request.query["vs_currencies"] ?? "").split(separator: ",").map(String.init)
                let coins = (request.query["ids"] ?? "").split(separator: ",").compactMap { id -> String? in
                    guard let known = prices[String(id)] else { return nil }
                    let fields = asked.compactMap { vs in known[vs].map { "\"\(vs)\":\($0)" } }
                    return "\"\(id)\":{\(fields.joined(separator: ",")),\"last_updated_at\":\(Int(Date().timeIntervalSince1970) - 1)}"
                }
                return .json("{\(coins.joined(separator: ","))}")
            }
            if request.path.hasSuffix("/latest"), request.query["from"] == "USD" {
                let rates = ["EUR": "0.9", "GBP": "0.8", "CHF": "0.88"]
                let fields = (request.query["to"] ?? "").split(separator: ",").compactMap { code in rates[String(code)].map { "\"\(code)\":\($0)" } }
                return .json(#"{"amount":1.0,"base":"USD","date":"\#(fixingDay)","rates":{\#(fields.joined(separator: ","))}}"#)
            }
            return HTTPStub.Response(status: 404, body: #"{"message":"not found"}"#)
        }
    }

    func daemon(_ stub: HTTPStub, fiat: Bool = true, _ extra: [String: String] = [:]) throws -> DaemonProcess {
        let directory = try makeScratchDirectory()
        let keyFile = directory + "/coingecko.key"
        try (Self.apiKey + "\n").write(toFile: keyFile, atomically: true, encoding: .utf8)
        var environment = [
            "SAVINGSD_RATES_PROVIDER": "coingecko", "SAVINGSD_RATES_BASE_URL": stub.baseURL + "/api/v3",
            "SAVINGSD_RATES_API_KEY_FILE": keyFile, "SAVINGSD_RATES_REFRESH_INTERVAL": "3600", "SAVINGSD_LOG_LEVEL": "debug",
        ]
        if fiat {
            environment["SAVINGSD_RATES_FIAT_PROVIDER"] = "frankfurter"
            environment["SAVINGSD_RATES_FIAT_BASE_URL"] = stub.baseURL + "/v1"
        }
        return try DaemonProcess(directory: directory, environment: environment.merging(extra) { $1 })
    }

    func bitcoinForAHouse(_ daemon: DaemonProcess) throws {
        _ = try daemon.call("asset.create", ["name": "Wallet", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("goal.create", ["name": "House", "currency": "EUR", "target_amount": "100000", "deadline": "2030-01-01"])
        _ = try daemon.call("tx.add", ["asset": "Wallet", "amount": "1"])
        _ = try daemon.call("allocation.set", ["asset": "Wallet", "goal": "House", "amount": "0.5"])
    }

    @Test func oneRequestPerProviderStoresTheRatesTheDataNeedsAndKeepsTheKeySecret() throws {
        let stub = try HTTPStub(Self.market())
        let daemon = try daemon(stub)
        #expect(try daemon.call("rates.refresh")["status"] == "updated")
        #expect(stub.requests.isEmpty, "nothing is asked while no asset or goal needs a rate")

        try bitcoinForAHouse(daemon)
        _ = try daemon.call("goal.create", ["name": "Trip", "currency": "GBP", "target_amount": "5000", "deadline": "2030-01-01"])
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "1000"])
        _ = try daemon.call("allocation.set", ["asset": "Bank", "goal": "Trip", "amount": "900"])
        _ = try daemon.call("asset.create", ["name": "Odd coin", "currency": "FOO", "kind": "crypto"])
        _ = try daemon.call("tx.add", ["asset": "Odd coin", "amount": "10"])
        _ = try daemon.call("allocation.set", ["asset": "Odd coin", "goal": "House", "amount": "10"])

        let refresh = try daemon.call("rates.refresh")
        #expect(refresh["status"] == "updated", "\(refresh)")
        #expect(refresh["providers"]?.arrayValue?.count == 2)

        let prices = stub.requests(to: "/api/v3/simple/price")
        let latest = stub.requests(to: "/v1/latest")
        #expect(prices.count == 1 && latest.count == 1, "exactly one request per provider per refresh")
        #expect(prices.first?.query["ids"] == "bitcoin")
        #expect(prices.first?.query["vs_currencies"] == "eur,gbp,usd")
        #expect(prices.first?.headers["x-cg-demo-api-key"] == Self.apiKey, "the key reaches the provider in its header")
        #expect(latest.first?.query["from"] == "USD")
        #expect(latest.first?.query["to"] == "EUR,GBP")

        let house = try daemon.call("goal.get", ["goal": "House"])
        #expect(house["current_total"] == "25000.00")
        #expect(house["missing_rates"] == ["FOO/EUR"], "a coin no provider knows is reported missing, never guessed")
        // 900 EUR in GBP has no direct pair: USD/EUR inverted, then USD/GBP (0.8 / 0.9).
        #expect(try daemon.call("goal.get", ["goal": "Trip"])["current_total"] == "800.00")
        let convert = try daemon.call("rates.convert", ["amount": "900", "from": "EUR", "to": "GBP"])
        #expect(convert["path"] == ["USD/EUR^-1", "USD/GBP"])
        #expect(convert["providers"] == ["frankfurter"])
        #expect(house["funding"]?.arrayValue?.first { $0["asset_name"] == "Wallet" }?["rate_providers"] == ["coingecko"],
                "every figure names where its rate came from")

        let rates = try daemon.call("rates.list")["rates"]?.arrayValue ?? []
        #expect(Set(rates.compactMap { $0["provider"]?.stringValue }) == ["coingecko", "frankfurter"])
        #expect(rates.contains { $0["base"] == "USD" && $0["quote"] == "EUR" && $0["as_of"] == .string("\(Self.fixingDay)T13:15:00.000Z") })
        let listed = try ok(["--socket", daemon.socketPath], ["rates", "list"])
        #expect(listed.contains("coingecko") && listed.contains("frankfurter"))
        #expect(listed.contains("just now") || listed.contains(" s "), "\(listed)")
        #expect(listed.contains(" h ") || listed.contains(" d "), "the reference rates are hours old: \(listed)")

        let shown = try [daemon.call("rates.list"), refresh, daemon.call("daemon.status"), daemon.call("dashboard.get")]
            .map { JSONSerializer.serialize($0) }.joined()
        let viaCtl = try runCtl(["--socket", daemon.socketPath, "call", "daemon.status"]).stdout
        #expect(!shown.contains(Self.apiKey) && !viaCtl.contains(Self.apiKey), "the key appears in no response")
        #expect(!daemon.log.contains(Self.apiKey), "the key appears in no log line")
        #expect(!daemon.log.contains("cg-SECRET"))
    }

    @Test func failuresKeepTheLastGoodRatesWhichTurnStale() throws {
        let stub = try HTTPStub(Self.market())
        let daemon = try daemon(stub, fiat: false, ["SAVINGSD_RATES_STALE_AFTER": "4", "SAVINGSD_RATES_RETRY_MIN": "1",
                                                    "SAVINGSD_RATES_RETRY_MAX": "2"])
        try bitcoinForAHouse(daemon)
        #expect(try daemon.call("rates.refresh")["status"] == "updated")
        #expect(try daemon.call("goal.get", ["goal": "House"])["stale"] == false)

        stub.respond { _ in HTTPStub.Response(status: 500, body: "oops") }
        let failed = try daemon.call("rates.refresh")
        #expect(failed["status"] == "failed")
        #expect(failed["error"]?.stringValue?.contains("HTTP 500") == true, "\(failed)")

        stub.respond { _ in .json("<html>not json</html>") }
        #expect(try daemon.call("rates.refresh")["error"]?.stringValue?.contains("not a JSON object") == true)
        stub.respond { _ in .json(#"{"bitcoin":{"eur":"fifty"}}"#) }
        #expect(try daemon.call("rates.refresh")["status"] == "failed", "a malformed price fails the whole answer")

        try waitUntil(timeout: 15) { try daemon.call("goal.get", ["goal": "House"])["stale"] == true }
        let house = try daemon.call("goal.get", ["goal": "House"])
        #expect(house["current_total"] == "25000.00", "the last good rate is still used")
        #expect(house["stale_rates"] == ["BTC/EUR"])
        #expect(try daemon.call("rates.history", ["base": "BTC", "quote": "EUR"])["rates"]?.arrayValue?.count == 1, "nothing half-written")

        stub.respond(Self.market(bitcoinEUR: "60000"))
        try waitUntil(timeout: 15) { try daemon.call("goal.get", ["goal": "House"])["current_total"] == "30000.00" }
        #expect(try daemon.call("goal.get", ["goal": "House"])["stale"] == false, "the backoff retries and recovers on its own")
    }

    @Test func tooManyRequestsWaitsAsLongAsTheProviderAsks() throws {
        let stub = try HTTPStub(Self.market())
        let daemon = try daemon(stub, fiat: false, ["SAVINGSD_RATES_RETRY_MIN": "1", "SAVINGSD_RATES_RETRY_MAX": "1"])
        try bitcoinForAHouse(daemon)
        stub.respond { _ in HTTPStub.Response(status: 429, headers: [("Retry-After", "4")], body: "slow down") }
        let limited = try daemon.call("rates.refresh")
        #expect(limited["status"] == "failed")
        #expect(limited["providers"]?.arrayValue?.first?["retry_in_seconds"] == 4)
        let asked = stub.requests.count
        let deferred = try daemon.call("rates.refresh")
        #expect(deferred["providers"]?.arrayValue?.first?["status"] == "deferred", "\(deferred)")
        Thread.sleep(forTimeInterval: 2)
        #expect(stub.requests.count == asked, "neither a client's refresh nor the 1 s retry goes out before Retry-After")

        stub.respond(Self.market())
        try waitUntil(timeout: 15) { stub.requests.count > asked }
        let gap = stub.requests[asked].at.timeIntervalSince(stub.requests[asked - 1].at)
        #expect(gap >= 3.9, "the next request came \(gap) s later")
        try waitUntil(timeout: 5) { try daemon.call("goal.get", ["goal": "House"])["current_total"] == "25000.00" }
    }
}
