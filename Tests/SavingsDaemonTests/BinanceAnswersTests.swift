import Foundation
import SavingsCore
import SavingsRPC
import Testing
@testable import SavingsDaemon

/// Binance's answers read as its documentation shows them, and as hostile input.
@Suite struct BinanceAnswersTests {
    /// The response example of https://developers.binance.com/docs/wallet/capital/deposite-history
    /// (its `//` comments taken out; the second entry's long fields shortened).
    static let deposits = #"""
        [{"id":"769800519366885376","amount":"0.001","coin":"BNB","network":"BNB","status":1,
          "address":"bnb136ns6lfw4zs5hg4n85vdthaad7hq5m4gtkgf23","addressTag":"101764890",
          "txId":"98A3EA560C6B3336D348B6C83F0F95ECE4F1F5919E94BD006E5BF3BF264FACFC","insertTime":1661493146000,
          "completeTime":1661493146000,"transferType":0,"confirmTimes":"1/1","unlockConfirm":0,"walletType":0,"travelRuleStatus":0},
         {"id":"769754833590042625","amount":"0.50000000","coin":"IOTA","network":"IOTA","status":1,
          "address":"SIZ9VLMHWATXKV99LH99CIGFJFUMLEHGWVZVNNZXRJJVWBPHYWPPBOSDORZ9EQSHCZAMPVAPGFYQAUUV9DROOXJLNW","addressTag":"",
          "txId":"ESBFVQUTPIWQNJSPXFNHNYHSQNTGKRVKPRABQWTAXCDWOAKDKYWPTVG9BGXNVNKTLEJGESAVXIKIZ9999","insertTime":1599620082000,
          "completeTime":1599621997000,"transferType":0,"confirmTimes":"1/1","unlockConfirm":0,"walletType":0,"travelRuleStatus":0}]
        """#

    /// The response example of https://developers.binance.com/docs/wallet/capital/withdraw-history
    /// (its `//` comments taken out).
    static let withdrawals = #"""
        [{"id":"b6ae22b3aa844210a7041aee7589627c","amount":"8.91000000","transactionFee":"0.004","coin":"USDT","status":6,
          "address":"0x94df8b352de7f46f64b01d3666bf6e936e44ce60","txId":"0xb5ef8c13b968a406cc62a93a8bd80f9e9a906ef1b3fcf20a2e48573c17659268",
          "applyTime":"2019-10-12 11:12:02","network":"ETH","transferType":0,"withdrawOrderId":"WITHDRAWtest123",
          "info":"The address is not valid. Please confirm with the recipient","confirmNo":3,"walletType":1,"txKey":"","completeTime":"2023-03-23 16:52:41"},
         {"id":"156ec387f49b41df8724fa744fa82719","amount":"0.00150000","transactionFee":"0.00050000","coin":"BTC","status":6,
          "address":"1FZdVHtiBqMrWdjPyRPULCUceZPJ2WLCsB","txId":"60fd9007ebfddc753455f95fafa808c4302c836e4d1eebc5a132c36c1d8ac354",
          "applyTime":"2019-09-24 12:43:45","network":"BTC","transferType":0,"info":"","confirmNo":2,"walletType":1,"txKey":"",
          "completeTime":"2023-03-23 16:52:41"}]
        """#

    static func parse(_ text: String) throws -> JSONValue { try JSONParser.parse(Array(text.utf8)) }

    @Test func theDocumentedDepositsAreReadExactly() throws {
        let movements = try BinanceAnswers.deposits(try Self.parse(Self.deposits))
        #expect(movements.map(\.id) == ["deposit:769800519366885376", "deposit:769754833590042625"])
        let rows = BinanceAnswers.rows(movements, coin: "BNB")
        #expect(rows.count == 1, "only the coin asked for")
        #expect(rows.first?.amount == Decimal(string: "0.001"))
        #expect(rows.first.map { Timestamp.format($0.date) } == "2022-08-26T05:52:26.000Z", "insertTime, the time the window is filtered by")
        #expect(rows.first?.note?.contains("trades are not synced") == true)
        #expect(BinanceAnswers.rows(movements, coin: "IOTA").first?.amount == Decimal(string: "0.5"))
    }

    /// A withdrawal leaves with its fee on top: 0.0015 sent and 0.0005 fee is −0.002.
    @Test func theDocumentedWithdrawalsAreNegativeWithTheirFee() throws {
        let movements = try BinanceAnswers.withdrawals(try Self.parse(Self.withdrawals))
        let btc = BinanceAnswers.rows(movements, coin: "BTC")
        #expect(btc.map(\.id) == ["withdrawal:156ec387f49b41df8724fa744fa82719"])
        #expect(btc.first?.amount == Decimal(string: "-0.002"))
        #expect(btc.first.map { Timestamp.format($0.date) } == "2019-09-24T12:43:45.000Z", "applyTime is UTC")
        #expect(BinanceAnswers.rows(movements, coin: "USDT").first?.amount == Decimal(string: "-8.914"))
    }

    /// Only what is in the balance becomes a row: deposits of status 1 and 6 (credited, not yet
    /// withdrawable), withdrawals of status 6.
    @Test func onlyCreditedAndCompletedMovementsAreRows() throws {
        let deposits = (0...8).map { #"{"id":"\#($0)","amount":"1","coin":"BTC","status":\#($0),"insertTime":1661493146000}"# }
        let rows = BinanceAnswers.rows(try BinanceAnswers.deposits(try Self.parse("[" + deposits.joined(separator: ",") + "]")), coin: "BTC")
        #expect(rows.map(\.id) == ["deposit:1", "deposit:6"])
        let old = try BinanceAnswers.deposits(try Self.parse(#"[{"txId":"Internal transfer 51376627901","amount":"1","coin":"BTC","status":1,"insertTime":1661493146000}]"#))
        #expect(old.map(\.id) == ["deposit:tx:Internal_transfer_51376627901"], "without an id, the txId stands for it")
        let withdrawals = (0...6).map { #"{"id":"w\#($0)","amount":"1","transactionFee":"0.1","coin":"BTC","status":\#($0),"applyTime":"2024-01-02 03:04:05"}"# }
        let out = BinanceAnswers.rows(try BinanceAnswers.withdrawals(try Self.parse("[" + withdrawals.joined(separator: ",") + "]")), coin: "BTC")
        #expect(out.map(\.id) == ["withdrawal:w6"] && out.first?.amount == Decimal(string: "-1.1"))
    }

    /// The account example of rest-api.md (`GET /api/v3/account`): free and locked added.
    @Test func theSpotBalanceIsFreeAndLocked() throws {
        let answer = try Self.parse(#"""
            {"makerCommission":15,"takerCommission":15,"canTrade":true,"canWithdraw":true,"canDeposit":true,"accountType":"SPOT",
             "balances":[{"asset":"BTC","free":"4723846.89208129","locked":"0.00000000"},{"asset":"LTC","free":"4763368.68006011","locked":"0.5"}],
             "permissions":["SPOT"],"uid":354937868}
            """#)
        #expect(try BinanceAnswers.balance(answer, coin: "BTC") == Decimal(string: "4723846.89208129"))
        #expect(try BinanceAnswers.balance(answer, coin: "LTC") == Decimal(string: "4763369.18006011"), "4763368.68006011 + 0.5")
        #expect(try BinanceAnswers.balance(answer, coin: "ETH") == 0, "omitZeroBalances leaves zeros out")
    }

    /// The key permission examples of https://developers.binance.com/docs/wallet/account/api-key-permission.
    @Test func powersAreThePermissionsBeyondReading() throws {
        let english = try Self.parse(#"""
            {"ipRestrict":false,"createTime":1698645219000,"enableReading":true,"enableWithdrawals":false,"enableInternalTransfer":false,
             "enableMargin":false,"enableFutures":false,"permitsUniversalTransfer":false,"enableVanillaOptions":false,"enableFixApiTrade":false,
             "enableFixReadOnly":true,"enableSpotAndMarginTrading":false,"enablePortfolioMarginTrading":true}
            """#)
        #expect(try BinanceAnswers.powers(english) == ["enablePortfolioMarginTrading"])
        let readOnly = try Self.parse(#"{"ipRestrict":true,"enableReading":true,"enableFixReadOnly":true,"enableWithdrawals":false}"#)
        #expect(try BinanceAnswers.powers(readOnly).isEmpty)
        let trading = try Self.parse(#"{"enableReading":true,"enableWithdrawals":true,"enableSpotAndMarginTrading":true,"permitsUniversalTransfer":true}"#)
        #expect(try BinanceAnswers.powers(trading) == ["enableSpotAndMarginTrading", "enableWithdrawals", "permitsUniversalTransfer"])
        #expect(throws: ProviderFailure.self) { try BinanceAnswers.powers(try Self.parse(#"{"code":-2015}"#)) }
    }

    /// The error codes of errors.md, as the person reads them.
    @Test func refusalsSayWhatToDo() {
        for (code, words) in [(-1021, "clock is off"), (-1022, "does not belong to the API key"), (-2014, "does not read the API key"),
                              (-2015, "IP address")] {
            let failure = BinanceAnswers.failure(status: 400, body: Array(#"{"code":\#(code),"msg":"x"}"#.utf8), what: "account")
            #expect(failure.description.contains(words) && failure.retryAfter == nil, "\(code): \(failure)")
        }
        #expect(BinanceAnswers.failure(status: 503, body: [], what: "account").retryAfter == 60)
        #expect(BinanceAnswers.failure(status: 400, body: Array(#"{"code":-1003,"msg":"Too much request weight used"}"#.utf8), what: "x").retryAfter == 60)
        #expect(BinanceAnswers.failure(status: 401, body: Array("<html>".utf8), what: "account").description == "Binance answered HTTP 401 to account")
        let other = BinanceAnswers.failure(status: 400, body: Array(#"{"code":-1100,"msg":"Illegal characters\u0007 found"}"#.utf8), what: "x")
        #expect(other.description == "Binance answered -1100: Illegal characters found", "the service's words, sanitized")
    }

    /// The signed query: parameters, `recvWindow`, `timestamp`, then the signature of all of it
    /// (HMAC-SHA256 with the docs' example secret, worked out with Python's `hmac`).
    @Test func theQueryIsSignedLast() {
        let query = BinanceAnswers.query([("coin", "BTC")], timestamp: 1_499_827_319_559,
                                         secret: "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j")
        #expect(query == "coin=BTC&recvWindow=10000&timestamp=1499827319559&signature=5fead54b494489d772fd3d0ca21a16be33fe76ed8f0c000c80405a7f36bcc4a8")
    }

    /// What does not have the documented shape is refused, never guessed.
    @Test func hostileAnswersAreRefused() throws {
        let entry = #"{"id":"1","coin":"BTC","status":1,"insertTime":1661493146000,"amount":"#
        for amount in [#""1e3""#, #""+1""#, #"" 1""#, #""1,5""#, #""""#, #""-1""#, "1", #""1.""#, #"".5""#, #""NaN""#] {
            #expect(throws: (any Error).self, "\(amount)") { try BinanceAnswers.deposits(try Self.parse("[" + entry + amount + "}]")) }
        }
        let bad = [
            #"[{"id":"<script>","amount":"1","coin":"BTC","status":1,"insertTime":1661493146000}]"#,
            #"[{"amount":"1","coin":"BTC","status":1,"insertTime":1661493146000}]"#,
            #"[{"id":"1","amount":"1","coin":"BTC","status":"1","insertTime":1661493146000}]"#,
            #"[{"id":"1","amount":"1","coin":"BTC","status":1,"insertTime":-5}]"#,
            #"[{"id":"1","amount":"1","coin":"B C","status":1,"insertTime":1661493146000}]"#,
            #"[1]"#,
            #"{"code":-1022,"msg":"Signature for this request is not valid."}"#,
        ]
        for text in bad {
            #expect(throws: (any Error).self, "\(text)") { try BinanceAnswers.deposits(try Self.parse(text)) }
        }
        for applyTime in ["2019-10-12T11:12:02", "2019-13-12 11:12:02", "1570878722", ""] {
            let text = #"[{"id":"a1","amount":"1","transactionFee":"0","coin":"BTC","status":6,"applyTime":"\#(applyTime)"}]"#
            #expect(throws: (any Error).self, "\(applyTime)") { try BinanceAnswers.withdrawals(try Self.parse(text)) }
        }
        let many = "[" + Array(repeating: #"{"id":"1","amount":"1","coin":"BTC","status":1,"insertTime":1661493146000}"#, count: 1_001)
            .joined(separator: ",") + "]"
        #expect(throws: ProviderFailure.self) { try BinanceAnswers.deposits(try Self.parse(many)) }
        #expect(throws: ProviderFailure.self) { try BinanceAnswers.historyPage(Array(repeating: 0x20, count: (4 << 20) + 1), withdrawals: false) }
    }

    /// Pacing: a call waits for the next minute only when this minute's reported weight and its
    /// cost pass nine tenths of the limit (withdrawal history: 18 000 of the account's 180 000).
    @Test func weightWaitsForTheNextMinute() {
        let now = Date(timeIntervalSince1970: 28_000_000 * 60 + 30)
        let minute = BinanceWeights.minute(now)
        #expect(BinanceWeights.delay(used: (11_000, minute), cost: 1, limit: 12_000, now: now) == 31, "30 s to the minute, and one more")
        #expect(BinanceWeights.delay(used: (100, minute), cost: 1, limit: 12_000, now: now) == 0)
        #expect(BinanceWeights.delay(used: (144_000, minute), cost: 18_000, limit: 180_000, now: now) == 0, "exactly nine tenths fits")
        #expect(BinanceWeights.delay(used: (144_001, minute), cost: 18_000, limit: 180_000, now: now) == 31)
        #expect(BinanceWeights.delay(used: (11_000, minute - 1), cost: 1, limit: 12_000, now: now) == 0, "a past minute's count is over")
        #expect(BinanceWeights.delay(used: nil, cost: 20, limit: 6_000, now: now) == 0)
    }

    /// A read's place: pages of a full window, then withdrawals, then the next window.
    @Test func theCursorWalksWindowsAndParts() throws {
        var cursor = BinanceSession.Cursor(start: 0, end: 200_000_000_000, part: .deposits, offset: 0)
        cursor.advance(pageCount: 1_000, windowEnd: 7_775_999_999)
        #expect(cursor == BinanceSession.Cursor(start: 0, end: 200_000_000_000, part: .deposits, offset: 1_000))
        cursor.advance(pageCount: 3, windowEnd: 7_775_999_999)
        #expect(cursor.part == .withdrawals && cursor.offset == 0)
        cursor.advance(pageCount: 0, windowEnd: 7_775_999_999)
        #expect(cursor == BinanceSession.Cursor(start: 7_776_000_000, end: 200_000_000_000, part: .deposits, offset: 0))
        #expect(BinanceSession.Cursor(cursor.text) == cursor)
        #expect(BinanceSession.Cursor("start=1;end=2;part=x;ofs=0") == nil && BinanceSession.Cursor("ofs=-1") == nil)
    }
}
