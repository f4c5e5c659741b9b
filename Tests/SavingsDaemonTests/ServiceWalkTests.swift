import Foundation
import SavingsCore
import Synchronization
import Testing
@testable import SavingsDaemon

/// The three sessions' walks over a service (windows, pages, where a read stops), with answers
/// chosen per URL instead of sockets; the answers are the documentation's shapes.
@Suite struct ServiceWalkTests {
    /// Every URL asked for, in order, and the answer a function of it gave.
    final class Recorder: Sendable {
        let urls = Mutex<[String]>([])
        let answer: @Sendable (URLComponents) -> String

        init(_ answer: @escaping @Sendable (URLComponents) -> String) { self.answer = answer }

        var http: ProviderHTTP {
            ProviderHTTP(maxBody: 4 << 20) { url in
                self.urls.withLock { $0.append(url) }
                return Array(self.answer(URLComponents(string: url)!).utf8)
            }
        }

        var asked: [URLComponents] { urls.withLock { $0 }.map { URLComponents(string: $0)! } }
    }

    final class Stored: Sendable {
        let pages = Mutex<[(rows: [LinkedRow], cursor: String?)]>([])
        var store: @Sendable ([LinkedRow], String?) async throws -> Void { { rows, cursor in self.pages.withLock { $0.append((rows, cursor)) } } }
        var rows: [LinkedRow] { pages.withLock { $0 }.flatMap(\.rows) }
    }

    static func query(_ parts: URLComponents, _ name: String) -> String? { parts.queryItems?.first { $0.name == name }?.value }

    /// 100 days back: two windows (90 days less a millisecond, then the rest), each deposits
    /// then withdrawals, every query signed with the signature last.
    @Test func binanceWalksNinetyDayWindows() async throws {
        let now = Int64(Date().timeIntervalSince1970 * 1000)
        let recorder = Recorder { parts in
            if parts.path.hasSuffix("deposit/hisrec"), Self.query(parts, "offset") == "0" {
                let time = Int64(Self.query(parts, "startTime")!)! + 1_000
                return #"[{"id":"d\#(time)","amount":"0.5","coin":"BTC","status":1,"insertTime":\#(time)},{"id":"p\#(time)","amount":"9","coin":"BTC","status":0,"insertTime":\#(time)}]"#
            }
            if parts.path.hasSuffix("withdraw/history") {
                return #"[{"id":"w1","amount":"0.1","transactionFee":"0.0005","coin":"BTC","status":6,"applyTime":"2024-01-02 03:04:05"}]"#
            }
            return "[]"
        }
        let session = BinanceSession(base: "https://api.binance.com", coin: "BTC", key: "k", secret: "s", http: recorder.http, weights: BinanceWeights())
        let stored = Stored()
        let listed = try await session.history(since: Date(timeIntervalSince1970: TimeInterval(now) / 1000 - 100 * 86_400), resume: nil, store: stored.store)
        let asked = recorder.asked
        #expect(asked.map { $0.path.split(separator: "/").last! } == ["hisrec", "history", "hisrec", "history"])
        let starts = asked.map { Int64(Self.query($0, "startTime")!)! }, ends = asked.map { Int64(Self.query($0, "endTime")!)! }
        #expect(ends[0] - starts[0] == 90 * 86_400_000 - 1 && starts[2] == ends[0] + 1 && ends[2] >= now)
        #expect(asked.allSatisfy { $0.percentEncodedQuery!.contains("&recvWindow=10000&timestamp=") && $0.queryItems?.last?.name == "signature" })
        #expect(stored.rows.map(\.amount) == [Decimal(string: "0.5")!, Decimal(string: "-0.1005")!, Decimal(string: "0.5")!, Decimal(string: "-0.1005")!])
        #expect(listed == Set(stored.rows.map(\.id)), "the pending deposit is neither stored nor listed")
        #expect(stored.pages.withLock { $0 }.last?.cursor == nil && stored.pages.withLock { $0 }.first?.cursor?.hasPrefix("start=") == true)
        // A stopped read goes on from its cursor and does not claim to have listed everything.
        let resumed = try await session.history(since: nil, resume: stored.pages.withLock { $0 }[1].cursor, store: Stored().store)
        #expect(resumed == nil)
    }

    /// The test key of ServiceSigningTests (SEC1 PEM, as Coinbase hands ECDSA keys out).
    static let pem = """
        -----BEGIN EC PRIVATE KEY-----
        MHcCAQEEIBsUKwcsK/NQwboYgnwY+X/0ekotv48NoACT4WB2UlbLoAoGCCqGSM49
        AwEHoUQDQgAEYfILNOYnyVRWCMcDZ93gR4A2Y4nuMv2DurCWOvYIlmTkDnVqlV1T
        VI/fnCf1Nr15OniFU5QUad4Q7RTw+T6JyQ==
        -----END EC PRIVATE KEY-----
        """

    /// A currency names the one account of it; its transactions page by `next_uri` and a read
    /// from `since` stops at the first row older than it.
    @Test func coinbaseResolvesTheAccountAndStopsAtSince() async throws {
        let id = "2bbf394c-193b-5b2a-9155-3b4732659ede"
        let recorder = Recorder { parts in
            switch parts.path {
            case "/v2/accounts":
                return #"{"pagination":{"next_uri":null},"data":[{"id":"\#(id)","currency":{"code":"BTC"},"balance":{"amount":"39.59000000","currency":"BTC"}},{"id":"58542935-67b5-56e1-a3f9-42686e07fa40","currency":"ETH","balance":{"amount":"1","currency":"ETH"}}]}"#
            case "/v2/accounts/\(id)":
                return #"{"data":{"id":"\#(id)","currency":{"code":"BTC"},"balance":{"amount":"34.589","currency":"BTC"}}}"#
            case "/v2/accounts/\(id)/transactions" where Self.query(parts, "starting_after") == nil:
                return #"{"pagination":{"next_uri":"/v2/accounts/\#(id)/transactions?limit=100&starting_after=t2"},"data":[{"id":"t1","type":"send","status":"completed","amount":{"amount":"-5.00000000","currency":"BTC"},"created_at":"2024-03-12T15:51:38-07:00"},{"id":"t2","type":"buy","status":"pending","amount":{"amount":"1","currency":"BTC"},"created_at":"2024-03-10T10:00:00Z"}]}"#
            default:
                return #"{"pagination":{"next_uri":"/v2/accounts/\#(id)/transactions?limit=100&starting_after=t4"},"data":[{"id":"t3","type":"receive","status":"completed","amount":{"amount":"0.001","currency":"BTC"},"created_at":"2024-03-01T00:00:00Z"},{"id":"t4","type":"receive","status":"completed","amount":{"amount":"2","currency":"BTC"},"created_at":"2024-01-01T00:00:00Z"}]}"#
            }
        }
        let session = CoinbaseSession(base: "https://api.coinbase.com", accountName: "btc", keyName: "organizations/0b2a/apiKeys/7c1f",
                                      privateKey: Self.pem, http: recorder.http)
        let before = try await session.account()
        #expect(before.balance == Decimal(string: "39.59") && before.currency == "BTC")
        let stored = Stored()
        let listed = try await session.history(since: Timestamp.date(milliseconds: 1_706_745_600_000), resume: nil, store: stored.store)
        #expect(stored.rows.map(\.id) == ["t1", "t3"], "t2 is pending, t4 older than since (2024-02-01)")
        #expect(listed == ["t1", "t3"] && stored.pages.withLock { $0 }.last?.cursor == nil)
        let after = try await session.account()
        #expect(after.balance == Decimal(string: "34.589") && after.currency == "BTC", "once found, the account is read by its id")
        #expect(recorder.asked.map(\.path) == ["/v2/accounts", "/v2/accounts/\(id)/transactions", "/v2/accounts/\(id)/transactions", "/v2/accounts/\(id)"])
        await #expect(throws: ProviderFailure.self) {
            _ = try await session.history(since: nil, resume: "/v2/accounts/58542935-67b5-56e1-a3f9-42686e07fa40/transactions", store: Stored().store)
        }
    }

    /// Found by an outside check: a `next_uri` leading back to a page already read sent the
    /// read round for ever (and every asset.sync of the asset waited on it).
    @Test func coinbasePagesInACircleEndTheRead() async throws {
        let id = "2bbf394c-193b-5b2a-9155-3b4732659ede"
        let recorder = Recorder { _ in
            #"{"pagination":{"next_uri":"/v2/accounts/\#(id)/transactions?limit=100&starting_after=t1"},"data":[{"id":"t1","type":"receive","status":"completed","amount":{"amount":"1","currency":"BTC"},"created_at":"2024-03-01T00:00:00Z"}]}"#
        }
        let session = CoinbaseSession(base: "https://api.coinbase.com", accountName: id, keyName: "organizations/0b2a/apiKeys/7c1f",
                                      privateKey: Self.pem, http: recorder.http)
        await #expect(throws: ProviderFailure.self) { _ = try await session.history(since: nil, resume: nil, store: Stored().store) }
        #expect(recorder.asked.count == 2, "the first page and its next; that next again is not asked for: \(recorder.asked.count)")
    }

    /// 100 days back: two windows; the balance before comes from `balances-only`, the one
    /// after from the last window's answer (no third request).
    @Test func simpleFINWalksWindowsWithinItsDailyRequests() async throws {
        let recorder = Recorder { parts in
            let start = Self.query(parts, "start-date").flatMap(Int.init) ?? 0
            let transactions = Self.query(parts, "balances-only") == "1" ? "" : #","transactions":[{"id":"T\#(start)","posted":\#(start + 60),"amount":"-12.50","description":"COFFEE"},{"id":"P","posted":0,"amount":"-1","description":"x","pending":true}]"#
            return #"{"errors":[],"accounts":[{"org":{"domain":"mybank.com","sfin-url":"https://sfin.mybank.com"},"id":"ACT-1","name":"Checking","currency":"USD","balance":"100.23","balance-date":978366153\#(transactions)}]}"#
        }
        let session = SimpleFINSession(base: "https://bridge.simplefin.org/simplefin", authorization: "Basic dXNlcjEyMzpwYXNzNDU2", accountID: "ACT-1",
                                       http: recorder.http)
        let before = try await session.account()
        #expect(before.balance == Decimal(string: "100.23") && before.currency == "USD")
        let stored = Stored()
        let listed = try await session.history(since: Date().addingTimeInterval(-100 * 86_400), resume: nil, store: stored.store)
        let after = try await session.account()
        #expect(after.balance == Decimal(string: "100.23") && after.currency == "USD")
        let asked = recorder.asked
        #expect(asked.count == 3, "balance, two windows, and the balance after from the last window")
        #expect(Self.query(asked[0], "balances-only") == "1" && Self.query(asked[0], "account") == "ACT-1")
        let windows = asked.dropFirst().map { (Int(Self.query($0, "start-date")!)!, Int(Self.query($0, "end-date")!)!) }
        #expect(windows[0].1 - windows[0].0 == 90 * 86_400 && windows[1].0 == windows[0].1)
        #expect(asked.dropFirst().allSatisfy { Self.query($0, "pending") == "0" })
        #expect(stored.rows.count == 2 && stored.rows.allSatisfy { $0.amount == Decimal(string: "-12.5") && $0.note == "COFFEE" })
        #expect(listed?.count == 2)
    }

    /// A claim posts to the token's URL and keeps the access URL the answer is.
    @Test func simpleFINClaimsAnAccessURL() async throws {
        let recorder = Recorder { _ in "https://demo:demo@bridge.simplefin.org/simplefin" }
        let access = try await SimpleFINSession.claim(setupToken: "aHR0cHM6Ly9icmlkZ2Uuc2ltcGxlZmluLm9yZy9zaW1wbGVmaW4vY2xhaW0vZGVtbw==", http: recorder.http)
        #expect(access == "https://demo:demo@bridge.simplefin.org/simplefin")
        #expect(recorder.urls.withLock { $0 } == ["https://bridge.simplefin.org/simplefin/claim/demo"])
        await #expect(throws: ProviderFailure.self) { _ = try await SimpleFINSession.claim(setupToken: "not a token", http: recorder.http) }
    }
}
