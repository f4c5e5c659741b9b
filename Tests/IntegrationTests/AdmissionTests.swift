import Foundation
import SavingsRPC
import Synchronization
import Testing

/// SPEC 9, admission: nothing answered before the peer is checked; at max_connections the
/// daemon waits to accept; a uid beyond its share waits parked; busy only past the bound.
@Suite struct AdmissionTests {
    static let ping = #"{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}"#

    static func served(_ client: LineClient) throws -> Bool {
        try client.sendLine(Self.ping)
        return try JSONParser.parse(try #require(try client.readLine(timeoutMilliseconds: 10_000)))["result"]?["pong"] == true
    }

    /// No answer within `milliseconds` (the line was sent before).
    static func silent(_ client: LineClient, milliseconds: Int32) -> Bool {
        do {
            _ = try client.readLine(timeoutMilliseconds: milliseconds)
            return false
        } catch {
            return error.timedOut
        }
    }

    @Test func beyondMaxConnectionsANewcomerWaitsUnansweredThenIsServed() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_MAX_CONNECTIONS": "8", "SAVINGSD_MAX_CONNECTIONS_PER_UID": "8"])
        let eight = try (0..<8).map { _ in try daemon.raw() }
        for client in eight { #expect(try Self.served(client)) }
        let ninth = try daemon.raw()
        try ninth.sendLine(Self.ping)
        #expect(Self.silent(ninth, milliseconds: 1_500), "no answer, daemon.ping included, while eight are served")
        eight[0].close()
        let answer = try JSONParser.parse(try #require(try ninth.readLine(timeoutMilliseconds: 10_000)))
        #expect(answer["result"]?["pong"] == true, "served once one of the eight closed")
        #expect(try Self.served(eight[1]), "the others are still served")
    }

    @Test func aUIDBeyondItsShareWaitsParkedAndBusyComesOnlyPastTheBound() throws {
        // One served per uid, sixteen parked at most (the backlog's size).
        let daemon = try DaemonProcess(environment: ["SAVINGSD_MAX_CONNECTIONS": "4", "SAVINGSD_MAX_CONNECTIONS_PER_UID": "1",
                                                     "SAVINGSD_BACKLOG": "16"])
        let first = try daemon.raw()
        #expect(try Self.served(first))
        let parked = try (0..<16).map { _ in try daemon.raw() }
        for client in parked { try client.sendLine(Self.ping) }
        #expect(Self.silent(parked[0], milliseconds: 1_000), "parked: not answered")
        let refused = try daemon.raw()
        let line = try JSONParser.parse(try #require(try refused.readLine(timeoutMilliseconds: 10_000)))
        #expect(line["error"]?["data"]?["kind"] == "busy", "past the bound: \(line)")
        #expect(try refused.readLine(timeoutMilliseconds: 10_000) == nil, "and closed")
        first.close()
        let answer = try JSONParser.parse(try #require(try parked[0].readLine(timeoutMilliseconds: 10_000)))
        #expect(answer["result"]?["pong"] == true, "the first parked is served when its uid's connection closes")
        #expect(Self.silent(parked[1], milliseconds: 500), "the next still waits its turn")
    }

    /// A burst of 1,000 clients, each asking for a month's plans that do not exist yet: every
    /// one answered, one plan per goal, memory back down afterwards.
    @Test func aBurstOfAThousandClientsIsServedInFull() throws {
        var limit = rlimit()
        getrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        if limit.rlim_cur < 4_096 {
            limit.rlim_cur = min(limit.rlim_max, 4_096)
            setrlimit(__rlimit_resource_t(RLIMIT_NOFILE.rawValue), &limit)
        }
        try #require(limit.rlim_cur >= 2_200, "needs 2,200 open files for clients and daemon (limit \(limit.rlim_cur))")
        let daemon = try DaemonProcess()
        for name in ["House", "Car", "Bike"] {
            _ = try daemon.call("goal.create", ["name": .string(name), "currency": "EUR", "target_amount": "1000", "deadline": "2031-01-01"])
        }
        let month = "2030-06"
        let count = 1_000
        let answers = Mutex<[Int: JSONValue]>([:])
        let failures = Mutex<[String]>([])
        let socketPath = daemon.socketPath
        let started = ContinuousClock.now
        DispatchQueue.concurrentPerform(iterations: 50) { group in
            // Fifty threads, twenty clients each, all connected before any asks.
            var clients: [(Int, LineClient)] = []
            for index in stride(from: group, to: count, by: 50) {
                do { clients.append((index, try LineClient(socketPath: socketPath))) } catch { failures.withLock { $0.append("connect: \(error)") } }
            }
            for (index, client) in clients {
                do {
                    try client.sendLine(#"{"jsonrpc":"2.0","id":\#(index),"method":"plan.list","params":{"month":"\#(month)"}}"#)
                } catch { failures.withLock { $0.append("send: \(error)") } }
            }
            for (index, client) in clients {
                do {
                    let line = try #require(try client.readLine(timeoutMilliseconds: 55_000))
                    answers.withLock { $0[index] = try? JSONParser.parse(line) }
                    client.close()
                } catch { failures.withLock { $0.append("read \(index): \(error)") } }
            }
        }
        let took = started.duration(to: .now)
        #expect(failures.withLock { $0 }.isEmpty, "\(failures.withLock { $0.prefix(5) })")
        let all = answers.withLock { $0 }
        #expect(all.count == count)
        #expect(all.values.allSatisfy { $0["error"] == nil && $0["result"] != nil }, "every answer a result")
        #expect(took < .seconds(60), "the burst took \(took)")
        let plans = try daemon.call("plan.list", ["month": .string(month)])
        #expect(plans["plans"]?.arrayValue?.count == 3, "one plan per goal: \(plans)")
        // Memory back down once the burst has gone (the daemon trims after a quiet spell).
        try? waitUntil(timeout: 20) { daemon.rssKilobytes < 80_000 }
        #expect(daemon.rssKilobytes < 80_000, "RSS \(daemon.rssKilobytes) kB after the burst")
    }
}

/// Admission across users: run as nobody (uid 65534), as the access tests do.
@Suite struct AdmissionAcrossUsersTests {
    /// Everything a client as nobody (in `users`) receives after sending `lines`, until the close.
    func receivedAsNobody(_ socket: String, sending lines: [String]) throws -> [String] {
        let script = """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
            s.sendall("".join(l + "\\n" for l in sys.argv[2:]).encode())
            data = b""
            while True:
                chunk = s.recv(65536)
                if not chunk: break
                data += chunk
            sys.stdout.write(data.decode())
            """
        let result = try runCtl(["--reuid=65534", "--regid=65534", "--groups=100", "--", "/usr/bin/python3", "-c", script, socket] + lines,
                                executable: "/usr/bin/setpriv")
        #expect(result.status == 0, "\(result.stderr)")
        return result.stdout.split(separator: "\n").map(String.init)
    }

    @Test(.enabled(if: AccessTests.canSwitchUser && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
                   "needs root, setpriv, python3 and a 'users' group"))
    func aDeniedPeerReceivesExactlyOneLine() throws {
        let daemon = try sharedDaemon([:])
        for first in [AdmissionTests.ping, #"{"jsonrpc":"2.0","id":2,"method":"goal.list"}"#, "not json"] {
            let lines = try receivedAsNobody(daemon.socketPath, sending: [first, AdmissionTests.ping])
            #expect(lines.count == 1, "\(lines)")
            #expect(try lines.first.map { try JSONParser.parse($0) }?["error"]?["data"]?["kind"] == "permission_denied", "\(lines)")
        }
    }

    @Test(.enabled(if: AccessTests.canSwitchUser, "needs root, setpriv and a 'users' group"))
    func oneUIDHoldingItsShareIdleDoesNotStarveAnother() throws {
        // Eight served at once, four per uid; nobody is allowed too.
        let daemon = try sharedDaemon(["SAVINGSD_MAX_CONNECTIONS": "8", "SAVINGSD_ALLOW_UIDS": "65534"])
        let held = try (0..<4).map { _ in try daemon.raw() }
        for client in held { #expect(try AdmissionTests.served(client)) }
        let fifth = try daemon.raw()
        try fifth.sendLine(AdmissionTests.ping)
        #expect(AdmissionTests.silent(fifth, milliseconds: 1_000), "root's fifth waits: its share is held")
        let start = ContinuousClock.now
        let other = try runCtlAsNobody(groups: [100], ["--socket", daemon.socketPath, "goal", "list"])
        #expect(other.status == 0, "\(other.stderr)")
        #expect(start.duration(to: .now) < .seconds(5), "another uid is served at once")
        held[0].close()
        let answer = try JSONParser.parse(try #require(try fifth.readLine(timeoutMilliseconds: 10_000)))
        #expect(answer["result"]?["pong"] == true, "root's fifth is served once one of its own closes")
    }

    /// Two users holding every place with event subscriptions (which no idle timeout closes) do
    /// not lock a third out: the third is served in the place of the youngest subscription of a
    /// uid over its fair share, whose client is told why.
    @Test(.enabled(if: AccessTests.canSwitchUser && FileManager.default.isExecutableFile(atPath: "/usr/bin/python3"),
                   "needs root, setpriv, python3 and a 'users' group"))
    func twoUsersHoldingEveryPlaceDoNotLockOutAThird() throws {
        let daemon = try sharedDaemon(["SAVINGSD_MAX_CONNECTIONS": "4", "SAVINGSD_ALLOW_UIDS": "65534,65533"])
        let subscribe = #"{"jsonrpc":"2.0","id":1,"method":"events.subscribe"}"#
        // root's two subscriptions.
        let mine = try (0..<2).map { _ in try daemon.raw() }
        for client in mine {
            try client.sendLine(subscribe)
            #expect(try client.readLine(timeoutMilliseconds: 10_000)?.contains("result") == true)
        }
        // nobody's two, held by a process of its own that reports every line it receives.
        let output = daemon.directory + "/nobody.out"
        _ = FileManager.default.createFile(atPath: output, contents: nil)
        chmod(output, 0o666)
        let holder = Process()
        holder.executableURL = URL(fileURLWithPath: "/usr/bin/setpriv")
        holder.arguments = ["--reuid=65534", "--regid=65534", "--groups=100", "--", "/usr/bin/python3", "-u", "-c", """
            import socket, sys, select
            out = open(sys.argv[2], "a", buffering=1)
            conns = []
            for n in range(2):
                s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1])
                s.sendall(b'\(subscribe)\\n')
                conns.append((n, s, s.makefile("rb")))
                out.write("%d %s" % (n, conns[-1][2].readline().decode()))
            open_ = {n for n, _, _ in conns}
            while open_:
                for n, s, f in conns:
                    if n not in open_: continue
                    if select.select([s], [], [], 0.05)[0]:
                        line = f.readline()
                        if not line:
                            out.write("%d closed\\n" % n); open_.discard(n)
                        else:
                            out.write("%d %s" % (n, line.decode()))
            """, daemon.socketPath, output]
        try holder.run()
        defer { if holder.isRunning { holder.terminate() } }
        try waitUntil(timeout: 10) { ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").components(separatedBy: "result").count == 3 }
        // Every place is taken; a third user is served within moments.
        let started = ContinuousClock.now
        let third = try runCtl(["--reuid=65533", "--regid=65533", "--groups=100", "--", "/usr/bin/python3", "-c", """
            import socket, sys
            s = socket.socket(socket.AF_UNIX); s.connect(sys.argv[1]); s.settimeout(10)
            s.sendall(b'{"jsonrpc":"2.0","id":1,"method":"goal.list"}\\n')
            sys.stdout.write(s.makefile("rb").readline().decode())
            """, daemon.socketPath], executable: "/usr/bin/setpriv")
        #expect(third.status == 0, "\(third.stderr)")
        #expect(third.stdout.contains("\"goals\""), "served: \(third.stdout)")
        #expect(started.duration(to: .now) < .seconds(5))
        // The youngest subscription over its share (nobody's second) was told why, then closed.
        try waitUntil(timeout: 10) { ((try? String(contentsOfFile: output, encoding: .utf8)) ?? "").contains("1 closed") }
        let received = (try? String(contentsOfFile: output, encoding: .utf8)) ?? ""
        let notice = try #require(received.split(separator: "\n").first { $0.hasPrefix("1 {") && $0.contains("error") }.map { try JSONParser.parse(String($0.dropFirst(2))) })
        #expect(notice["error"]?["data"]?["kind"] == "busy", "\(received)")
        #expect(notice["error"]?["message"]?.stringValue?.contains("fair share") == true, "\(received)")
        #expect(!received.contains("0 closed"), "nobody's first subscription is kept: \(received)")
        // root's are kept too, and still answer.
        try mine[1].sendLine(AdmissionTests.ping)
        #expect(try mine[1].readLine(timeoutMilliseconds: 10_000)?.contains("pong") == true)
    }
}
