import Foundation
import SavingsCore
import SavingsRPC
import Testing
@testable import SavingsDaemon

/// Kraken's answers read as its documentation shows them, and as hostile input.
@Suite struct KrakenAnswersTests {
    /// The Get Ledgers example of https://docs.kraken.com/api/docs/rest-api/get-ledgers.
    static let ledgers = #"""
        {"error":[],"result":{"ledger":{
          "L4UESK-KG3EQ-UFO4T5":{"refid":"TJKLXF-PGMUI-4NTLXU","time":1688464484.1787,"type":"trade","subtype":"","aclass":"currency","asset":"ZGBP","amount":"-24.5000","fee":"0.0490","balance":"459567.9171"},
          "LMKZCZ-Z3GVL-CXKK4H":{"refid":"TBZIP2-F6QOU-TMB6FY","time":1688444262.8888,"type":"trade","subtype":"","aclass":"currency","asset":"ZUSD","amount":"0.9852","fee":"0.0010","balance":"52732.1132"}},
         "count":2}}
        """#

    @Test func theDocumentedLedgerPageIsReadExactly() throws {
        let page = try KrakenAnswers.ledgers(try JSONParser.parse(Array(Self.ledgers.utf8)))
        #expect(page.count == 2 && page.entries.map(\.id) == ["L4UESK-KG3EQ-UFO4T5", "LMKZCZ-Z3GVL-CXKK4H"], "newest first")
        let trade = try #require(page.entries.first)
        #expect(trade.asset == "ZGBP" && trade.amount == Decimal(string: "-24.5") && trade.fee == Decimal(string: "0.049"))
        #expect(trade.net == Decimal(string: "-24.549"), "the fee is paid on top of what left")
        #expect(Timestamp.format(trade.date) == "2023-07-04T09:54:44.178Z")
        #expect(page.entries[1].net == Decimal(string: "0.9842"))
    }

    @Test func balancesAreExact() throws {
        let answer = try JSONParser.parse(Array(#"{"error":[],"result":{"ZUSD":"171288.6158","XXBT":"1011.1908877900","ETH2.S":"198.3970800000"}}"#.utf8))
        let balances = try KrakenAnswers.balances(answer)
        #expect(balances["XXBT"] == Decimal(string: "1011.19088779") && balances["ETH2.S"] == Decimal(string: "198.39708"))
    }

    /// Kraken's error strings, as the person reads them; the ones waiting helps say how long.
    @Test func refusalsSayWhatToDo() throws {
        for (text, words, retry) in [("EAPI:Invalid key", "does not know the API key", nil),
                                     ("EAPI:Invalid signature", "does not belong to the API key", nil),
                                     ("EAPI:Invalid nonce", "key of its own", 60.0),
                                     ("EGeneral:Permission denied", "Query Ledger Entries", nil),
                                     ("EAPI:Rate limit exceeded", "rate limit", 60.0),
                                     ("EGeneral:Temporary lockout", "locked the key out", 900.0)] as [(String, String, Double?)] {
            let answer: JSONValue = ["error": [.string(text)]]
            do {
                _ = try KrakenAnswers.ledgers(answer)
                Issue.record("\(text) was taken")
            } catch let failure as ProviderFailure {
                #expect(failure.description.contains(words) && failure.retryAfter == retry, "\(text): \(failure)")
            }
        }
    }

    /// What does not have the documented shape is refused, never guessed.
    @Test func hostileAnswersAreRefused() throws {
        let bad = [
            #"{"error":[],"result":{"ledger":{"L1":{"asset":"XXBT","amount":"1e400","fee":"0","time":1}},"count":1}}"#,
            #"{"error":[],"result":{"ledger":{"L1":{"asset":"XXBT","amount":"0.1","fee":"0","time":-5}},"count":1}}"#,
            #"{"error":[],"result":{"ledger":{"<script>":{"asset":"XXBT","amount":"0.1","fee":"0","time":1}},"count":1}}"#,
            #"{"error":[],"result":{"ledger":{"L1":{"asset":"X X","amount":"0.1","fee":"0","time":1}},"count":1}}"#,
            #"{"error":[],"result":{"ledger":{}}}"#,
            #"{"error":[]}"#,
            #"[1,2]"#,
        ]
        for text in bad {
            #expect(throws: (any Error).self, "\(text)") { try KrakenAnswers.ledgers(try JSONParser.parse(Array(text.utf8))) }
        }
    }

    /// A signed request: the nonce first in the form, the signature Kraken's algorithm gives for it.
    @Test func aRequestIsSignedAsDocumented() throws {
        let secret = "kQH5HW/8p1uGOVjbgWA7FunAmGO8lsSUXNsu3eow76sz84Q18fWxnyRzBHCd3pd5nE9qa99HAZtuZuj6F1huXg=="
        let request = try KrakenAnswers.request(path: "/0/private/Ledgers", parameters: [("ofs", "50"), ("type", "all")],
                                                nonce: 1_616_492_376_594, key: "public-key", secret: secret)
        #expect(request.body == "nonce=1616492376594&ofs=50&type=all")
        let headers = Dictionary(uniqueKeysWithValues: request.headers)
        #expect(headers["API-Key"] == "public-key")
        #expect(headers["API-Sign"] == (try ServiceSigning.kraken(path: "/0/private/Ledgers", nonce: "1616492376594", body: request.body, secret: secret)))
    }
}
