import Foundation
import SavingsCore
import SavingsRPC
import Testing
@testable import SavingsDaemon

/// SimpleFIN's Account Set read as the protocol shows it, and as hostile input.
@Suite struct SimpleFINAnswersTests {
    /// The "Account Set" example of https://www.simplefin.org/protocol.html (protocol.md),
    /// with the trailing commas its example has taken out (they are not JSON).
    static let accountSet = #"""
        {"errors":[],
         "accounts":[{"org":{"domain":"mybank.com","sfin-url":"https://sfin.mybank.com"},
           "id":"2930002","name":"Savings","currency":"USD","balance":"100.23","available-balance":"75.23","balance-date":978366153,
           "transactions":[{"id":"12394832938403","posted":793090572,"amount":"-33293.43","description":"Uncle Frank's Bait Shop"}],
           "extra":{"account-open-date":978360153}}]}
        """#

    /// The App Quickstart's sample response: an error beside the account.
    static let reauthenticate = #"""
        {"errors":["You must reauthenticate."],
         "accounts":[{"org":{"domain":"mybank.com","sfin-url":"https://sfin.mybank.com"},"id":"2930002","name":"Savings",
           "currency":"USD","balance":"100.23","available-balance":"75.23","balance-date":978366153,"transactions":[]}]}
        """#

    static func set(_ text: String) throws -> (accounts: [SimpleFINAnswers.Account], errors: [String]) {
        try SimpleFINAnswers.accountSet(try JSONParser.parse(Array(text.utf8)))
    }

    @Test func theDocumentedAccountSetIsReadExactly() throws {
        let account = try SimpleFINAnswers.linked(try Self.set(Self.accountSet), id: "2930002")
        #expect(account.currency == "USD" && account.balance == Decimal(string: "100.23"))
        let row = try #require(account.transactions.first)
        #expect(row.id == "12394832938403" && row.amount == Decimal(string: "-33293.43") && row.note == "Uncle Frank's Bait Shop")
        #expect(Timestamp.format(row.date) == "1995-02-18T06:56:12.000Z", "posted, Unix seconds")
    }

    /// Errors are shown when the account is not there; beside it they are not a failure.
    @Test func errorsFailOnlyWithoutTheAccount() throws {
        let set = try Self.set(Self.reauthenticate)
        #expect(set.errors == ["You must reauthenticate."])
        #expect(try SimpleFINAnswers.linked(set, id: "2930002").balance == Decimal(string: "100.23"))
        do {
            _ = try SimpleFINAnswers.linked(set, id: "ACT-1")
            Issue.record("a missing account was taken")
        } catch let failure as ProviderFailure {
            #expect(failure.description == "SimpleFIN: You must reauthenticate.")
        }
        #expect(throws: ProviderFailure.self) { try SimpleFINAnswers.linked(try Self.set(Self.accountSet), id: "ACT-1") }
        // Sanitized and bounded: control characters out, five messages at most, errlist read too.
        let noisy = try Self.set(#"{"errors":["a\u0000b\u001b[31m","a\u0000b\u001b[31m","c","d","e","f","g"],"errlist":[{"code":"con.auth","message":"Authentication required"}],"accounts":[]}"#)
        #expect(noisy.errors == ["ab[31m", "c", "d", "e", "Authentication required"], "the first five of each, once each, five in all")
        do {
            _ = try Self.set(#"{"errlist":[{"code":"con.auth","message":"Authentication\nrequired"}]}"#)
            Issue.record("an answer without accounts was taken")
        } catch let failure as ProviderFailure {
            #expect(failure.description == "SimpleFIN: Authentication required")
        }
    }

    /// The "Custom Currencies" example: a URL for a currency is not held.
    @Test func aCustomCurrencyIsRefused() throws {
        let set = try Self.set(#"""
            {"errors":[],"accounts":[{"org":{"domain":"example.com","sfin-url":"https://sfin.example.com"},"id":"2930002","name":"Savings",
              "currency":"https://www.example.com/flight-miles","balance":"100.23","available-balance":"75.23","balance-date":978366153,"transactions":[]}]}
            """#)
        #expect(throws: ProviderFailure.self) { try SimpleFINAnswers.linked(set, id: "2930002") }
    }

    /// The "Transaction" example is pending: not a row. Descriptions are bounded and cleaned.
    @Test func pendingTransactionsAreNotRowsAndNotesAreClean() throws {
        let pending = try JSONParser.parse(Array(#"{"id":"12394832938403","posted":793090572,"amount":"-33293.43","description":"Uncle Frank's Bait Shop","pending":true,"extra":{"category":"food"}}"#.utf8))
        #expect(try SimpleFINAnswers.row(pending) == nil)
        let unposted = try JSONParser.parse(Array(#"{"id":"1","posted":0,"amount":"-1","description":"x"}"#.utf8))
        #expect(try SimpleFINAnswers.row(unposted) == nil)
        let long = String(repeating: "é", count: 300)
        let noisy = try JSONParser.parse(Array(#"{"id":"2","posted":978366153,"amount":"5.00","description":"PAY\u0007ROLL\t\t ACME\n\#(long)"}"#.utf8))
        let row = try #require(try SimpleFINAnswers.row(noisy))
        #expect(row.note?.hasPrefix("PAYROLL ACME éé") == true && row.note?.count == 200)
        #expect(row.amount == 5)
    }

    @Test func hostileAnswersAreRefused() throws {
        let account = #"{"org":{},"id":"A1","name":"n","currency":"USD","balance-date":1,"#
        let bad = [
            account + #""balance":"1e3"}"#,
            account + #""balance":100.23}"#,
            account + #""balance":"1","transactions":[{"id":"t","posted":-5,"amount":"1","description":""}]}"#,
            account + #""balance":"1","transactions":[{"id":"t","posted":1,"amount":"1.","description":""}]}"#,
            account + #""balance":"1","transactions":[{"posted":1,"amount":"1","description":""}]}"#,
            account + #""balance":"1","transactions":[{"id":"t t","posted":1,"amount":"1","description":""}]}"#,
        ]
        for text in bad {
            #expect(throws: (any Error).self, "\(text)") { try Self.set(#"{"errors":[],"accounts":["# + text + "]}") }
        }
        #expect(throws: ProviderFailure.self) { try Self.set(#"{"errors":[],"accounts":{}}"#) }
        #expect(throws: ProviderFailure.self) { try Self.set("[]") }
        #expect(throws: ProviderFailure.self) { try SimpleFINAnswers.accountSetPage(Array(repeating: 0x20, count: (4 << 20) + 1)) }
    }

    /// The protocol's statuses as what to do.
    @Test func statusesSayWhatToDo() {
        #expect(SimpleFINAnswers.failure(status: 402).description.contains("payment"))
        #expect(SimpleFINAnswers.failure(status: 403).description.contains("claim a new setup token"))
        #expect(SimpleFINAnswers.failure(status: 503).retryAfter == 1_800)
    }

    /// A claim answers the access URL (the protocol's example), https or a loopback server's http.
    @Test func aClaimAnswersAnAccessURL() throws {
        #expect(try SimpleFINAnswers.accessURL(Array("https://demo:demo@bridge.simplefin.org/simplefin\n".utf8)) == "https://demo:demo@bridge.simplefin.org/simplefin")
        #expect(try SimpleFINAnswers.accessURL(Array("http://u:p@127.0.0.1:8080/simplefin".utf8)) == "http://u:p@127.0.0.1:8080/simplefin")
        for text in ["http://demo:demo@bridge.simplefin.org/simplefin", "https://bridge.simplefin.org/simplefin", "<html>Forbidden</html>", ""] {
            #expect(throws: ProviderFailure.self, "\(text)") { try SimpleFINAnswers.accessURL(Array(text.utf8)) }
        }
    }

    @Test func theCursorRoundTrips() {
        let cursor = SimpleFINSession.Cursor(start: 978_366_153, end: 986_142_153)
        #expect(SimpleFINSession.Cursor(cursor.text) == cursor)
        #expect(SimpleFINSession.Cursor("start=5;end=1") == nil && SimpleFINSession.Cursor("nothing") == nil)
    }
}
