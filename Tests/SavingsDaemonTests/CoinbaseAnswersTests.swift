import Foundation
import SavingsCore
import SavingsRPC
import Testing
@testable import SavingsDaemon

/// The Coinbase App API's answers read as its documentation shows them, and as hostile input.
@Suite struct CoinbaseAnswersTests {
    /// The List Accounts example of the v2 API reference (https://docs.cdp.coinbase.com/coinbase-app/track-apis/accounts,
    /// earlier https://developers.coinbase.com/api/v2#list-accounts), with the pagination of
    /// https://docs.cdp.coinbase.com/coinbase-app/api-architecture/pagination: two BTC accounts.
    static let accounts = #"""
        {"pagination":{"ending_before":null,"starting_after":null,"limit":25,"order":"desc","previous_uri":null,
                       "next_uri":"/v2/accounts?&limit=25&starting_after=5d5aed5f-b7c0-5585-a3dd-a7ed9ef0e414"},
         "data":[
          {"id":"58542935-67b5-56e1-a3f9-42686e07fa40","name":"My Vault","primary":false,"type":"vault","currency":"BTC",
           "balance":{"amount":"4.00000000","currency":"BTC"},"created_at":"2015-01-31T20:49:02Z","updated_at":"2015-01-31T20:49:02Z",
           "resource":"account","resource_path":"/v2/accounts/58542935-67b5-56e1-a3f9-42686e07fa40","ready":true},
          {"id":"2bbf394c-193b-5b2a-9155-3b4732659ede","name":"My Wallet","primary":true,"type":"wallet",
           "currency":{"code":"BTC","name":"Bitcoin","color":"#F7931A","sort_index":100,"exponent":8,"type":"crypto"},
           "balance":{"amount":"39.59000000","currency":"BTC"},"created_at":"2015-01-31T20:49:02Z","updated_at":"2015-01-31T20:49:02Z",
           "resource":"account","resource_path":"/v2/accounts/2bbf394c-193b-5b2a-9155-3b4732659ede"}]}
        """#

    /// The List Transactions example of the v2 API reference
    /// (https://docs.cdp.coinbase.com/coinbase-app/track-apis/transactions, earlier
    /// https://developers.coinbase.com/api/v2#list-transactions), its nested objects shortened.
    static let transactions = #"""
        {"pagination":{"ending_before":null,"starting_after":null,"limit":25,"order":"desc","previous_uri":null,"next_uri":null},
         "data":[
          {"id":"4117f7d6-5694-5b36-bc8f-847509850ea4","type":"buy","status":"pending","amount":{"amount":"1.00000000","currency":"BTC"},
           "native_amount":{"amount":"10.00","currency":"USD"},"description":null,"created_at":"2015-03-26T23:44:08-07:00",
           "updated_at":"2015-03-26T23:44:08-07:00","resource":"transaction",
           "resource_path":"/v2/accounts/2bbf394c-193b-5b2a-9155-3b4732659ede/transactions/4117f7d6-5694-5b36-bc8f-847509850ea4",
           "details":{"title":"Bought bitcoin","subtitle":"using Capital One Bank"}},
          {"id":"005e55d1-f23a-5d1e-80a4-72943682c055","type":"request","status":"pending","amount":{"amount":"1.00000000","currency":"BTC"},
           "native_amount":{"amount":"10.00","currency":"USD"},"description":"","created_at":"2015-03-24T18:32:35-07:00",
           "updated_at":"2015-01-31T20:49:02Z","resource":"transaction"},
          {"id":"ff01bbc6-c4ad-59e1-9601-e87b5b709458","type":"transfer","status":"completed","amount":{"amount":"-5.00000000","currency":"BTC"},
           "native_amount":{"amount":"-50.00","currency":"USD"},"description":"","created_at":"2015-03-12T15:51:38-07:00",
           "updated_at":"2015-01-31T20:49:02Z","resource":"transaction","details":{"title":"Transfered bitcoin","subtitle":"to Secondary Account"}},
          {"id":"57ffb4ae-0c59-5430-bcd3-3f98f797a66c","type":"send","status":"completed","amount":{"amount":"-0.00100000","currency":"BTC"},
           "native_amount":{"amount":"-0.01","currency":"USD"},"description":null,"created_at":"2015-03-11T13:13:35-07:00",
           "updated_at":"2015-03-26T15:55:43-07:00","resource":"transaction","network":{"status":"off_blockchain","name":"bitcoin"},
           "to":{"id":"a6b4c2df-a62c-5d68-822a-dd4e2102e703","resource":"user"},"details":{"title":"Send bitcoin","subtitle":"to User 2"}}]}
        """#

    static func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    @Test func theDocumentedAccountsAreReadInBothCurrencyShapes() throws {
        let page = try CoinbaseAnswers.page(try Self.parse(Self.accounts), what: "accounts")
        let accounts = try page.items.map(CoinbaseAnswers.account)
        #expect(accounts.map(\.currency) == ["BTC", "BTC"], "a plain string and an object with a code")
        #expect(accounts.map(\.balance) == [Decimal(4), Decimal(string: "39.59")!])
        #expect(page.next == "/v2/accounts?&limit=25&starting_after=5d5aed5f-b7c0-5585-a3dd-a7ed9ef0e414")
        #expect(try CoinbaseAnswers.resolve("2BBF394C-193B-5B2A-9155-3B4732659EDE", among: accounts).balance == Decimal(string: "39.59"))
        do {
            _ = try CoinbaseAnswers.resolve("btc", among: accounts)
            Issue.record("two BTC accounts were taken for one")
        } catch let failure as ProviderFailure {
            #expect(failure.description.contains("58542935-67b5-56e1-a3f9-42686e07fa40, 2bbf394c-193b-5b2a-9155-3b4732659ede"))
        }
        #expect(throws: ProviderFailure.self) { try CoinbaseAnswers.resolve("ETH", among: accounts) }
        #expect(try CoinbaseAnswers.resolve("btc", among: [accounts[1]]).id == "2bbf394c-193b-5b2a-9155-3b4732659ede")
    }

    /// Only completed transactions are rows; times with an offset are read to the instant
    /// (15:51:38 at −07:00 is 22:51:38 UTC).
    @Test func theDocumentedTransactionsAreReadExactly() throws {
        let page = try CoinbaseAnswers.transactionPage(Array(Self.transactions.utf8))
        #expect(page.next == nil)
        #expect(page.rows.map(\.id) == ["ff01bbc6-c4ad-59e1-9601-e87b5b709458", "57ffb4ae-0c59-5430-bcd3-3f98f797a66c"])
        #expect(page.rows.map(\.amount) == [Decimal(-5), Decimal(string: "-0.001")!])
        #expect(page.rows.map { Timestamp.format($0.date) } == ["2015-03-12T22:51:38.000Z", "2015-03-11T20:13:35.000Z"])
        let items = try CoinbaseAnswers.page(try Self.parse(Self.transactions), what: "transactions").items
        #expect(CoinbaseAnswers.rows(try items.map(CoinbaseAnswers.transaction)).map(\.note) == ["Coinbase transfer", "Coinbase send"])
    }

    /// The Get API Key Permissions example: a view-only key has no powers.
    @Test func powersAreTradeAndTransfer() throws {
        let viewOnly = try Self.parse(#"{"can_view":true,"can_trade":false,"can_transfer":false,"portfolio_uuid":"1b1f3b2c-7c1f-4f3e-9e55-2f2b6c8a9d10","portfolio_type":"DEFAULT"}"#)
        #expect(try CoinbaseAnswers.powers(viewOnly).isEmpty)
        #expect(try CoinbaseAnswers.powers(try Self.parse(#"{"can_view":true,"can_trade":true,"can_transfer":true}"#)) == ["trade", "transfer"])
        #expect(try CoinbaseAnswers.powers(try Self.parse(#"{"can_view":true}"#)) == ["trade", "transfer"], "unsaid is taken as able")
        #expect(throws: ProviderFailure.self) { try CoinbaseAnswers.powers(try Self.parse(#"{"error":"unauthorized"}"#)) }
    }

    /// A CDP key as downloaded (`cdp_api_key.json`, the PEM's line breaks written `\n`), or as
    /// two parts; an Ed25519 key is named for what it is.
    @Test func theCredentialIsReadInItsTwoForms() throws {
        let json = #"{"name": "organizations/0b2a/apiKeys/7c1f", "privateKey": "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n"}"#
        let fromJSON = try CoinbaseAnswers.credential(json, name: "cb")
        #expect(fromJSON.name == "organizations/0b2a/apiKeys/7c1f" && fromJSON.pem.hasPrefix("-----BEGIN EC PRIVATE KEY-----\nMHcC"))
        let lines = "organizations/0b2a/apiKeys/7c1f\n-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----\n"
        #expect(try CoinbaseAnswers.credential(lines, name: "cb").pem == "-----BEGIN EC PRIVATE KEY-----\nMHcCAQEE\n-----END EC PRIVATE KEY-----")
        do {
            _ = try CoinbaseAnswers.credential(#"{"id": "3f2c", "privateKey": "bm90IGEga2V5"}"#, name: "cb")
            Issue.record("an Ed25519 key was taken")
        } catch let failure as ProviderFailure {
            #expect(failure.description.contains("Ed25519"))
        }
        for text in ["", "just-a-name", "{\"name\": 5}", "name with spaces\n-----BEGIN EC PRIVATE KEY-----"] {
            #expect(throws: ProviderFailure.self, "\(text)") { try CoinbaseAnswers.credential(text, name: "cb") }
        }
    }

    @Test func refusalsSayWhatToDo() {
        let invalid = CoinbaseAnswers.failure(status: 401, body: Array(#"{"errors":[{"id":"authentication_error","message":"invalid signature"}]}"#.utf8), what: "accounts")
        #expect(invalid.description.contains("refused the key (authentication_error)") && invalid.retryAfter == nil)
        let scope = CoinbaseAnswers.failure(status: 403, body: Array(#"{"errors":[{"id":"invalid_scope","message":"Invalid scope"}]}"#.utf8), what: "accounts")
        #expect(scope.description.contains("View permission"))
        #expect(CoinbaseAnswers.failure(status: 500, body: [], what: "accounts").retryAfter == 60)
        #expect(CoinbaseAnswers.failure(status: 404, body: [], what: "account").description == "Coinbase has no such account")
        let other = CoinbaseAnswers.failure(status: 400, body: Array(#"{"errors":[{"id":"validation_error","message":"bad"}]}"#.utf8), what: "accounts")
        #expect(other.description == "Coinbase answered HTTP 400 to accounts: validation_error")
    }

    /// A next page is a path of Coinbase's own, never another host or a way out of the account.
    @Test func nextPagesStayWithTheAccount() {
        let prefix = "/v2/accounts/2bbf394c-193b-5b2a-9155-3b4732659ede/transactions"
        #expect(CoinbaseAnswers.nextURI(prefix + "?limit=100&starting_after=57ffb4ae-0c59-5430-bcd3-3f98f797a66c", under: prefix))
        for path in ["https://example.com/v2/accounts", "//example.com/v2/accounts", "/v2/accounts/../users", "/v2/accounts/x/transactions",
                     prefix + "?a=<b>", prefix + "#x", "/v3/accounts"] {
            #expect(!CoinbaseAnswers.nextURI(path, under: prefix), "\(path)")
        }
        #expect(CoinbaseSession.host(of: "https://api.coinbase.com") == "api.coinbase.com")
        #expect(CoinbaseSession.host(of: "http://127.0.0.1:8443") == "127.0.0.1:8443", "a test server's port is part of the uri claim")
    }

    @Test func hostileAnswersAreRefused() throws {
        let bad = [
            #"{"data":[{"id":"x","type":"send","status":"completed","amount":{"amount":"1e3","currency":"BTC"},"created_at":"2015-03-11T13:13:35Z"}]}"#,
            #"{"data":[{"id":"x","type":"send","status":"completed","amount":{"amount":1,"currency":"BTC"},"created_at":"2015-03-11T13:13:35Z"}]}"#,
            #"{"data":[{"id":"x","type":"send","status":"completed","amount":{"amount":"1","currency":"BTC"},"created_at":"yesterday"}]}"#,
            #"{"data":[{"id":"x y","type":"send","status":"completed","amount":{"amount":"1","currency":"BTC"},"created_at":"2015-03-11T13:13:35Z"}]}"#,
            #"{"data":[{"type":"send","status":"completed","amount":{"amount":"1","currency":"BTC"},"created_at":"2015-03-11T13:13:35Z"}]}"#,
            #"{"data":[],"pagination":{"next_uri":"https://example.com/steal"}}"#,
            #"{"errors":[{"id":"not_found","message":"Not found"}]}"#,
            #"[1]"#,
        ]
        for text in bad {
            #expect(throws: (any Error).self, "\(text)") { try CoinbaseAnswers.transactionPage(Array(text.utf8)) }
        }
        #expect(throws: ProviderFailure.self) { try CoinbaseAnswers.accountPage(Array(#"{"data":[{"id":"a","currency":"BTC","balance":{"amount":"x"}}]}"#.utf8)) }
        #expect(throws: ProviderFailure.self) { try CoinbaseAnswers.accountPage(Array(repeating: 0x20, count: (4 << 20) + 1)) }
    }
}
