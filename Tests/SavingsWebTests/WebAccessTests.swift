import Foundation
import SavingsCore
import SavingsRPC
import NIOCore
import Testing
@testable import SavingsWeb

/// The web view's guard, rule by rule, without a server.
@Suite struct WebAccessTests {
    let access = WebAccess(host: "127.0.0.1", port: 8123, token: "t0ken", session: "s3ssion", csrf: "csrf1")

    func request(_ method: String = "GET", host: String? = "127.0.0.1:8123", path: String = "/", token: String? = nil,
                 cookie: String? = "savings_session_8123=s3ssion", origin: String? = nil, referer: String? = nil,
                 csrf: String? = nil) -> WebAccess.Request {
        .init(method: method, host: host, path: path, token: token, cookieHeader: cookie, origin: origin, referer: referer, csrf: csrf)
    }

    @Test func theTokenIsExchangedForTheCookie() {
        #expect(access.check(request(token: "t0ken", cookie: nil)) == .exchange(path: "/"))
        #expect(access.setCookie == "savings_session_8123=s3ssion; HttpOnly; SameSite=Strict; Path=/")
        guard case .deny = access.check(request(token: "wrong", cookie: nil)) else { Issue.record("a wrong token passed"); return }
        guard case .deny = access.check(request(token: "t0ke", cookie: nil)) else { Issue.record("a token's prefix passed"); return }
    }

    /// Found by trying the view: two servers on one host (ports 8765 and 8123) set the same
    /// cookie name, and cookies ignore ports, so each signed the other out. Each port has its own.
    @Test func eachPortHasACookieOfItsOwn() {
        let other = WebAccess(host: "127.0.0.1", port: 8765, token: "t0ken", session: "0ther", csrf: "csrf1")
        #expect(other.cookieName != access.cookieName)
        let both = "savings_session_8765=0ther; savings_session_8123=s3ssion"
        #expect(access.check(request(cookie: both)) == .allow)
        #expect(other.check(request(host: "127.0.0.1:8765", cookie: both)) == .allow)
    }

    @Test func withoutTheCookieNothingIsServed() {
        for cookie in [nil, "savings_session_8123=other", "other=s3ssion", "savings_session_8123=s3ssion2"] {
            guard case .deny = access.check(request(cookie: cookie)) else { Issue.record("\(cookie ?? "no cookie") passed"); continue }
        }
        #expect(access.check(request(cookie: "theme=dark; savings_session_8123=s3ssion")) == .allow)
    }

    @Test func onlyTheListenAddressAndLocalhostAreHosts() {
        #expect(access.check(request(host: "localhost:8123")) == .allow)
        #expect(access.check(request(host: "LOCALHOST:8123")) == .allow)
        for host in [nil, "evil.example:8123", "127.0.0.1:8124", "127.0.0.1", "evil.example"] {
            guard case .deny = access.check(request(host: host)) else { Issue.record("Host \(host ?? "none") passed"); continue }
        }
        // Even with the token: a rebinding page must not get the cookie.
        guard case .deny = access.check(request(host: "evil.example:8123", token: "t0ken", cookie: nil)) else {
            Issue.record("the token was exchanged for a foreign host"); return
        }
    }

    @Test func aChangeNeedsThisOriginAndTheFormToken() {
        #expect(access.check(request("POST", origin: "http://127.0.0.1:8123", csrf: "csrf1")) == .allow)
        #expect(access.check(request("POST", referer: "http://localhost:8123/goals", csrf: "csrf1")) == .allow)
        let refused: [WebAccess.Request] = [
            request("POST", origin: "http://evil.example", csrf: "csrf1"),
            request("POST", origin: "http://127.0.0.1:8124", csrf: "csrf1"),
            request("POST", csrf: "csrf1"),
            request("POST", origin: "http://127.0.0.1:8123"),
            request("POST", origin: "http://127.0.0.1:8123", csrf: "csrf2"),
            request("POST", cookie: nil, origin: "http://127.0.0.1:8123", csrf: "csrf1"),
            request("DELETE", origin: "http://127.0.0.1:8123", csrf: "csrf1"),
        ]
        for request in refused {
            guard case .deny = access.check(request) else { Issue.record("\(request) passed"); continue }
        }
    }

    @Test func secretsAreFreshAndLongEnough() {
        let one = WebAccess(host: "127.0.0.1", port: 1), two = WebAccess(host: "127.0.0.1", port: 1)
        #expect(one.token.count == 32 && one.csrf.count == 32)
        #expect(one.token != two.token && one.token != one.csrf)
    }

    @Test func formsAreDecoded() {
        let form = Form("csrf=a%2Bb&note=coffee+and+cake&empty=&csrf=second")
        #expect(form["csrf"] == "a+b")
        #expect(form["note"] == "coffee and cake")
        #expect(form["empty"] == "")
        #expect(form["missing"] == nil)
    }
}

/// The pages' own escaping, where rows are written without the template.
@Suite struct PagesTests {
    @Test func textIsEscapedAsTheTemplateWould() throws {
        #expect(Pages.escape("Bike <b>fund</b> & \"more\" 'too'") == "Bike &lt;b&gt;fund&lt;/b&gt; &amp; &quot;more&quot; &#39;too&#39;")
        #expect(Pages.escape("plain") == "plain")
        #expect(Pages.escape("café ☕️ <x>") == "café ☕️ &lt;x&gt;")
        let pages = try Pages()
        let goals: [JSONValue] = [["id": "g1", "name": "<script>x</script>", "progress": "0.5", "current_total": "1", "target_amount": "2",
                                   "remaining": "1", "currency": "EUR", "deadline": "2030-01-01"]]
        let page = String(buffer: pages.dashboard(["goals": .array(goals)], rows: DashboardRows.write(goals), csrf: "c"))
        #expect(page.contains("<h3><a href=\"/goals/g1\">&lt;script&gt;x&lt;/script&gt;</a></h3>"))
        #expect(!page.contains("<script>x"))
        #expect(page.contains("value=\"50\""))
    }

    /// The goal rows are written again only when the daemon's goals differ from the last
    /// answer's; the rest of the answer is read each time; an error is the daemon's.
    @Test func goalRowsAreWrittenAgainOnlyWhenTheGoalsChanged() throws {
        func answer(_ result: JSONValue) throws -> DaemonLink.Answer {
            let bytes = JSONSerializer.bytes(["id": 1, "jsonrpc": "2.0", "result": result])
            return DaemonLink.Answer(bytes: bytes, members: try #require(JSONParser.members(of: bytes)))
        }
        let goal: JSONValue = ["id": "g1", "name": "Bike & co", "progress": "0.25", "current_total": "1", "target_amount": "4",
                               "remaining": "3", "currency": "EUR", "deadline": "2030-01-01"]
        let rows = DashboardRows()
        func read(_ answer: DaemonLink.Answer) throws -> (result: JSONValue, rows: DashboardRows.Written) {
            let (rest, goals) = try DashboardRows.split(answer)
            return (rest, try rows.rows(goals, rest: rest))
        }
        let first = try read(try answer(["goals": [goal], "currency": "EUR", "stale_drafts": 2]))
        #expect(first.rows.count == 1 && first.rows.html.contains("Bike &amp; co") && first.rows.html.contains("value=\"25\""))
        #expect(first.result["stale_drafts"] == 2 && first.result.objectValue?.keys.contains("goals") == false)
        let same = try read(try answer(["goals": [goal], "currency": "EUR", "stale_drafts": 3]))
        #expect(same.rows.html == first.rows.html && same.result["stale_drafts"] == 3)
        var moved = goal.objectValue!
        moved["progress"] = "0.5"
        let after = try read(try answer(["goals": [.object(moved)], "currency": "EUR"]))
        #expect(after.rows.html.contains("value=\"50\""))
        let none = try read(try answer(["goals": [], "currency": "EUR"]))
        #expect(none.rows.count == 0 && none.rows.html.isEmpty)

        let refusal = JSONSerializer.bytes(["id": 1, "jsonrpc": "2.0", "error": ["code": -32000, "message": "no access", "data": ["kind": "read_only"]]])
        #expect(throws: DaemonLink.Failure.self) {
            try read(DaemonLink.Answer(bytes: refusal, members: JSONParser.members(of: refusal) ?? []))
        }
    }

    @Test func percentsAreCutFromTheFraction() {
        for (fraction, percent) in [("0.5350", 53), ("1.0000", 100), ("0", 0), ("0.0099", 0), ("0.999", 99), ("2.5", 100), ("0.5", 50),
                                    ("1", 100), ("-0.2", 0), ("5E-1", 50), ("", 0), ("0.07", 7)] {
            #expect(Pages.percent(.string(fraction)) == percent, "\(fraction)")
        }
        #expect(Pages.percent(nil) == 0)
    }

    /// Times in words: how long ago within a day, else day, month as a word and time in the
    /// zone; anything that is no timestamp as it is.
    @Test func timesReadAsAPersonSaysThem() throws {
        let now = try #require(try? SavingsCore.Timestamp.parse("2026-11-26T14:00:00.000Z", field: "t"))
        let berlin = try #require(TimeZone(identifier: "Europe/Berlin"))
        #expect(HumanTime.describe("2026-11-26T13:59:30.000Z", now: now, timeZone: berlin) == "just now")
        #expect(HumanTime.describe("2026-11-26T13:57:00.000Z", now: now, timeZone: berlin) == "3 minutes ago")
        #expect(HumanTime.describe("2026-11-26T12:59:00.000Z", now: now, timeZone: berlin) == "an hour ago")
        #expect(HumanTime.describe("2026-11-25T10:00:00.000Z", now: now, timeZone: berlin) == "25 Nov 2026, 11:00")
        #expect(HumanTime.describe("2026-12-01T10:00:00.000Z", now: now, timeZone: berlin) == "1 Dec 2026, 11:00", "the future is a date")
        #expect(HumanTime.describe("soon", now: now, timeZone: berlin) == "soon")
        #expect(HumanTime.describe("", now: now, timeZone: berlin) == "")
    }

    @Test func theWatchIsShownByItsFields() throws {
        let watch: JSONValue = ["chain": "bitcoin", "provider": "blockbook", "addresses": [], "min_confirmations": 1,
                                "last_sync_at": "2026-11-25T10:00:00.000Z", "last_error": "timed out", "pending": [], "reconciled": false]
        #expect(Pages.watchState(watch) == "bitcoin · blockbook · synced \(HumanTime.describe("2026-11-25T10:00:00.000Z")) · last error: timed out"
                + " · the chain's balance differs from the stored one")
        #expect(Pages.watchState(["chain": "ethereum", "provider": .null, "last_sync_at": .null, "last_error": .null, "reconciled": .null])
                == "ethereum · not synced yet")
        let page = try Pages().assets(["assets": [["name": "Cold", "kind": "crypto", "currency": "BTC", "balance": "1", "unallocated": "1",
                                                   "allocations": [], "watch": watch]]])
        #expect(page.contains("Watched on-chain: bitcoin · blockbook"))
    }
}
