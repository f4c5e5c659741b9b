import Foundation
import SavingsCore
import SavingsRPC
import Testing
@testable import SavingsDaemon

/// What the daemon believes of an outside service's answer, checked without sockets.
@Suite struct ProviderAnswerTests {
    @Test func redirectsAreFollowedOnlyToTheSameSchemeHostAndPort() {
        let from = "http://127.0.0.1:8080/api/v2/xpub/zpub?page=1"
        #expect(ProviderHTTP.sameOrigin("/api/v2/xpub/zpub?page=2", from: from) == "http://127.0.0.1:8080/api/v2/xpub/zpub?page=2")
        #expect(ProviderHTTP.sameOrigin("http://127.0.0.1:8080/other", from: from) == "http://127.0.0.1:8080/other")
        #expect(ProviderHTTP.sameOrigin("https://btc1.trezor.io/api/", from: "https://BTC1.trezor.io/api") == "https://btc1.trezor.io/api/")
        #expect(ProviderHTTP.sameOrigin("https://btc1.trezor.io:443/x", from: "https://btc1.trezor.io/api") != nil)
        for elsewhere in ["http://127.0.0.1:9090/api", "http://evil.example/api", "https://127.0.0.1:8080/api", "//evil.example/x",
                          "http://127.0.0.1:8080@evil.example/"] {
            #expect(ProviderHTTP.sameOrigin(elsewhere, from: from) == nil, "\(elsewhere)")
        }
    }

    @Test func txidsAreSixtyFourHexDigits() throws {
        let good = String(repeating: "ab", count: 32)
        #expect(try ChainJSON.txid(.string(good), chain: .bitcoin) == good)
        #expect(try ChainJSON.txid(.string("0x" + good), chain: .ethereum) == "0x" + good)
        for bad: JSONValue in [.string(good + "a"), .string("0x" + good), .string(""), .int(5), .null, .string(String(good.dropLast()) + "g")] {
            #expect(throws: ProviderFailure.self, "\(bad)") { try ChainJSON.txid(bad, chain: .bitcoin) }
        }
        #expect(throws: ProviderFailure.self) { try ChainJSON.txid(.string(good), chain: .ethereum) }
    }

    /// A page's list is read an element at a time; malformed lists are refused, not half-read.
    @Test func listsAreReadAnElementAtATime() throws {
        var seen: [JSONValue] = []
        try ChainJSON.forEach(in: Array(#"[ {"a": [1, "]"]}, 2 ,"x\"]" ]"#.utf8), what: "the page") { seen.append($0) }
        #expect(seen == [["a": [1, "]"]], 2, "x\"]"])
        for broken in ["[1,", "[1 2]", "{\"a\":1}", "[1,]", "[\"unterminated]"] {
            #expect(throws: ProviderFailure.self, "\(broken)") { try ChainJSON.forEach(in: Array(broken.utf8), what: "the page") { _ in } }
        }
        let object = try ChainJSON.Object(Array(#"{"txs": 3, "totalPages": 1e30, "transactions": []}"#.utf8), what: "account")
        #expect(try object["txs"] == 3)
        #expect(throws: ProviderFailure.self) { try ChainJSON.count(try object["totalPages"], "totalPages", in: 0...2000) }
    }

    /// `totalPages` can promise no more pages than the answer has transactions.
    @Test func pageCountsMustFitTheTransactions() throws {
        func pages(_ text: String) throws -> (pages: Int, transactions: Int) {
            try BlockbookSession.pageCount(try ChainJSON.Object(Array(text.utf8), what: "account"))
        }
        let some = try pages(#"{"txs": 2500, "totalPages": 3}"#)
        #expect(some.pages == 3 && some.transactions == 2500)
        let none = try pages(#"{"txs": 0, "totalPages": 0}"#)
        #expect(none.pages == 1 && none.transactions == 0)
        for lie in [#"{"txs": 5, "totalPages": 1000000000000000000}"#, #"{"txs": 5, "totalPages": 7}"#, #"{"txs": -1}"#,
                    #"{"txs": 5000000, "totalPages": 5000}"#, #"{"txs": "5"}"#] {
            #expect(throws: ProviderFailure.self, "\(lie)") { try pages(lie) }
        }
    }
}
