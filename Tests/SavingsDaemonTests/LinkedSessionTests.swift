import Foundation
import SavingsCore
import Testing
@testable import SavingsDaemon

/// The pieces of a linked account's sync that need no service (issue 50).
@Suite struct LinkedSessionTests {
    @Test func krakensCallCounterMakesACallWaitInsteadOfBeingRefused() async throws {
        // A maximum of 2 decaying 20 a second: two calls of 1 go at once, a third waits ~50 ms.
        let pace = CallPace(maximum: 2, decayPerSecond: 20)
        let clock = ContinuousClock()
        let started = clock.now
        try await pace.take(1)
        try await pace.take(1)
        let quick = clock.now - started
        try await pace.take(2)
        let waited = clock.now - started
        #expect(quick < .milliseconds(40))
        #expect(waited >= .milliseconds(90), "a call of 2 over a full counter waits for 2 to decay: \(waited)")
    }

    @Test func noncesAlwaysIncreaseEvenWithinOneMillisecond() async {
        let nonces = NonceSource()
        var last: UInt64 = 0
        for _ in 0..<1000 {
            let next = nonces.next()
            #expect(next > last)
            last = next
        }
    }

    /// A form body as application/x-www-form-urlencoded writes it (RFC 3986's unreserved kept).
    @Test func aFormValueIsEscapedByteByByte() {
        #expect(KrakenAnswers.formEscape("XXBT") == "XXBT")
        #expect(KrakenAnswers.formEscape("a b&c=d/é~-._") == "a%20b%26c%3Dd%2F%C3%A9~-._")
        #expect(KrakenAnswers.formEscape("L4UESK-KG3EQ-UFO4T5") == "L4UESK-KG3EQ-UFO4T5")
    }

    @Test func aKrakenCursorSurvivesItsTextAndAStrangeOneIsIgnored() {
        let cursor = KrakenSession.Cursor(start: "1767225600", end: "L4UESK-KG3EQ-UFO4T5", offset: 150)
        let read = KrakenSession.Cursor(cursor.text)
        #expect(read?.start == "1767225600" && read?.end == "L4UESK-KG3EQ-UFO4T5" && read?.offset == 150)
        #expect(KrakenSession.Cursor("end=X;ofs=50")?.start == nil)
        #expect(KrakenSession.Cursor("ofs=-1") == nil)
        #expect(KrakenSession.Cursor("garbage") == nil)
    }

    /// GetApiKeyInfo's example answer lists `withdraw-funds` and `modify-trades` beside the queries.
    @Test func onlyAKrakenKeysPowersBeyondReadingCount() {
        #expect(KrakenSession.powers(["query-funds", "withdraw-funds", "query-open-trades", "modify-trades"]) == ["withdraw-funds", "modify-trades"])
        #expect(KrakenSession.powers(["query-funds", "query-ledger-entries", "query-closed-trades"]).isEmpty)
        #expect(KrakenSession.powers(["cancel-close-trades", "export-data"]) == ["cancel-close-trades"])
    }

    /// A deposit Kraken lists before crediting it has no balance yet: only the credited one counts.
    @Test func anUncreditedKrakenListingIsNotARow() {
        let date = Date(timeIntervalSince1970: 1_767_225_600)
        let pending = KrakenAnswers.Entry(id: "LA", referenceID: "R", date: date, type: "deposit", asset: "XXBT", amount: 1, fee: 0, balance: nil)
        var credited = pending
        credited.id = "LB"
        credited.balance = 1
        #expect(KrakenSession.row(pending) == nil)
        #expect(KrakenSession.row(credited) == LinkedRow(id: "LB", date: date, amount: 1, note: "Kraken deposit"))
        var trade = pending
        trade.type = "trade"
        trade.fee = Decimal(string: "-0.001")!
        #expect(KrakenSession.row(trade)?.amount == Decimal(string: "0.999"), "a trade without a balance still counts, its fee paid")
    }

    @Test func theLinkedTablesOfTheConfigurationAreRead() throws {
        let text = """
            [linked]
            credentials = "/etc/savingsd/credentials"
            interval = 7200
            allow_trading_keys = true
            [linked.kraken]
            url = "http://127.0.0.1:9"
            tier = "pro"
            proxy = "socks5://127.0.0.1:9050"
            [linked.simplefin]
            proxy = "http://127.0.0.1:3128"
            """
        let config = try ConfigLoader.load(options: DaemonOptions(), environment: ["HOME": "/h"], uid: 1000) { _ in text }
        #expect(config.linked.credentials == "/etc/savingsd/credentials")
        #expect(config.linked.interval == 7200 && config.linked.allowTradingKeys)
        #expect(config.linked.service(.kraken) == LinkedServiceConfig(url: "http://127.0.0.1:9", proxy: "socks5://127.0.0.1:9050", tier: .pro))
        #expect(config.linked.service(.binance).url == "https://api.binance.com")
        #expect(config.linked.interval(of: .simplefin) == 6 * 3600, "SimpleFIN's 24 requests a day")
        #expect(config.rendered.contains("linked.kraken.tier = \"pro\""))
        for (bad, words) in [("[linked.mtgox]\nurl = \"http://x\"", "not a service"), ("[linked.kraken]\ntier = \"gold\"", "not a Kraken tier"),
                             ("[linked.simplefin]\nurl = \"http://x\"", "unknown key 'url'"), ("[linked]\nallow_trading_keys = 1", "true or false")] {
            #expect(throws: ConfigError.self) { try ConfigLoader.load(options: DaemonOptions(), environment: ["HOME": "/h"], uid: 1000) { _ in bad } }
            do {
                _ = try ConfigLoader.load(options: DaemonOptions(), environment: ["HOME": "/h"], uid: 1000) { _ in bad }
            } catch {
                #expect(error.message.contains(words), "\(error.message)")
            }
        }
    }
}
