import Foundation
import SavingsRPC
import Testing

/// Runs savingsctl as another user (nobody) with extra groups, as a stranger on the machine would.
func runCtlAsNobody(groups: [Int], _ arguments: [String]) throws -> (status: Int32, stdout: String, stderr: String) {
    try runCtl(["--reuid=65534", "--regid=65534", "--groups=\(groups.map(String.init).joined(separator: ","))", "--",
                Binaries.savingsctl] + arguments, executable: "/usr/bin/setpriv")
}

/// A daemon whose socket the `users` group (gid 100) can reach.
func sharedDaemon(_ extra: [String: String]) throws -> DaemonProcess {
    let directory = try makeScratchDirectory()
    chmod(directory, 0o755)
    return try DaemonProcess(directory: directory, environment: ["SAVINGSD_SOCKET_GROUP": "users", "SAVINGSD_LOG_LEVEL": "debug"]
        .merging(extra) { $1 })
}

@Suite struct AccessTests {
    static let canSwitchUser = getuid() == 0 && FileManager.default.isExecutableFile(atPath: "/usr/bin/setpriv")
        && getgrnam("users") != nil && executableByOthers(Binaries.savingsctl)

    /// Whether another user can run `path`: every directory on the way searchable, the file executable.
    static func executableByOthers(_ path: String) -> Bool {
        var prefix = ""
        for component in path.split(separator: "/") {
            prefix += "/" + component
            var info = stat()
            guard stat(prefix, &info) == 0, info.st_mode & S_IXOTH != 0 else { return false }
        }
        return true
    }

    @Test(.enabled(if: canSwitchUser, "needs root, setpriv and a 'users' group"))
    func strangersAreRefusedReadOnlyGroupsMayOnlyRead() throws {
        let closed = try sharedDaemon([:])
        #expect(fileMode(closed.socketPath) == 0o660)
        #expect(fileMode(closed.directory) == 0o750)
        let stranger = try runCtlAsNobody(groups: [100], ["--socket", closed.socketPath, "status"])
        #expect(stranger.status == 1)
        #expect(stranger.stderr.contains("permission denied"), "\(stranger.stderr)")
        #expect(closed.log.contains("uid 65534"), "the peer's credentials are logged")

        let readers = try sharedDaemon(["SAVINGSD_READ_ONLY_GROUPS": "users"])
        _ = try readers.call("goal.create", ["name": "House", "currency": "EUR", "target_amount": "1000", "deadline": "2030-01-01"])
        let read = try runCtlAsNobody(groups: [100], ["--socket", readers.socketPath, "goal", "list"])
        #expect(read.status == 0, "\(read.stderr)")
        #expect(read.stdout.contains("House"))
        let write = try runCtlAsNobody(groups: [100], ["--socket", readers.socketPath, "goal", "archive", "House"])
        #expect(write.status == 1)
        #expect(write.stderr.contains("read_only"), "\(write.stderr)")

        let allowed = try sharedDaemon(["SAVINGSD_ALLOW_UIDS": "65534"])
        let written = try runCtlAsNobody(groups: [100], ["--socket", allowed.socketPath, "call", "goal.create",
                                                         #"{"name":"Bike","currency":"EUR","target_amount":"500","deadline":"2030-01-01"}"#])
        #expect(written.status == 0, "\(written.stderr)")
    }

    /// A user outside the socket's group is refused by the kernel at connect(), and told which
    /// group grants access (the socket's, or its directory's when even that is closed to them).
    @Test(.enabled(if: canSwitchUser, "needs root, setpriv and a 'users' group"))
    func aSocketClosedByItsPermissionsNamesTheGroupToJoin() throws {
        let daemon = try sharedDaemon([:])
        let outsider = try runCtl(["--reuid=65534", "--regid=65534", "--clear-groups", "--", Binaries.savingsctl,
                                   "--socket", daemon.socketPath, "goal", "list"], executable: "/usr/bin/setpriv")
        #expect(outsider.status == 3)
        #expect(outsider.stderr.contains("permission denied on \(daemon.socketPath)"), "\(outsider.stderr)")
        #expect(outsider.stderr.contains("members of the group 'users'"), "\(outsider.stderr)")
        #expect(outsider.stderr.contains("usermod -aG users nobody"), "\(outsider.stderr)")
        #expect(!outsider.stderr.contains("Start it with"), "the daemon is running: starting it is not the advice")
    }

    /// Something accepts on the socket but never answers (a socket-activated service that does
    /// not start): savingsctl says so within its --timeout, long methods included.
    @Test(arguments: [["goal", "list"], ["backup", "/tmp/never-written.db"]])
    func aSilentDaemonIsNamedWithinTheTimeout(command: [String]) throws {
        let directory = try makeScratchDirectory()
        let path = directory + "/silent.sock"
        let listener = socket(AF_UNIX, Int32(SOCK_STREAM.rawValue), 0)
        defer { close(listener) }
        var address = sockaddr_un()
        address.sun_family = sa_family_t(AF_UNIX)
        withUnsafeMutableBytes(of: &address.sun_path) { $0.copyBytes(from: Array(path.utf8) + [0]) }
        let bound = withUnsafePointer(to: &address) {
            $0.withMemoryRebound(to: sockaddr.self, capacity: 1) { bind(listener, $0, socklen_t(MemoryLayout<sockaddr_un>.size)) }
        }
        try #require(bound == 0 && listen(listener, 8) == 0)
        let start = ContinuousClock.now
        let result = try runCtl(["--socket", path, "--timeout", "1"] + command)
        let took = start.duration(to: .now)
        #expect(result.status == 3)
        #expect(result.stderr.contains("accepted the connection but did not answer"), "\(result.stderr)")
        #expect(result.stderr.contains("journalctl -u savingsd"), "\(result.stderr)")
        #expect(took < .seconds(5), "gave up after \(took)")
    }

    @Test func idleConnectionsAreClosedButSubscribersAndLongRequestsStay() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_IDLE_TIMEOUT": "1"])
        let idle = try daemon.raw()
        let subscriber = try daemon.raw()
        try subscriber.sendLine(#"{"jsonrpc":"2.0","id":1,"method":"events.subscribe"}"#)
        _ = try subscriber.readLine()
        #expect(try idle.readLine(timeoutMilliseconds: 5_000) == nil, "closed after a second of silence")
        Thread.sleep(forTimeInterval: 1.5)
        _ = try daemon.call("goal.create", ["name": "House", "currency": "EUR", "target_amount": "1000", "deadline": "2030-01-01"])
        let event = try JSONParser.parse(try #require(try subscriber.readLine(timeoutMilliseconds: 5_000), "a subscriber is not idle"))
        #expect(event["method"] == "event")
    }

    @Test func batchesAboveTheLimitAreRefusedNamingIt() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_MAX_BATCH": "3"])
        let client = try daemon.raw()
        let ping = #"{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}"#
        try client.sendLine("[" + Array(repeating: ping, count: 4).joined(separator: ",") + "]")
        let answer = try JSONParser.parse(try #require(try client.readLine()))
        #expect(answer["error"]?["code"] == -32600)
        #expect(answer["error"]?["message"]?.stringValue?.contains("at most 3") == true)
        try client.sendLine("[" + Array(repeating: ping, count: 3).joined(separator: ",") + "]")
        #expect(try JSONParser.parse(try #require(try client.readLine())).arrayValue?.count == 3)
    }

    /// Keeps sending `request` without reading: the answers pile up until the daemon gives up
    /// on the connection (true) or 20 s pass (false); also how many lines went out.
    func sendWithoutReading(_ request: String, on client: LineClient) -> (closed: Bool, sent: Int) {
        client.setSendTimeout(milliseconds: 500)
        var sent = 0
        let deadline = Date().addingTimeInterval(20)
        while Date() < deadline {
            do {
                try client.sendLine(request)
                sent += 1
            } catch {
                if error.message.contains("temporarily unavailable") { continue }
                return (true, sent)
            }
        }
        return (false, sent)
    }

    @Test func aClientThatDoesNotReadIsDisconnectedAndTheDaemonCarriesOn() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_IDLE_TIMEOUT": "2"])
        let greedy = try daemon.raw()
        let (closed, sent) = sendWithoutReading(#"{"jsonrpc":"2.0","id":1,"method":"rpc.discover"}"#, on: greedy)
        #expect(closed, "the daemon closed the connection (after \(sent) unread requests)")
        #expect(try daemon.call("daemon.ping")["pong"] == true)
        let rss = daemon.rssKilobytes
        #expect(rss < 200_000, "RSS \(rss) kB stays bounded")
    }

    /// A subscriber is never closed as idle; one that stops reading is closed once its answers
    /// have stayed unwritable for the stall time (here the idle timeout, 2 s, the smaller).
    @Test func aSubscriberThatStopsReadingIsClosedAsStalled() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_IDLE_TIMEOUT": "2"])
        let stalled = try daemon.raw()
        try stalled.sendLine(#"{"jsonrpc":"2.0","id":0,"method":"events.subscribe"}"#)
        _ = try stalled.readLine()
        let started = Date()
        let (closed, sent) = sendWithoutReading(#"{"jsonrpc":"2.0","id":1,"method":"daemon.ping"}"#, on: stalled)
        #expect(closed, "the daemon closed the connection (after \(sent) unread requests)")
        #expect(Date().timeIntervalSince(started) >= 1.5, "not before the stall time")
        #expect(daemon.log.contains("closing a connection whose client stopped reading its answers"))
        #expect(try daemon.call("daemon.ping")["pong"] == true)
    }
}
