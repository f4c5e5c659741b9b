import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
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

    /// One account's walk hands each transaction on once: a txid a page lists twice, or that
    /// the next page lists again (the history grew between two requests), is taken the first time.
    @Test func aWalkHandsEachTransactionOnOnce() async throws {
        let xpub = "xpub661MyMwAqRbcFtXgS5sYJABqqG9YLmC4Q1Rdap9gSE8NqtwybGhePY2gZ29ESFjqJoCu1Rupje8YtGqsefD265TMg7usUDFdp6W1EGMcet8"
        let target = try WatchTarget(chain: .bitcoin, xpub: xpub, addresses: [], token: nil)
        let (a, b, c) = (String(repeating: "a", count: 64), String(repeating: "b", count: 64), String(repeating: "c", count: 64))
        func transaction(_ txid: String) -> String {
            #"{"txid":"\#(txid)","confirmations":5,"blockHeight":100,"blockTime":1700000000,"vin":[],"vout":[{"value":"1000","isOwn":true}]}"#
        }
        func page(_ number: Int, _ txids: [String]) -> String {
            #"{"page":\#(number),"totalPages":2,"txs":3,"balance":"3000","transactions":[\#(txids.map(transaction).joined(separator: ","))]}"#
        }
        let (first, second) = (page(1, [a, a, b]), page(2, [b, c]))
        let read = try await ChainAnswers.read(provider: "blockbook", base: "http://127.0.0.1:1", target: target, maxTransactions: 100) { url in
            if url.hasSuffix("/api/") { return Array(#"{"blockbook":{"bestHeight":100}}"#.utf8) }
            if url.contains("details=txids") { return Array(#"{"page":1,"totalPages":1,"txs":3,"balance":"3000","txids":["\#(a)","\#(b)","\#(c)"]}"#.utf8) }
            return Array((url.contains("page=1&") ? first : second).utf8)
        }
        #expect(read.pages.flatMap(\.transactions).map(\.txid) == [a, b, c])
        #expect(read.pages.flatMap(\.transactions).map(\.amount) == [0.00001, 0.00001, 0.00001])
    }

    /// An answer is read whole, its parts in order, up to the cap: one whose Content-Length is
    /// over it is refused before a byte is read, one without a length once its parts go over.
    @Test func answersAreCollectedUpToTheCap() async throws {
        func collect(_ parts: [String], length: Int?, cap: Int = 10) async throws -> String {
            var headers = HTTPHeaders()
            if let length { headers.add(name: "Content-Length", value: String(length)) }
            let body = AsyncStream<ByteBuffer> { stream in
                for part in parts { stream.yield(ByteBuffer(string: part)) }
                stream.finish()
            }
            let response = HTTPClientResponse(headers: headers, body: .stream(body))
            return String(decoding: try await ProviderHTTP.collect(response, upTo: cap, deadline: .now() + .seconds(10)), as: UTF8.self)
        }
        #expect(try await collect(["{\"a\"", ":1}"], length: 7) == "{\"a\":1}")
        #expect(try await collect(["[1,", "2]"], length: nil) == "[1,2]")
        #expect(try await collect(["0123456789"], length: 10) == "0123456789")
        #expect(try await collect([], length: nil) == "")
        for (parts, length) in [(["0123456789", "x"], nil), (["01234", "56789x"], nil), (["0"], 11), (["0123456789", "x"], 3)] as [([String], Int?)] {
            await #expect(throws: ProviderFailure.self, "\(parts) \(String(describing: length))") { try await collect(parts, length: length) }
        }
    }
}
