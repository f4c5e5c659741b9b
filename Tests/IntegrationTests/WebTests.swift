import Foundation
import Synchronization
import SavingsRPC
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `savingsctl web` end to end: the real daemon, the real savingsctl serving on loopback, and
/// HTTP requests as a browser (or another site's page) would send them.
@Suite(.serialized) struct WebTests {
    /// A running `savingsctl web` for `daemon`, and the URL it printed.
    final class WebProcess {
        let process = Process()
        let url: String
        let port: Int
        let errorPath: String

        /// `savingsctl web` for `daemon`, as this user or, with `groups`, as nobody in those groups.
        init(daemon: DaemonProcess, asNobodyIn groups: [Int]? = nil) throws {
            let output = Pipe()
            errorPath = daemon.directory + "/web-\(UUID().uuidString.prefix(6)).err"
            _ = FileManager.default.createFile(atPath: errorPath, contents: nil)
            if let groups {
                process.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
                process.arguments = ["--reuid=65534", "--regid=65534", "--groups=\(groups.map(String.init).joined(separator: ","))", "--",
                                     Binaries.savingsctl, "--socket", daemon.socketPath, "web"]
            } else {
                process.executableURL = URL(fileURLWithPath: Binaries.savingsctl)
                process.arguments = ["--socket", daemon.socketPath, "web"]
            }
            process.environment = DaemonProcess.baseEnvironment(directory: daemon.directory)
            process.standardOutput = output
            process.standardError = try FileHandle(forWritingTo: URL(fileURLWithPath: errorPath))
            try process.run()
            // The one line it prints when it listens.
            var line: [UInt8] = []
            while true {
                let byte = output.fileHandleForReading.readData(ofLength: 1)
                guard let first = byte.first else { break }
                if first == 0x0A { break }
                line.append(first)
            }
            url = String(decoding: line, as: UTF8.self)
            guard let match = url.firstMatch(of: /^http:\/\/127\.0\.0\.1:(\d+)\/\?token=[0-9a-f]{32}$/), let port = Int(match.1) else {
                throw HarnessError("savingsctl web printed '\(url)'; stderr: \((try? String(contentsOfFile: errorPath, encoding: .utf8)) ?? "")")
            }
            self.port = port
        }

        deinit {
            if process.isRunning {
                kill(process.processIdentifier, SIGKILL)
                process.waitUntilExit()
            }
        }

        var pathAndQuery: String { String(url.dropFirst("http://127.0.0.1:\(port)".count)) }
    }

    /// An HTTP/1.1 answer: status, headers (lowercased names) and body.
    struct Answer {
        var status: Int
        var headers: [String: String]
        var body: String
        /// The body's bytes as they came.
        var bytes: [UInt8] = []
    }

    /// Sends one request on a new connection and reads until `until` shows in what arrived or
    /// the server closes (at most `seconds`).
    static func send(port: Int, _ path: String, method: String = "GET", host: String? = nil, headers: [String: String] = [:],
                     body: String = "", until: String? = nil, seconds: Double = 5) throws -> Answer {
        try send(port: port, path, method: method, host: host, headers: headers, bytes: Array(body.utf8),
                 contentType: "application/x-www-form-urlencoded", until: until, seconds: seconds)
    }

    static func send(port: Int, _ path: String, method: String = "GET", host: String? = nil, headers: [String: String] = [:],
                     bytes body: [UInt8], contentType: String, until: String? = nil, seconds: Double = 5) throws -> Answer {
        let fd = try connectOnLoopback(port: port)
        defer { close(fd) }
        var request = "\(method) \(path) HTTP/1.1\r\nHost: \(host ?? "127.0.0.1:\(port)")\r\nConnection: close\r\n"
        for (name, value) in headers { request += "\(name): \(value)\r\n" }
        if method == "POST" { request += "Content-Type: \(contentType)\r\nContent-Length: \(body.count)\r\n" }
        let outgoing = Array((request + "\r\n").utf8) + body
        // A server that answers before taking the whole body (a refusal) may never read the
        // rest: writing gives up after two seconds, and the answer is read.
        var timeout = timeval(tv_sec: 2, tv_usec: 0)
        setsockopt(fd, SOL_SOCKET, SO_SNDTIMEO, &timeout, socklen_t(MemoryLayout<timeval>.size))
        var sent = 0
        while sent < outgoing.count {
            let count = outgoing[sent...].withUnsafeBytes { write(fd, $0.baseAddress, $0.count) }
            // The server may answer (413) and close before taking everything.
            if count <= 0 { break }
            sent += count
        }
        var received: [UInt8] = []
        let deadline = Date().addingTimeInterval(seconds)
        var buffer = [UInt8](repeating: 0, count: 65_536)
        while Date() < deadline {
            var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
            guard poll(&poller, 1, 100) > 0 else { continue }
            let count = read(fd, &buffer, buffer.count)
            if count <= 0 { break }
            received += buffer[0..<count]
            if let until, String(decoding: received, as: UTF8.self).contains(until) { break }
        }
        guard let split = received.indices.first(where: { received[$0...].starts(with: [13, 10, 13, 10]) }) else {
            throw HarnessError("no HTTP answer: \(String(decoding: received.prefix(200), as: UTF8.self))")
        }
        let head = String(decoding: received[..<split], as: UTF8.self)
        let lines = head.split(separator: "\r\n")
        guard let status = lines.first.flatMap({ Int($0.split(separator: " ")[1]) }) else { throw HarnessError("no status line") }
        var fields: [String: String] = [:]
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":") else { continue }
            fields[line[..<colon].lowercased()] = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
        }
        let bytes = Array(received[(split + 4)...])
        return Answer(status: status, headers: fields, body: String(decoding: bytes, as: UTF8.self), bytes: bytes)
    }

    /// The session cookie, from the first URL.
    static func signIn(_ web: WebProcess) throws -> String {
        let answer = try send(port: web.port, web.pathAndQuery)
        #expect(answer.status == 303)
        let setCookie = try #require(answer.headers["set-cookie"])
        #expect(setCookie.contains("HttpOnly") && setCookie.contains("SameSite=Strict"))
        return String(setCookie.split(separator: ";")[0])
    }

    @Test func thePageIsGuardedLikeALocalNotebook() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike <b>fund</b>", target: "800", amount: "200")
        let web = try WebProcess(daemon: daemon)
        // No token, a wrong token, another site's name for 127.0.0.1.
        #expect(try Self.send(port: web.port, "/").status == 403)
        #expect(try Self.send(port: web.port, "/?token=00000000000000000000000000000000").status == 403)
        #expect(try Self.send(port: web.port, web.pathAndQuery, host: "rebound.example:\(web.port)").status == 403)

        let cookie = try Self.signIn(web)
        let page = try Self.send(port: web.port, "/", headers: ["Cookie": cookie])
        #expect(page.status == 200)
        // The goal's name is text, not markup.
        #expect(page.body.contains("Bike &lt;b&gt;fund&lt;/b&gt;"))
        #expect(page.body.contains("25%"))
        #expect(page.headers["content-security-policy"]?.contains("default-src 'none'") == true)
        #expect(try Self.send(port: web.port, "/", host: "rebound.example:\(web.port)", headers: ["Cookie": cookie]).status == 403)

        // A POST from another origin, or without the form's token, changes nothing.
        let sameOrigin = "http://127.0.0.1:\(web.port)"
        #expect(try Self.send(port: web.port, "/", method: "POST", headers: ["Cookie": cookie, "Origin": "http://evil.example"], body: "csrf=x").status == 403)
        #expect(try Self.send(port: web.port, "/", method: "POST", headers: ["Cookie": cookie, "Origin": sameOrigin], body: "amount=1").status == 403)
        #expect(try Self.send(port: web.port, "/", method: "POST", headers: ["Origin": sameOrigin], body: "csrf=x").status == 403)

        // Another `savingsctl web` does not take this one's cookie.
        let other = try WebProcess(daemon: daemon)
        #expect(try Self.send(port: other.port, "/", headers: ["Cookie": cookie]).status == 403)

        // SIGTERM stops it cleanly.
        kill(web.process.processIdentifier, SIGTERM)
        web.process.waitUntilExit()
        #expect(web.process.terminationStatus == 0)
    }

    @Test func aChangeMadeOverTheSocketReachesAnOpenPage() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        let web = try WebProcess(daemon: daemon)
        let cookie = try Self.signIn(web)
        let changed = DispatchSemaphore(value: 0)
        let stream = Box<Answer>()
        let port = web.port
        Thread {
            stream.value = try? Self.send(port: port, "/events", headers: ["Cookie": cookie], until: "event: change", seconds: 10)
            changed.signal()
        }.start()
        // The subscription is open once the stream says `live`; then a write through the socket.
        let subscribing = Date().addingTimeInterval(5)
        while Self.sockets(of: web.process.processIdentifier) == 0, Date() < subscribing { usleep(20_000) }
        Thread.sleep(forTimeInterval: 0.2)
        let start = Date()
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "5"])
        #expect(changed.wait(timeout: .now() + 10) == .success)
        #expect(Date().timeIntervalSince(start) < 1)
        let answer = try #require(stream.value)
        #expect(answer.headers["content-type"] == "text/event-stream")
        #expect(answer.body.contains("event: change"))

        // SIGTERM with a page's stream open: the stream ends and the server stops, not waiting on it.
        let held = DispatchSemaphore(value: 0)
        Thread {
            _ = try? Self.send(port: port, "/events", headers: ["Cookie": cookie], until: "never sent", seconds: 20)
            held.signal()
        }.start()
        Thread.sleep(forTimeInterval: 0.5)
        kill(web.process.processIdentifier, SIGTERM)
        let deadline = Date().addingTimeInterval(5)
        while web.process.isRunning, Date() < deadline { usleep(20_000) }
        #expect(!web.process.isRunning, "still running 5 s after SIGTERM with a stream open")
        if !web.process.isRunning { #expect(web.process.terminationStatus == 0) }
        #expect(held.wait(timeout: .now() + 5) == .success, "the open stream ended")
    }
}

extension WebTests {
    /// What a goal holds, by the daemon.
    static func saved(_ daemon: DaemonProcess, _ goal: String) throws -> Decimal? {
        try daemon.call("goal.get", ["goal": .string(goal)])["current_total"]?.stringValue.flatMap { Decimal(string: $0) }
    }

    /// The form's CSRF token in a page.
    static func csrf(in page: String) throws -> String {
        let match = try #require(page.firstMatch(of: /name="csrf" value="([0-9a-f]{32}(?:\.[0-9a-f]+)?)"/))
        return String(match.1)
    }

    /// "I saved" posted through the page: the contribution is the daemon's; a refused amount
    /// shows savingsctl's message and writes nothing.
    @Test func iSavedGoesThroughThePage() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        let web = try WebProcess(daemon: daemon)
        let cookie = try Self.signIn(web)
        let form = try Self.send(port: web.port, "/saved", headers: ["Cookie": cookie])
        #expect(form.status == 200)
        #expect(form.body.contains("<label for=\"amount\">"))
        let token = try Self.csrf(in: form.body)
        let origin = "http://127.0.0.1:\(web.port)"
        let saved = try Self.send(port: web.port, "/saved", method: "POST", headers: ["Cookie": cookie, "Origin": origin],
                                  body: "csrf=\(token)&goal=Bike&amount=50&asset=&note=from+the+page")
        #expect(saved.status == 303)
        let location = try #require(saved.headers["location"])
        #expect(location.hasPrefix("/?saved="), "\(location)")
        #expect(try Self.saved(daemon, "Bike") == 250)
        // The dashboard says what was recorded, with an Undo that takes it back (the daemon's
        // 24-hour undo, from the page).
        let confirmed = try Self.send(port: web.port, location, headers: ["Cookie": cookie])
        #expect(confirmed.body.contains("Recorded 50 EUR for Bike."), "\(confirmed.body)")
        let contribution = try #require(confirmed.body.firstMatch(of: /name="contribution" value="([0-9a-f-]+)"/)).1
        let undo = try Self.send(port: web.port, "/saved/undo", method: "POST", headers: ["Cookie": cookie, "Origin": origin],
                                 body: "csrf=\(try Self.csrf(in: confirmed.body))&contribution=\(contribution)")
        #expect(undo.status == 303 && undo.headers["location"] == "/?undone=1", "\(undo)")
        #expect(try Self.saved(daemon, "Bike") == 200)
        #expect(try Self.send(port: web.port, "/?undone=1", headers: ["Cookie": cookie]).body.contains("The saving was undone"))
        let twice = try Self.send(port: web.port, "/saved/undo", method: "POST", headers: ["Cookie": cookie, "Origin": origin],
                                  body: "csrf=\(try Self.csrf(in: confirmed.body))x&contribution=\(contribution)")
        #expect(twice.status == 403 || twice.status == 422, "a stale or repeated undo changes nothing: \(twice.status)")
        #expect(try Self.saved(daemon, "Bike") == 200)
        _ = try Self.send(port: web.port, "/saved", method: "POST", headers: ["Cookie": cookie, "Origin": origin],
                          body: "csrf=\(try Self.csrf(in: try Self.send(port: web.port, "/saved", headers: ["Cookie": cookie]).body))&goal=Bike&amount=50&asset=&note=from+the+page")
        #expect(try Self.saved(daemon, "Bike") == 250)

        let refused = try Self.send(port: web.port, "/saved", method: "POST", headers: ["Cookie": cookie, "Origin": origin],
                                    body: "csrf=\(token)&goal=Bike&amount=-5")
        #expect(refused.status == 422)
        #expect(refused.body.contains("role=\"alert\""))
        #expect(refused.body.contains("value=\"-5\""), "what was entered stays in the form")
        #expect(try Self.saved(daemon, "Bike") == 250)
    }

    /// Found by trying the view: `--listen 0.0.0.0:0` bound every interface without a word.
    /// The page is guarded for this machine: anything but loopback is refused, saying why.
    @Test func onlyLoopbackIsServed() throws {
        let daemon = try DaemonProcess()
        for address in ["0.0.0.0:0", "[::]:0", "192.0.2.1:0"] {
            let refused = try runCtl(["--socket", daemon.socketPath, "web", "--listen", address])
            #expect(refused.status != 0, "\(address)")
            #expect(refused.stderr.contains("--listen serves loopback only"), "\(address): \(refused.stderr)")
        }
    }

    /// Found by trying the view: a double click on Save (two posts ~40 ms apart) recorded the
    /// saving twice. A form sent twice is written once, and both answers lead to the same page.
    @Test func aFormSentTwiceIsWrittenOnce() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        let web = try WebProcess(daemon: daemon)
        let cookie = try Self.signIn(web)
        let origin = "http://127.0.0.1:\(web.port)"
        let port = web.port
        @Sendable func post(_ token: String) throws -> Answer {
            try Self.send(port: port, "/saved", method: "POST", headers: ["Cookie": cookie, "Origin": origin],
                          body: "csrf=\(token)&goal=Bike&amount=50&asset=&note=twice")
        }
        let first = try Self.csrf(in: try Self.send(port: web.port, "/saved", headers: ["Cookie": cookie]).body)
        let answers = [try post(first), try post(first)]
        #expect(answers.map(\.status) == [303, 303])
        #expect(answers[0].headers["location"]?.hasPrefix("/?saved=") == true)
        #expect(answers[1].headers["location"] == answers[0].headers["location"], "the second is answered as the first was")
        #expect(try Self.saved(daemon, "Bike") == 250)
        // At once, from two connections, as a double click sends them.
        let second = try Self.csrf(in: try Self.send(port: web.port, "/saved", headers: ["Cookie": cookie]).body)
        #expect(second != first, "each page's forms have an id of their own")
        let results = Mutex<[Int]>([])
        DispatchQueue.concurrentPerform(iterations: 2) { _ in
            let status = (try? post(second))?.status ?? 0
            results.withLock { $0.append(status) }
        }
        #expect(results.withLock { $0 } == [303, 303])
        #expect(try Self.saved(daemon, "Bike") == 300)
    }

    /// The assets screen: each asset's balance, what is free, and its allocations by goal.
    @Test func theAssetsScreenShowsBalancesAndAllocations() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank <main>", goal: "Bike", target: "800", amount: "200")
        _ = try daemon.call("tx.add", ["asset": "Bank <main>", "amount": "50"])
        let web = try WebProcess(daemon: daemon)
        let cookie = try Self.signIn(web)
        let page = try Self.send(port: web.port, "/assets", headers: ["Cookie": cookie])
        #expect(page.status == 200)
        #expect(page.body.contains("<h3>Bank &lt;main&gt;</h3>"))
        #expect(page.body.contains("250.00 EUR (fiat)"), "the balance")
        // An account reserved for one goal gives it every deposit (SPEC 5.1): nothing is free.
        #expect(page.body.contains("250.00 EUR for Bike"), "the allocation")
        #expect(page.body.contains("free 0.00 EUR"), "what is not allocated")
    }

    /// Run by a member of a read-only group, the page reads and refuses to write, saying why.
    @Test(.enabled(if: AccessTests.canSwitchUser && AccessTests.executableByOthers(Binaries.directory + "/savings-web"),
                   "needs root, setpriv, a 'users' group and binaries others may run"))
    func aReadOnlyMemberSeesReadOnly() throws {
        let daemon = try sharedDaemon(["SAVINGSD_READ_ONLY_GROUPS": "users"])
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        let web = try WebProcess(daemon: daemon, asNobodyIn: [100])
        let cookie = try Self.signIn(web)
        let page = try Self.send(port: web.port, "/", headers: ["Cookie": cookie])
        #expect(page.status == 200)
        #expect(page.body.contains("Bike"))
        let token = try Self.csrf(in: try Self.send(port: web.port, "/saved", headers: ["Cookie": cookie]).body)
        let refused = try Self.send(port: web.port, "/saved", method: "POST",
                                    headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(web.port)"], body: "csrf=\(token)&goal=Bike&amount=5")
        #expect(refused.status == 403)
        #expect(refused.body.contains("read_only") || refused.body.contains("read-only"), "\(refused.body)")
        #expect(try Self.saved(daemon, "Bike") == 200)
        // The planning screen's forms too.
        _ = try daemon.call("plan.list")
        let plan = try #require(try daemon.call("plan.get", ["goal": "Bike"])["id"]?.stringValue)
        let override = try Self.send(port: web.port, "/plans/amount", method: "POST", headers: ["Cookie": cookie, "Origin": "http://127.0.0.1:\(web.port)"],
                                     body: "csrf=\(token)&plan=\(plan)&amount=5")
        #expect(override.status == 403)
        #expect(override.body.contains("read_only"), "\(override.body)")
        #expect(try daemon.call("plan.get", ["goal": "Bike"])["custom_amount"] == .null)
    }

    /// Another user's `savingsctl web` on the same daemon does not take this user's cookie, nor
    /// this one theirs.
    @Test(.enabled(if: AccessTests.canSwitchUser && AccessTests.executableByOthers(Binaries.directory + "/savings-web"),
                   "needs root, setpriv, a 'users' group and binaries others may run"))
    func anotherUsersServerRefusesThisCookie() throws {
        let daemon = try sharedDaemon(["SAVINGSD_ALLOW_UIDS": "65534"])
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        let mine = try WebProcess(daemon: daemon)
        let theirs = try WebProcess(daemon: daemon, asNobodyIn: [100])
        let myCookie = try Self.signIn(mine), theirCookie = try Self.signIn(theirs)
        #expect(try Self.send(port: mine.port, "/", headers: ["Cookie": myCookie]).status == 200)
        #expect(try Self.send(port: theirs.port, "/", headers: ["Cookie": theirCookie]).status == 200)
        #expect(try Self.send(port: theirs.port, "/", headers: ["Cookie": myCookie]).status == 403)
        #expect(try Self.send(port: mine.port, "/", headers: ["Cookie": theirCookie]).status == 403)
        // Nor their token, nor their form's token with this cookie.
        #expect(try Self.send(port: mine.port, theirs.pathAndQuery).status == 403)
        let theirForm = try Self.csrf(in: try Self.send(port: theirs.port, "/saved", headers: ["Cookie": theirCookie]).body)
        #expect(try Self.send(port: mine.port, "/saved", method: "POST", headers: ["Cookie": myCookie, "Origin": "http://127.0.0.1:\(mine.port)"],
                              body: "csrf=\(theirForm)&goal=Bike&amount=5").status == 403)
        #expect(try Self.saved(daemon, "Bike") == 200)
    }

    /// Unix sockets a process holds open: its connections to the daemon (its HTTP ones are TCP).
    static func sockets(of pid: Int32) -> Int {
        let directory = "/proc/\(pid)/fd"
        let entries = (try? FileManager.default.contentsOfDirectory(atPath: directory)) ?? []
        let held = Set(entries.compactMap { entry -> String? in
            let link = (try? FileManager.default.destinationOfSymbolicLink(atPath: directory + "/" + entry)) ?? ""
            return link.hasPrefix("socket:[") ? String(link.dropFirst("socket:[".count).dropLast()) : nil
        })
        let unix = ((try? String(contentsOfFile: "/proc/net/unix", encoding: .utf8)) ?? "").split(separator: "\n").dropFirst()
            .compactMap { line -> String? in let fields = line.split(separator: " "); return fields.count > 6 ? String(fields[6]) : nil }
        return held.intersection(unix).count
    }

    /// A page that went away gives up its subscription to the daemon once something is sent to
    /// it (an event, or the keep-alive every 15 s), not when the server stops.
    @Test func aPageGoneAwayEndsItsSubscription() throws {
        let daemon = try DaemonProcess()
        try daemon.dedicatedAccount("Bank", goal: "Bike", target: "800", amount: "200")
        let web = try WebProcess(daemon: daemon)
        let cookie = try Self.signIn(web)
        let pid = web.process.processIdentifier
        let before = Self.sockets(of: pid)
        // Open the stream, see it start, and leave.
        let opened = try Self.send(port: web.port, "/events", headers: ["Cookie": cookie], until: "keep-alive", seconds: 5)
        #expect(opened.body.contains("keep-alive"))
        #expect(Self.sockets(of: pid) == before + 1, "the page's subscription is a connection to the daemon")
        // Things to send: the first write to a page gone still succeeds (TCP takes it, the peer
        // answers with a reset), the next fails, and the subscription closes.
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "1"])
        usleep(200_000)
        _ = try daemon.call("tx.add", ["asset": "Bank", "amount": "1"])
        let deadline = Date().addingTimeInterval(5)
        while Self.sockets(of: pid) > before, Date() < deadline { usleep(50_000) }
        #expect(Self.sockets(of: pid) == before)
    }
}

extension WebTests {
    /// An event stream held open: its socket, and what has arrived so far.
    final class OpenStream {
        let fd: Int32
        var received = ""
        var ended = false

        init(port: Int, cookie: String) throws {
            fd = try connectOnLoopback(port: port)
            let request = "GET /events HTTP/1.1\r\nHost: 127.0.0.1:\(port)\r\nCookie: \(cookie)\r\n\r\n"
            _ = request.withCString { write(fd, $0, strlen($0)) }
        }

        deinit { close(fd) }

        /// Reads what has arrived, waiting up to `milliseconds` for `until`.
        func read(until: String, milliseconds: Int) {
            let deadline = Date().addingTimeInterval(Double(milliseconds) / 1000)
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while !ended, !received.contains(until), Date() < deadline {
                var poller = pollfd(fd: fd, events: Int16(POLLIN), revents: 0)
                guard poll(&poller, 1, 50) > 0 else { continue }
                let count = Glibc.read(fd, &buffer, buffer.count)
                if count <= 0 { ended = true } else { received += String(decoding: buffer[0..<count], as: UTF8.self) }
            }
        }
    }

    /// A session opening stream after stream (as 500 did, taking 1,016 of the server's 1,024
    /// descriptors): at most 16 stay open, each older one told to stop following, and the
    /// pages still load.
    @Test func aSessionHoldsAtMostSixteenEventStreams() throws {
        let daemon = try DaemonProcess()
        let web = try WebProcess(daemon: daemon)
        let cookie = try Self.signIn(web)
        let pid = web.process.processIdentifier
        let before = Self.sockets(of: pid)
        var streams: [OpenStream] = []
        for _ in 0..<20 {
            let stream = try OpenStream(port: web.port, cookie: cookie)
            stream.read(until: "event: live", milliseconds: 5_000)
            #expect(stream.received.contains("event: live"), "\(stream.received)")
            streams.append(stream)
        }
        for stream in streams { stream.read(until: "event: closed", milliseconds: 200) }
        for (index, stream) in streams.enumerated() {
            #expect(stream.received.contains("event: closed") == (index < 4), "stream \(index): \(stream.received.suffix(80))")
        }
        for stream in streams.prefix(4) {
            // The response ends (its last chunk; the connection itself may stay for the next request).
            stream.read(until: "\r\n0\r\n\r\n", milliseconds: 2_000)
            #expect(stream.ended || stream.received.hasSuffix("\r\n0\r\n\r\n"), "the server ended the oldest streams: \(stream.received.suffix(40).debugDescription)")
        }
        let deadline = Date().addingTimeInterval(5)
        while Self.sockets(of: pid) > before + 16, Date() < deadline { usleep(50_000) }
        #expect(Self.sockets(of: pid) <= before + 16, "one daemon subscription per open stream")
        #expect(try Self.send(port: web.port, "/", headers: ["Cookie": cookie]).status == 200, "the pages still load")
        // A change still reaches the streams left open.
        _ = try daemon.call("goal.create", ["name": "Bike", "currency": "EUR", "target_amount": "900", "deadline": "2030-01-31"])
        streams[19].read(until: "event: change", milliseconds: 5_000)
        #expect(streams[19].received.contains("event: change"))
    }
}

/// A value set on one thread and read on another after a semaphore.
final class Box<Value>: @unchecked Sendable {
    var value: Value?
}
