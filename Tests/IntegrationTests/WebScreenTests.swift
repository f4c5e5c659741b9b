import Foundation
import SavingsRPC
import Testing

/// The goal, planning and month screens of `savingsctl web`, driven by HTTP as a browser
/// without JavaScript would, and checked by asking the daemon over its socket.
extension WebTests {
    /// A signed-in page session: the server, its cookie and a form's CSRF token.
    struct Session {
        let web: WebProcess
        let cookie: String

        init(_ daemon: DaemonProcess) throws {
            web = try WebProcess(daemon: daemon)
            cookie = try WebTests.signIn(web)
        }

        func get(_ path: String) throws -> Answer { try WebTests.send(port: web.port, path, headers: ["Cookie": cookie]) }

        /// Posts from a freshly loaded page, as a browser does after each answer: every page's
        /// forms carry an id of their own, and a form sent twice is written once.
        func post(_ path: String, _ body: String) throws -> Answer {
            let csrf = try WebTests.csrf(in: try get("/saved").body)
            return try WebTests.send(port: web.port, path, method: "POST", headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(web.port)"],
                                     body: "csrf=\(csrf)&" + body)
        }
    }

    static func plan(_ daemon: DaemonProcess, _ goal: String) throws -> JSONValue {
        try daemon.call("plan.get", ["goal": .string(goal)])
    }

    /// Own amount, protect, flex preview and apply through the planning screen's forms; the
    /// daemon holds what was posted, and refuses what it should with its message.
    @Test func plansAreChangedThroughThePlanningScreen() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        _ = try daemon.call("goal.create", ["name": "Trip <2027>", "currency": "EUR", "target_amount": "3000", "deadline": "2030-01-01"])
        let session = try Session(daemon)
        let screen = try session.get("/plans")
        #expect(screen.status == 200)
        #expect(screen.body.contains("Own amount for Trip &lt;2027&gt; (EUR)"))
        let bike = try #require(try Self.plan(daemon, "Bike")["id"]?.stringValue)
        let trip = try #require(try Self.plan(daemon, "Trip <2027>")["id"]?.stringValue)

        let set = try session.post("/plans/amount", "plan=\(bike)&amount=123.45")
        #expect(set.status == 303)
        #expect(set.headers["location"] == "/plans#plan-\(bike)")
        #expect(try Self.plan(daemon, "Bike")["custom_amount"]?.stringValue == "123.45")

        let refused = try session.post("/plans/amount", "plan=\(bike)&amount=12%2C5")
        #expect(refused.status == 422)
        #expect(refused.body.contains("is not a decimal number") && refused.body.contains("next: "), "\(refused.body)")
        #expect(try Self.plan(daemon, "Bike")["custom_amount"]?.stringValue == "123.45")

        #expect(try session.post("/plans/protect", "plan=\(bike)&protected=true").status == 303)
        #expect(try Self.plan(daemon, "Bike")["is_protected"]?.boolValue == true)

        // Flex: the preview writes nothing; applying halves the flexible plan, not the protected one.
        let before = try #require(try Self.plan(daemon, "Trip <2027>")["effective_amount"]?.stringValue.flatMap { Decimal(string: $0) })
        let preview = try session.get("/plans?factor=0.5")
        #expect(preview.body.contains("<input type=\"hidden\" name=\"factor\" value=\"0.5\">"))
        #expect(try Self.plan(daemon, "Trip <2027>")["custom_amount"] == .null)
        #expect(try session.post("/plans/flex", "factor=0.5").status == 303)
        let halved = try #require(try Self.plan(daemon, "Trip <2027>")["effective_amount"]?.stringValue.flatMap { Decimal(string: $0) })
        #expect(abs(halved - before / 2) <= Decimal(string: "0.005")!, "\(halved) is half of \(before), to the cent")
        #expect(try Self.plan(daemon, "Bike")["effective_amount"]?.stringValue == "123.45")
        #expect(try session.post("/plans/flex", "factor=2").status == 422)

        // An empty amount returns to the requirement; skip makes the plan 0.
        #expect(try session.post("/plans/amount", "plan=\(trip)&amount=").status == 303)
        #expect(try Self.plan(daemon, "Trip <2027>")["custom_amount"] == .null)
        #expect(try session.post("/plans/skip", "plan=\(trip)&skipped=true").status == 303)
        #expect(try Self.plan(daemon, "Trip <2027>")["planned_amount"]?.stringValue == "0.00")
    }

    /// Start, follow, complete and undo the month through the month screen; while it executes,
    /// the planning screen's changes are refused with the daemon's reason.
    @Test func theMonthIsExecutedThroughTheMonthScreen() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        let session = try Session(daemon)
        #expect(try session.get("/month").body.contains("action=\"/month/start\""))
        let bike = try #require(try Self.plan(daemon, "Bike")["id"]?.stringValue)

        let started = try session.post("/month/start", "")
        #expect(started.status == 303 && started.headers["location"] == "/month")
        #expect(try daemon.call("month.progress")["status"]?.stringValue == "executing")
        let locked = try session.post("/plans/amount", "plan=\(bike)&amount=5")
        #expect(locked.status == 422)
        #expect(locked.body.contains("[plan_locked]"), "\(locked.body)")
        // The next step is one a browser user can take, not a command (found by trying the view).
        #expect(locked.body.contains("on the Month screen, return it to draft"), "\(locked.body)")
        #expect(!locked.body.contains("savingsctl"), "\(locked.body)")

        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "40"])
        let progress = try session.get("/month")
        #expect(progress.body.contains("40.00 of "), "\(progress.body)")
        #expect(progress.body.contains("Bike · deposit 40.00"))
        // Times as a person reads them, never the wire's ISO form (found by trying the view).
        #expect(progress.body.contains("<li>just now · Bike · deposit 40.00"), "\(progress.body)")
        #expect(progress.body.contains("Started just now;"), "\(progress.body)")
        #expect(!progress.body.contains(".000Z"), "\(progress.body)")
        #expect(progress.body.contains("action=\"/month/undo-start\""))

        // Completing asks first (found by trying the view: it asked nothing).
        let asked = try session.post("/month/complete", "")
        #expect(asked.status == 200 && asked.body.contains("Yes, complete") && asked.body.contains("name=\"confirm\" value=\"yes\""), "\(asked.body)")
        #expect(try daemon.call("month.progress")["status"]?.stringValue == "executing", "nothing done before the answer")
        #expect(try session.post("/month/complete", "confirm=yes").status == 303)
        #expect(try daemon.call("month.progress")["status"]?.stringValue == "closed")
        let closed = try session.get("/month")
        #expect(closed.body.contains("this record no longer changes") && closed.body.contains("action=\"/month/undo-complete\""))
        let again = try session.post("/month/complete", "confirm=yes")
        #expect(again.status == 422)
        #expect(try session.post("/month/undo-complete", "").status == 303)
        #expect(try session.post("/month/undo-start", "").status == 303)
        #expect(try daemon.failure("month.progress").data?["kind"]?.stringValue == "not_found", "back to draft")
    }

    /// A goal created, changed and archived from the page, each checked over the socket; a
    /// refused value keeps what was entered and says the daemon's words.
    @Test func aGoalIsCreatedChangedAndArchivedFromThePage() throws {
        let daemon = try DaemonProcess()
        let session = try Session(daemon)
        #expect(try session.get("/").body.contains("<a href=\"/goals/new\">New goal</a>"))
        #expect(try session.get("/goals/new").body.contains("<h1>New goal</h1>"))
        let refused = try session.post("/goals/new", "name=Bike&target_amount=abc&currency=EUR&deadline=2027-06-30&notes=")
        #expect(refused.status == 422, "\(refused.status)")
        #expect(refused.body.contains("role=\"alert\"") && refused.body.contains("value=\"abc\""), "\(refused.body)")
        #expect(try daemon.call("goal.list")["goals"]?.arrayValue?.isEmpty == true)

        let created = try session.post("/goals/new", "name=Bike+%26+more&target_amount=1200&currency=EUR&deadline=2027-06-30&notes=Road+bike")
        #expect(created.status == 303, "\(created.body)")
        let goal = try daemon.call("goal.get", ["goal": "Bike & more"])
        let id = try #require(goal["id"]?.stringValue)
        #expect(created.headers["location"] == "/goals/\(id)")
        #expect(goal["target_amount"] == "1200.00" && goal["notes"] == "Road bike", "\(goal)")

        let form = try session.get("/goals/\(id)/edit")
        #expect(form.body.contains("value=\"Bike &amp; more\"") && form.body.contains("value=\"1200.00\""), "\(form.body)")
        let changed = try session.post("/goals/\(id)/edit", "name=Bike+%26+more&target_amount=1500&currency=EUR&deadline=2027-09-30&notes=")
        #expect(changed.status == 303 && changed.headers["location"] == "/goals/\(id)")
        let after = try daemon.call("goal.get", ["goal": .string(id)])
        #expect(after["target_amount"] == "1500.00" && after["deadline"] == "2027-09-30", "\(after)")

        let archived = try session.post("/goals/\(id)/archive", "")
        #expect(archived.status == 303 && archived.headers["location"] == "/")
        #expect(try daemon.call("goal.get", ["goal": .string(id)])["archived"] == true)
    }

    /// An asset created and changed from the page (a crypto holding with its address); a name
    /// that is taken is refused in the daemon's words, the form keeping what was entered.
    @Test func anAssetIsCreatedAndChangedFromThePage() throws {
        let daemon = try DaemonProcess()
        let session = try Session(daemon)
        #expect(try session.get("/assets").body.contains("<a href=\"/assets/new\">New asset</a>"))
        let created = try session.post("/assets/new", "name=Cold+BTC&kind=crypto&currency=BTC&address=bc1qexample&notes=")
        #expect(created.status == 303 && created.headers["location"] == "/assets", "\(created.body)")
        let asset = try daemon.call("asset.get", ["asset": "Cold BTC"])
        #expect(asset["kind"] == "crypto" && asset["currency"] == "BTC" && asset["address"] == "bc1qexample", "\(asset)")
        let id = try #require(asset["id"]?.stringValue)
        let taken = try session.post("/assets/new", "name=cold+btc&kind=fiat&currency=EUR&address=&notes=")
        #expect(taken.status == 422 && taken.body.contains("role=\"alert\"") && taken.body.contains("value=\"cold btc\""), "\(taken.body)")
        let form = try session.get("/assets/\(id)/edit")
        #expect(form.body.contains("<option value=\"crypto\" selected>"), "\(form.body)")
        let changed = try session.post("/assets/\(id)/edit", "name=Ledger+BTC&kind=crypto&currency=BTC&address=&notes=hardware")
        #expect(changed.status == 303)
        let after = try daemon.call("asset.get", ["asset": .string(id)])
        #expect(after["name"] == "Ledger BTC" && after["notes"] == "hardware" && after["address"] == .null, "\(after)")
        #expect(try session.get("/assets").body.contains("Change Ledger BTC"))
    }

    /// The rates with their source and age, and a rate set by hand from the page; a bad rate
    /// is refused in the daemon's words, the form keeping what was entered.
    @Test func ratesAreShownAndSetFromThePage() throws {
        let daemon = try DaemonProcess()
        let session = try Session(daemon)
        #expect(try session.get("/").body.contains("<a href=\"/rates\">Rates</a>"))
        let set = try session.post("/rates", "base=BTC&quote=EUR&rate=61250.5")
        #expect(set.status == 303 && set.headers["location"] == "/rates", "\(set.body)")
        let listed = try daemon.call("rates.list")["rates"]?.arrayValue ?? []
        #expect(listed.contains { $0["base"] == "BTC" && $0["quote"] == "EUR" && $0["rate"] == "61250.5" }, "\(listed)")
        let page = try session.get("/rates")
        #expect(page.body.contains("1 BTC in EUR</th><td class=\"num\">61250.5</td><td>manual</td><td>just now</td>"), "\(page.body)")
        let refused = try session.post("/rates", "base=BTC&quote=EUR&rate=-1")
        #expect(refused.status == 422 && refused.body.contains("role=\"alert\"") && refused.body.contains("value=\"-1\""), "\(refused.body)")
    }

    /// An asset's transactions from the page: recorded, listed newest first a page at a time
    /// and within dates, and deleted; each checked over the socket.
    @Test func transactionsAreListedRecordedAndDeletedFromThePage() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let id = try #require(try daemon.call("asset.get", ["asset": "Bank"])["id"]?.stringValue)
        for day in 1...60 {
            _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "1", "date": .string(String(format: "2026-0%d-%02dT12:00:00Z", day <= 28 ? 2 : 3, (day - 1) % 28 + 1))])
        }
        let session = try Session(daemon)
        #expect(try session.get("/assets").body.contains("href=\"/assets/\(id)/transactions\""))
        let first = try session.get("/assets/\(id)/transactions")
        #expect(first.status == 200)
        #expect(first.body.components(separatedBy: "<th scope=\"row\">").count - 1 == 50, "a page of fifty")
        let older = try #require(first.body.firstMatch(of: /href="(\/assets\/[0-9a-f-]+\/transactions\?cursor=[^"]+)"/)).1
        let second = try session.get(String(older).replacingOccurrences(of: "&amp;", with: "&"))
        #expect(second.body.components(separatedBy: "<th scope=\"row\">").count - 1 == 10, "\(second.body)")
        let ranged = try session.get("/assets/\(id)/transactions?from=2026-02-01&to=2026-02-05")
        #expect(ranged.body.components(separatedBy: "<th scope=\"row\">").count - 1 == 5)

        let added = try session.post("/assets/\(id)/transactions", "amount=-25.5&date=2026-03-20&note=Groceries")
        #expect(added.status == 303)
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "34.50")
        let refused = try session.post("/assets/\(id)/transactions", "amount=abc&date=&note=x")
        #expect(refused.status == 422 && refused.body.contains("value=\"abc\""), "\(refused.body)")
        let list = try session.get("/assets/\(id)/transactions")
        let tx = try #require(list.body.firstMatch(of: /name="transaction" value="([0-9a-f-]+)"/)).1
        let deleted = try session.post("/assets/\(id)/transactions/delete", "transaction=\(tx)")
        #expect(deleted.status == 303)
        #expect(try daemon.call("tx.list", ["asset": "Bank"])["transactions"]?.arrayValue?.count == 60)

        // Search, kept in the link to older rows.
        let found = try session.get("/assets/\(id)/transactions?search=groceries")
        #expect(found.body.components(separatedBy: "<th scope=\"row\">").count - 1 == 1 && found.body.contains("value=\"groceries\""), "\(found.body)")
        let none = try session.get("/assets/\(id)/transactions?search=%3Cb%3E")
        #expect(none.body.contains("No transactions here containing “&lt;b&gt;”"), "\(none.body)")

        // Changed from its own page: only what was changed is sent, the time of day stays.
        let groceries = try #require(try daemon.call("tx.list", ["asset": "Bank", "search": "groceries"])["transactions"]?.arrayValue?.first)
        let gid = try #require(groceries["id"]?.stringValue)
        let form = try session.get("/assets/\(id)/transactions/\(gid)")
        #expect(form.status == 200 && form.body.contains("value=\"-25.50\"") && form.body.contains("value=\"Groceries\""), "\(form.body)")
        let day = try #require(form.body.firstMatch(of: /name="was_date" value="([0-9-]+)"/)).1
        let stamp = try #require(groceries["date"]?.stringValue)
        let fields = "was_amount=-25.50&was_date=\(day)&was_note=Groceries&stamp=\(stamp)"
        let unchanged = try session.post("/assets/\(id)/transactions/\(gid)", fields + "&amount=-25.50&date=\(day)&note=Groceries")
        #expect(unchanged.status == 303)
        let moved = try session.post("/assets/\(id)/transactions/\(gid)", fields + "&amount=-30&date=2026-03-18&note=Groceries")
        #expect(moved.status == 303 && moved.headers["location"] == "/assets/\(id)/transactions")
        let after = try daemon.call("tx.get", ["transaction": .string(gid)])
        #expect(after["amount"] == "-30.00" && after["note"] == "Groceries", "\(after)")
        #expect(after["date"]?.stringValue.map { Self.sameTimeOfDay($0, stamp) } == true, "\(after)")
        let refusedEdit = try session.post("/assets/\(id)/transactions/\(gid)", fields + "&amount=lots&date=2026-03-18&note=Groceries")
        #expect(refusedEdit.status == 422 && refusedEdit.body.contains("value=\"lots\"") && refusedEdit.body.contains("role=\"alert\""), "\(refusedEdit.body)")
        #expect(try session.get("/assets/\(id)/transactions/00000000-0000-4000-8000-000000000000").status == 404)
    }

    /// Whether two timestamps show the same time of day on this machine's clock.
    static func sameTimeOfDay(_ a: String, _ b: String) -> Bool {
        let formatter = ISO8601DateFormatter()
        formatter.formatOptions = [.withInternetDateTime, .withFractionalSeconds]
        let parse = { (text: String) in formatter.date(from: text) }
        guard let a = parse(a), let b = parse(b) else { return false }
        let calendar = Calendar.current
        return calendar.dateComponents([.hour, .minute, .second], from: a) == calendar.dateComponents([.hour, .minute, .second], from: b)
    }

    /// An asset's shares among goals from the page: what is free shown, a share set and
    /// removed, an over-large one refused in the daemon's words; each checked over the socket.
    @Test func allocationsAreSetFromThePage() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        _ = try daemon.call("goal.create", ["name": "Trip", "currency": "EUR", "target_amount": "500", "deadline": "2027-06-30"])
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "100"])
        let id = try #require(try daemon.call("asset.get", ["asset": "Bank"])["id"]?.stringValue)
        let session = try Session(daemon)
        // The deposit went to Bike, the account's only goal then.
        let page = try session.get("/assets/\(id)/allocations")
        #expect(page.status == 200 && page.body.contains("300.00 EUR for Bike") && page.body.contains("<option data-share=\"0\">Trip</option>"), "\(page.body)")
        let tooMuch = try session.post("/assets/\(id)/allocations", "goal=Trip&amount=60")
        #expect(tooMuch.status == 422 && tooMuch.body.contains("role=\"alert\""), "nothing is free yet: \(tooMuch.body)")
        #expect(try session.post("/assets/\(id)/allocations", "goal=Bike&amount=200").status == 303)
        #expect(try session.get("/assets/\(id)/allocations").body.contains("free 100.00 EUR"))
        let set = try session.post("/assets/\(id)/allocations", "goal=Trip&amount=60")
        #expect(set.status == 303)
        let after = try session.get("/assets/\(id)/allocations")
        #expect(after.body.contains("60.00 EUR for Trip") && after.body.contains("free 40.00 EUR"), "\(after.body)")
        let removed = try session.post("/assets/\(id)/allocations", "goal=Trip&amount=0")
        #expect(removed.status == 303)
        #expect(try daemon.call("allocation.list", ["asset": "Bank"])["allocations"]?.arrayValue?.count == 1)
        let refused = try session.post("/assets/\(id)/allocations", "goal=Trip&amount=abc")
        #expect(refused.status == 422 && refused.body.contains("role=\"alert\"") && refused.body.contains("value=\"abc\""), "\(refused.body)")
    }

    /// Found by trying the view: with the daemon down, the page showed NIO's
    /// `connect(descriptor:addr:size:)… errno: 2`. It says what is wrong in words.
    @Test func aDaemonDownIsSaidInWords() throws {
        let daemon = try DaemonProcess()
        let session = try Session(daemon)
        daemon.stop()
        let page = try session.get("/")
        #expect(page.body.contains("savingsd cannot be reached: its socket is not there (the daemon is not running)"), "\(page.body)")
        #expect(!page.body.contains("errno") && !page.body.contains("descriptor"), "\(page.body)")
    }

    /// The goal screen: the chart, the plan and the allocation; a goal that does not exist is
    /// a 404 with the daemon's message.
    @Test func theGoalScreenShowsItsMonthsAndAllocations() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank & co", goal: "Bike <b>", target: "800", amount: "200")
        let session = try Session(daemon)
        let id = try #require(try daemon.call("goal.get", ["goal": "Bike <b>"])["id"]?.stringValue)
        #expect(try session.get("/").body.contains("<a href=\"/goals/\(id)\">Bike &lt;b&gt;</a>"))
        let page = try session.get("/goals/\(id)")
        #expect(page.status == 200)
        #expect(page.body.contains("<h1>Bike &lt;b&gt;</h1>"))
        #expect(page.body.contains("<svg id=\"goal-months\"") && page.body.components(separatedBy: "<g class=\"month\"").count == 13)
        #expect(page.body.contains("Bank &amp; co: 200.00 EUR = 200.00 EUR"))
        #expect(page.body.contains("href=\"/plans#plan-"))
        // While the month runs its plans are fixed: the goal leads to the Month screen, not to a
        // planning form that would refuse (found by trying the view).
        _ = try daemon.call("month.start")
        let running = try session.get("/goals/\(id)")
        #expect(!running.body.contains("href=\"/plans#plan-") && running.body.contains("fixed while the month runs"), "\(running.body)")
        // An account without an on-chain watch is not called watched (found by trying the view).
        let assets = try session.get("/assets")
        #expect(assets.status == 200)
        #expect(assets.body.contains("Bank &amp; co"), "\(assets.body)")
        #expect(!assets.body.contains("Watched on-chain"), "\(assets.body)")
        // A page nothing serves and a form over the size limit get a page and the security
        // headers (they were empty answers without them).
        let nowhere = try session.get("/no/such/page")
        #expect(nowhere.status == 404)
        #expect(nowhere.headers["content-security-policy"]?.contains("default-src 'none'") == true, "\(nowhere.headers)")
        #expect(nowhere.body.contains("There is no page at this address"), "\(nowhere.body)")
        let large = try session.post("/saved", "note=" + String(repeating: "x", count: 70 * 1024))
        #expect(large.status == 413)
        #expect(large.headers["x-frame-options"] == "DENY", "\(large.headers)")
        #expect(large.body.contains("larger than the 64 KiB"), "\(large.body)")
        let missing = try session.get("/goals/00000000-0000-4000-8000-000000000000")
        #expect(missing.status == 404)
        #expect(missing.body.contains("no goal matches"), "\(missing.body)")
    }
}

/// A crypto asset's chain watched, synced and stopped from its page; an asset deleted after a
/// question; each checked over the socket.
extension WebTests {
    @Test func aWatchIsSetUpSyncedAndStoppedFromThePage() throws {
        let tip = 900_000
        let stub = try BlockbookStub(height: tip)
        stub.set(OnchainTests.xpub, .init(transactions: OnchainTests.wallet(tip: tip), balance: "269990019"))
        let daemon = try OnchainTests.daemon(["bitcoin": ("blockbook", stub.url)])
        _ = try daemon.call("asset.create", ["name": "Cold", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        let cold = try #require(try daemon.call("asset.get", ["asset": "Cold"])["id"]?.stringValue)
        let bank = try #require(try daemon.call("asset.get", ["asset": "Bank"])["id"]?.stringValue)
        let session = try Session(daemon)
        let assets = try session.get("/assets").body
        #expect(assets.contains("href=\"/assets/\(cold)/chain\"") && !assets.contains("href=\"/assets/\(bank)/chain\""), "\(assets)")
        #expect(try session.get("/assets/\(bank)/chain").body.contains("there is no chain to watch"))

        // A typo in the key: refused before any request, what was entered kept.
        let typo = String(OnchainTests.xpub.dropLast()) + "9"
        let refused = try session.post("/assets/\(cold)/chain", "chain=bitcoin&xpub=\(typo)&addresses=&token=&min_confirmations=1")
        #expect(refused.status == 422 && refused.body.contains("invalid_watch") && refused.body.contains("value=\"\(typo)\""), "\(refused.body)")
        #expect(stub.http.requests.isEmpty)
        let unconfigured = try session.post("/assets/\(cold)/chain", "chain=litecoin&xpub=&addresses=ltc1qexample&min_confirmations=1")
        #expect(unconfigured.status == 422 && unconfigured.body.contains("role=\"alert\""), "\(unconfigured.body)")

        let watched = try session.post("/assets/\(cold)/chain", "chain=bitcoin&xpub=\(OnchainTests.xpub)&addresses=&token=&min_confirmations=1")
        #expect(watched.status == 303 && watched.headers["location"] == "/assets/\(cold)/chain")
        #expect(try daemon.call("asset.get", ["asset": "Cold"])["watch"]?["chain"] == "bitcoin")
        let synced = try session.post("/assets/\(cold)/chain/sync", "")
        #expect(synced.status == 303 && synced.headers["location"]?.contains("/chain?added=") == true, "\(synced.headers)")
        let page = try session.get(synced.headers["location"] ?? "")
        #expect(page.body.contains("Synced: ") && page.body.contains("Stop watching") && page.body.contains("xpub661M"), "\(page.body)")
        #expect(try daemon.call("asset.get", ["asset": "Cold"])["balance"] == "2.69990019")
        // A watched asset takes no transaction by hand: the page says where to go instead.
        let byHand = try session.post("/assets/\(cold)/transactions", "amount=1&date=&note=x")
        #expect(byHand.status == 422 && byHand.body.contains("On-chain page"), "\(byHand.body)")

        #expect(try session.post("/assets/\(cold)/chain/unwatch", "").status == 303)
        let asset = try daemon.call("asset.get", ["asset": "Cold"])
        #expect(asset["watch"] == .null && asset["balance"] == "2.69990019", "stopping keeps what was imported")
    }

    @Test func anAssetIsDeletedAfterAQuestion() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        let id = try #require(try daemon.call("asset.get", ["asset": "Bank"])["id"]?.stringValue)
        let session = try Session(daemon)
        #expect(try session.get("/assets/\(id)/edit").body.contains("action=\"/assets/\(id)/delete\""))
        let question = try session.post("/assets/\(id)/delete", "")
        #expect(question.status == 200 && question.body.contains("Delete Bank?") && question.body.contains("name=\"confirm\" value=\"yes\""), "\(question.body)")
        #expect(try daemon.call("asset.list")["assets"]?.arrayValue?.count == 1, "a question writes nothing")
        let deleted = try session.post("/assets/\(id)/delete", "confirm=yes")
        #expect(deleted.status == 303 && deleted.headers["location"] == "/assets")
        #expect(try daemon.call("asset.list")["assets"]?.arrayValue?.isEmpty == true)
        #expect(try daemon.call("goal.get", ["goal": "Bike"])["current_total"] == "0.00")
    }
}

/// The dashboard's pictures: this month's plan against what has come in, and each goal's
/// closed months, saved against planned; drawn from the daemon's own figures, as SVG.
extension WebTests {
    @Test func theDashboardDrawsTheMonthAndEachGoalsMonths() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("data.demo")
        let dashboard = try daemon.call("dashboard.get")
        let month = try #require(dashboard["month"])
        let session = try Session(daemon)
        let page = try session.get("/").body
        let planned = try #require(month["planned"]?.stringValue), contributed = try #require(month["contributed"]?.stringValue)
        let chart = try #require(page.firstMatch(of: /<svg class="chart"[^>]*>\s*<title id="month-chart-t">([^<]*)<\/title>/)).1
        #expect(chart.contains("\(contributed) EUR of \(planned) EUR planned has come in"), "\(chart)")
        // The bars' lengths are those of the amounts, on one scale.
        let widths = page.matches(of: /<rect x="96" y="\d+" width="([0-9.]+)"/).compactMap { Decimal(string: String($0.1)) }
        let plannedAmount = try #require(Decimal(string: planned)), contributedAmount = try #require(Decimal(string: contributed))
        #expect(widths.count == 2 && widths[0] == 220 && abs(widths[1] - contributedAmount / plannedAmount * 220) <= Decimal(string: "0.05")!,
                "\(widths)")

        let history = try daemon.call("month.history")["months"]?.arrayValue ?? []
        let emergency = try #require(try daemon.call("goal.get", ["goal": "Emergency fund"])["id"]?.stringValue)
        let closed = history.compactMap { month -> String? in
            guard let line = month["goals"]?.arrayValue?.first(where: { $0["goal_id"]?.stringValue == emergency }) else { return nil }
            return "\(line["contributed"]?.stringValue ?? "") of \(line["planned"]?.stringValue ?? "")"
        }
        // The goals' closed months are one image of its own, loaded as it comes into view.
        let link = try #require(page.firstMatch(of: /<img src="(\/months\.svg\?[^"]+)" alt="Each goal's last closed months: what came in against what was planned" loading="lazy">/)).1
        let image = try session.get(String(link).replacingOccurrences(of: "&amp;", with: "&"))
        #expect(image.status == 200 && image.headers["content-type"] == "image/svg+xml", "\(image.status) \(image.body)")
        let spark = try #require(image.body.firstMatch(of: /<title>Emergency fund, saved per month against the plan \(EUR\): ([^<]*)<\/title>/)).1
        #expect(closed.count >= 5 && closed.allSatisfy { spark.contains($0) }, "\(spark) vs \(closed)")
        let goals = dashboard["goals"]?.arrayValue?.count ?? 0
        #expect(image.body.components(separatedBy: "<g><title>").count - 1 == goals, "a row a goal")
        #expect(try session.get("/months.svg?month=garbage").status == 404)
        // Found in review: the link's `&` was escaped twice, so the status never arrived.
        #expect(link.contains("&amp;status=") && !link.contains("&amp;amp;"), "\(link)")
        #expect(try session.get("/months.svg?month=2026-11&status=%3Cb%3E").status == 404)
    }
}

/// A German browser: amounts and dates as it writes them, amounts typed its way recorded
/// exactly, and an edit left alone changing nothing (a BTC amount of 1.234 is not 1234).
extension WebTests {
    @Test func aGermanBrowserSeesAndTypesItsOwnNumbers() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "Bank", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("asset.create", ["name": "Wallet", "currency": "BTC", "kind": "crypto"])
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "1234.56", "date": "2026-03-04T10:00:00Z"])
        let btc = try daemon.call("tx.add", ["asset": "Wallet", "amount": "1.234", "date": "2026-03-04T10:00:00Z"])
        let bank = try #require(try daemon.call("asset.get", ["asset": "Bank"])["id"]?.stringValue)
        let wallet = try #require(try daemon.call("asset.get", ["asset": "Wallet"])["id"]?.stringValue)
        let session = try Session(daemon)
        let german = ["Cookie": session.cookie, "Accept-Language": "de-DE,de;q=0.9,en;q=0.5"]
        func get(_ path: String) throws -> Answer { try WebTests.send(port: session.web.port, path, headers: german) }
        func post(_ path: String, _ body: String) throws -> Answer {
            let csrf = try WebTests.csrf(in: try get("/saved").body)
            return try WebTests.send(port: session.web.port, path, method: "POST",
                                     headers: german.merging(["Origin": "http://127.0.0.1:\(session.web.port)"]) { $1 }, body: "csrf=\(csrf)&" + body)
        }
        let list = try get("/assets/\(bank)/transactions").body
        #expect(list.contains(">1.234,56<") && list.contains("Mär 2026") || list.contains("März 2026"), "\(list)")
        // Typed the German way: recorded exactly.
        #expect(try post("/assets/\(bank)/transactions", "amount=-12%2C50&date=2026-03-05&note=Brot").status == 303)
        #expect(try daemon.call("asset.get", ["asset": "Bank"])["balance"] == "1222.06")
        #expect(try post("/assets/\(bank)/transactions", "amount=1.2.3&date=&note=x").status == 422, "broken groups refused, not guessed")

        // The wallet's 1.234 BTC shown as 1,23400000 and sent back untouched: nothing changes.
        let id = try #require(btc["id"]?.stringValue)
        let form = try get("/assets/\(wallet)/transactions/\(id)").body
        let shown = try #require(form.firstMatch(of: /name="was_amount" value="([^"]+)"/)).1
        #expect(shown.contains(","), "\(shown)")
        let day = try #require(form.firstMatch(of: /name="was_date" value="([0-9-]+)"/)).1
        let fields = "was_amount=\(shown)&was_date=\(day)&was_note=&stamp=2026-03-04T10:00:00.000Z&date=\(day)&note="
        #expect(try post("/assets/\(wallet)/transactions/\(id)", fields + "&amount=\(shown)").status == 303)
        #expect(try daemon.call("tx.get", ["transaction": .string(id)])["amount"]?.stringValue.flatMap { Decimal(string: $0) } == Decimal(string: "1.234"))
        // Changed the German way: 2,5 is 2.5.
        #expect(try post("/assets/\(wallet)/transactions/\(id)", fields + "&amount=2%2C5").status == 303)
        #expect(try daemon.call("tx.get", ["transaction": .string(id)])["amount"]?.stringValue.flatMap { Decimal(string: $0) } == Decimal(string: "2.5"))

        // Without the header the page is as the daemon writes.
        #expect(try session.get("/assets/\(bank)/transactions").body.contains(">1234.56<"))
    }
}

/// The security model on every form the pages hold: found by reading each screen, each is
/// refused (403) from another origin, without the page's token and without the cookie, and
/// nothing changes.
extension WebTests {
    @Test func everyFormOfEveryScreenIsGuarded() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("data.demo")
        let session = try Session(daemon)
        let asset = try #require(try daemon.call("asset.list")["assets"]?.arrayValue?.first { $0["kind"]?.stringValue == "crypto" })
        let assetID = try #require(asset["id"]?.stringValue)
        let goalID = try #require(try daemon.call("goal.list")["goals"]?.arrayValue?.first?["id"]?.stringValue)
        let tx = try #require(try daemon.call("tx.list", ["asset": .string(assetID), "limit": 1])["transactions"]?.arrayValue?.first?["id"]?.stringValue)
        let screens = ["/", "/saved", "/assets", "/assets/new", "/goals/new", "/rates", "/plans", "/month", "/import",
                       "/goals/\(goalID)", "/goals/\(goalID)/edit", "/assets/\(assetID)/edit", "/assets/\(assetID)/transactions",
                       "/assets/\(assetID)/transactions/\(tx)", "/assets/\(assetID)/allocations", "/assets/\(assetID)/chain",
                       "/assets/\(assetID)/link"]
        var actions = Set<String>()
        for screen in screens {
            let page = try session.get(screen)
            #expect(page.status == 200, "\(screen): \(page.status)")
            for match in page.body.matches(of: /<form method="post" action="([^"]+)"/) { actions.insert(String(match.1)) }
        }
        // Forms shown only in another state (a draft month's plans, a watched asset) or reached
        // from a post (a question, the import's second steps): named here.
        actions.formUnion(["/assets/\(assetID)/delete", "/import/check", "/import/confirm", "/saved/undo",
                           "/plans/amount", "/plans/protect", "/plans/skip", "/plans/flex", "/plans/stale",
                           "/month/start", "/month/undo-start", "/month/undo-complete",
                           "/assets/\(assetID)/chain/sync", "/assets/\(assetID)/chain/unwatch",
                           "/assets/\(assetID)/link/sync", "/assets/\(assetID)/link/unlink"])
        #expect(actions.count == 31, "\(actions.sorted())")
        let before = try Self.fingerprint(daemon)
        let origin = "http://127.0.0.1:\(session.web.port)"
        let csrf = try WebTests.csrf(in: try session.get("/saved").body)
        for action in actions.sorted() {
            let elsewhere = try WebTests.send(port: session.web.port, action, method: "POST",
                                              headers: ["Cookie": session.cookie, "Origin": "http://evil.example"], body: "csrf=\(csrf)&confirm=yes")
            let tokenless = try WebTests.send(port: session.web.port, action, method: "POST",
                                              headers: ["Cookie": session.cookie, "Origin": origin], body: "confirm=yes&amount=1")
            let cookieless = try WebTests.send(port: session.web.port, action, method: "POST", headers: ["Origin": origin],
                                               body: "csrf=\(csrf)&confirm=yes")
            #expect(elsewhere.status == 403 && tokenless.status == 403 && cookieless.status == 403, "\(action): \(elsewhere.status) \(tokenless.status) \(cookieless.status)")
            #expect(elsewhere.headers["content-security-policy"] != nil)
        }
        #expect(try Self.fingerprint(daemon) == before, "nothing was written")
    }

    /// What the daemon holds, as far as a refused form could have changed it.
    static func fingerprint(_ daemon: DaemonProcess) throws -> [String] {
        try ["goal.list", "asset.list", "rates.list", "plan.list", "month.history"].map { JSONSerializer.serialize(try daemon.call($0)) }
            + [JSONSerializer.serialize(try daemon.call("tx.list", ["limit": 1000]))]
    }
}

/// The dashboard's daemon connections are kept between pages: one the daemon closed while idle,
/// or lost when it restarted, is replaced without the page noticing; while it is down the page
/// says so.
extension WebTests {
    @Test func keptConnectionsOutliveTheDaemonsIdleTimeoutAndARestart() throws {
        let directory = try makeScratchDirectory()
        var daemon = try DaemonProcess(directory: directory, environment: ["SAVINGSD_IDLE_TIMEOUT": "1"])
        _ = try daemon.call("goal.create", ["name": "Bike", "currency": "EUR", "target_amount": "800", "deadline": "2030-01-01"])
        let session = try Session(daemon)
        for _ in 0..<3 { #expect(try session.get("/").body.contains(">Bike</a>")) }
        Thread.sleep(forTimeInterval: 2.5)
        // The daemon has closed the idle connections meanwhile.
        for _ in 0..<3 { #expect(try session.get("/").status == 200) }
        _ = try daemon.call("goal.create", ["name": "Trip", "currency": "EUR", "target_amount": "900", "deadline": "2030-01-01"])
        #expect(try session.get("/").body.contains(">Trip</a>"), "a kept connection answers what is, not what was")
        _ = daemon.stop()
        let down = try session.get("/")
        #expect(down.status == 503 && down.body.contains("cannot be reached"), "\(down.status)")
        daemon = try DaemonProcess(directory: directory, environment: ["SAVINGSD_IDLE_TIMEOUT": "1"])
        #expect(try session.get("/").body.contains(">Trip</a>"))
        _ = daemon.stop()
    }
}
