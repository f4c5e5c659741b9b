import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOConcurrencyHelpers
import NIOCore
import SavingsRPC
import ServiceLifecycle

/// `savingsctl web`: an HTTP server on loopback showing the app's screens, fed by savingsd
/// over its socket and pushing its changes to open pages with Server-Sent Events.
public enum WebServer {
    /// `savingsctl web`: serves `listen` (`HOST:PORT`, port 0 for a free one) for the daemon at
    /// `socketPath` until SIGINT or SIGTERM, printing the first URL as the only line on standard
    /// output, then logging to standard error; `open` starts the desktop browser on it.
    public static func serve(listen: String, socketPath: String, open: Bool) throws {
        guard let colon = listen.lastIndex(of: ":"), let port = Int(listen[listen.index(after: colon)...]), (0...65_535).contains(port) else {
            throw WebFailure("--listen takes HOST:PORT (e.g. 127.0.0.1:0 for a free port), not '\(listen)'")
        }
        var host = String(listen[..<colon])
        if host.hasPrefix("["), host.hasSuffix("]") { host = String(host.dropFirst().dropLast()) }
        guard !host.isEmpty else { throw WebFailure("--listen needs a host: 127.0.0.1:\(port)") }
        // The page is guarded for this machine (a token, a cookie, loopback Host names): another
        // interface would put it on the network.
        guard Self.isLoopback(host) else {
            throw WebFailure("--listen serves loopback only (127.0.0.1, ::1 or localhost): '\(host)' would put the page on the network")
        }
        var configured = Logger(label: "savingsctl-web") { StreamLogHandler.standardError(label: $0) }
        configured.logLevel = .info
        let logger = configured
        let outcome = Outcome()
        let done = DispatchSemaphore(value: 0)
        Task {
            do {
                try await run(host: host, port: port, daemon: DaemonLink(socketPath: socketPath), logger: logger) { url in
                    FileHandle.standardOutput.write(Data((url + "\n").utf8))
                    if open { openBrowser(url, logger: logger) }
                }
            } catch {
                outcome.error = error
            }
            done.signal()
        }
        done.wait()
        if let error = outcome.error { throw WebFailure("cannot serve \(listen): \(error)") }
    }

    /// Whether `host` names this machine's loopback: localhost, 127.0.0.0/8 or ::1.
    static func isLoopback(_ host: String) -> Bool {
        if host.lowercased() == "localhost" || host == "::1" { return true }
        let parts = host.split(separator: ".", omittingEmptySubsequences: false)
        return parts.count == 4 && parts[0] == "127" && parts.allSatisfy { UInt8($0) != nil }
    }

    /// Starts `xdg-open` on `url`, not waiting for it.
    static func openBrowser(_ url: String, logger: Logger) {
        let process = Process()
        process.executableURL = URL(fileURLWithPath: "/usr/bin/env")
        process.arguments = ["xdg-open", url]
        do { try process.run() } catch { logger.warning("cannot start xdg-open: \(error)") }
    }

    /// Serves until SIGINT or SIGTERM. `ready` is called once with the first URL (the token in
    /// it), when the server listens.
    public static func run(host: String, port: Int, daemon: DaemonLink, logger: Logger,
                           ready: @escaping @Sendable (String) -> Void) async throws {
        let state = AccessBox()
        let router = try routes(daemon: daemon, state: state, logger: logger)
        let app = Application(
            router: router,
            configuration: .init(address: .hostname(host, port: port), serverName: nil),
            onServerRunning: { channel in
                let bound = channel.localAddress?.port ?? port
                let access = WebAccess(host: host, port: bound)
                state.access = access
                ready("http://\(WebAccess.bracketed(host)):\(bound)/?token=\(access.token)")
            },
            logger: logger)
        try await app.runService()
    }

    /// Every route, behind the guard that applies `state`'s access.
    static func routes(daemon: DaemonLink, state: AccessBox, logger: Logger) throws -> Router<BasicRequestContext> {
        let pages = try Pages()
        let router = Router()
        router.add(middleware: Guard(state: state, pages: pages))
        Screens(daemon: daemon, pages: pages, state: state).add(to: router)
        router.get("/static/style.css") { _, _ in asset(Assets.style, type: "text/css; charset=utf-8") }
        router.get("/static/live.js") { _, _ in asset(Assets.live, type: "text/javascript; charset=utf-8") }
        let streams = EventStreams()
        router.get("/events") { request, _ in
            // The guard let it in: it holds the session's cookie.
            let session = state.access.flatMap { WebAccess.cookie($0.cookieName, in: request.headers[.cookie]) } ?? ""
            return events(daemon, streams: streams, session: session, logger: logger)
        }
        return router
    }

    /// What `run` answers requests with once it listens with `access`, without a socket: the
    /// fuzz target `web` drives it.
    package static func responder(daemon: DaemonLink, access: WebAccess, logger: Logger) throws -> RouterResponder<BasicRequestContext> {
        let state = AccessBox()
        state.access = access
        return try routes(daemon: daemon, state: state, logger: logger).buildResponder()
    }

    /// A page saying why the daemon gave no answer: 403 for a read-only member, 404 for what
    /// does not exist, 503 when it is out of reach.
    static func problem(_ error: any Error, pages: Pages) -> Response {
        guard let error = error as? DaemonLink.Failure else { return html(pages.problem("\(error)"), status: .internalServerError) }
        let status: HTTPResponse.Status = switch error.kind {
        case "read_only": .forbidden
        case "not_found": .notFound
        case nil: .serviceUnavailable
        default: .unprocessableContent
        }
        return html(pages.problem(error.message), status: status)
    }

    static func html(_ text: String, status: HTTPResponse.Status = .ok) -> Response {
        asset(text, type: "text/html; charset=utf-8", status: status)
    }

    static func asset(_ text: String, type: String, status: HTTPResponse.Status = .ok) -> Response {
        Response(status: status, headers: [.contentType: type], body: .init(byteBuffer: ByteBuffer(string: text)))
    }

    /// Server-Sent Events: `live` once subscribed to the daemon, `change` for each of its
    /// events, `down` while it cannot be reached (tried again every second), `up` when it is
    /// back, and a comment every `keepAlive`, so that a page gone away is noticed and its daemon
    /// subscription closed. (The first write after the page has gone still succeeds, as TCP has
    /// it; the one after fails.)
    /// Each stream holds a connection to the daemon: a session has at most
    /// `EventStreams.perSession` open (the oldest is closed, told why, when one more opens).
    static func events(_ daemon: DaemonLink, streams: EventStreams, session: String, logger: Logger,
                       keepAlive: Duration = .seconds(15)) -> Response {
        Response(status: .ok, headers: [.contentType: "text/event-stream"], body: ResponseBody { (writer: inout any ResponseBodyWriter) in
            // What to send is queued by the feeding task; only this task writes.
            let (queue, queued) = AsyncStream<String>.makeStream(bufferingPolicy: .bufferingNewest(64))
            let page = EventPage(queued)
            let opened = streams.open(page, session: session)
            defer { streams.closed(opened) }
            let feeder = Task { await feed(page, daemon: daemon, logger: logger, keepAlive: keepAlive) }
            // The server stopping (SIGINT, SIGTERM) ends the stream, so its shutdown does not wait on it.
            await withGracefulShutdownHandler {
                for await text in queue {
                    do { try await writer.write(ByteBuffer(string: text)) } catch { break }
                }
            } onGracefulShutdown: {
                page.close()
            }
            page.close()
            feeder.cancel()
            try? await writer.finish(nil)
        })
    }

    /// Feeds `page` until it closes: the daemon's events, or its absence and return.
    private static func feed(_ page: EventPage, daemon: DaemonLink, logger: Logger, keepAlive: Duration) async {
        var first = true, down = false
        while page.open, !Task.isCancelled {
            // Said once the daemon has answered the subscription (a change from then on reaches
            // the page): `live`, with the client's retry delay the first time, `up` after an outage.
            let live = first ? "retry: 1000\nevent: live\ndata: {}\n\n" : down ? "event: up\ndata: {}\n\n" : "event: live\ndata: {}\n\n"
            do {
                // The subscription, and beside it the keep-alive: the first to end (the page gone,
                // the daemon gone) ends the other.
                try await withThrowingTaskGroup(of: Void.self) { group in
                    group.addTask {
                        try await daemon.events(subscribed: { page.send(live) }) { _, params in
                            page.send("event: change\ndata: \(params["topic"]?.stringValue ?? "change")\n\n")
                        }
                    }
                    group.addTask {
                        while page.send(": keep-alive\n\n") { try await Task.sleep(for: keepAlive) }
                    }
                    try await group.next()
                    group.cancelAll()
                }
                first = false
                down = false
            } catch {
                guard page.open else { return }
                if !down {
                    logger.info("savingsd out of reach: \((error as? DaemonLink.Failure)?.message ?? "\(error)")")
                    guard page.send("event: down\ndata: {}\n\n") else { return }
                }
                first = false
                down = true
            }
            try? await Task.sleep(for: .seconds(1))
        }
    }
}

/// An open event stream's queue, and whether the page is still there.
final class EventPage: Sendable {
    private let queue: AsyncStream<String>.Continuation
    private let state = NIOLockedValueBox(true)

    init(_ queue: AsyncStream<String>.Continuation) { self.queue = queue }

    var open: Bool { state.withLockedValue { $0 } }

    /// Queues `text`; false once the page has gone.
    func send(_ text: String) -> Bool {
        guard open else { return false }
        queue.yield(text)
        return true
    }

    func close() {
        state.withLockedValue { $0 = false }
        queue.finish()
    }

    /// Ends the stream with a `closed` event: the page stops following (it does not reconnect)
    /// and says so; a reload follows again.
    func evict() {
        _ = send("event: closed\ndata: {}\n\n")
        close()
    }
}

/// The open event streams, at most `perSession` per session and `total` in all: when one more
/// opens, the oldest (of its session, or of all) is closed. Each holds a connection to the
/// daemon and a descriptor here: unbounded, 500 streams took 1,016 of the server's 1,024
/// descriptors and its own pages stopped loading.
final class EventStreams: Sendable {
    static let perSession = 16
    static let total = 64

    private struct Open {
        let id: UInt64
        let session: String
        let page: EventPage
    }

    private let perSession: Int
    private let total: Int
    /// In the order they opened.
    private let state = NIOLockedValueBox<(open: [Open], next: UInt64)>(([], 0))

    init(perSession: Int = EventStreams.perSession, total: Int = EventStreams.total) {
        self.perSession = perSession
        self.total = total
    }

    /// Counts `page` among the open streams of `session`, closing the oldest beyond the bounds.
    func open(_ page: EventPage, session: String) -> UInt64 {
        let (id, evicted) = state.withLockedValue { state -> (UInt64, [EventPage]) in
            state.next += 1
            state.open.append(Open(id: state.next, session: session, page: page))
            var evicted: [EventPage] = []
            while state.open.filter({ $0.session == session }).count > perSession, let oldest = state.open.firstIndex(where: { $0.session == session }) {
                evicted.append(state.open.remove(at: oldest).page)
            }
            while state.open.count > total { evicted.append(state.open.removeFirst().page) }
            return (state.next, evicted)
        }
        for page in evicted { page.evict() }
        return id
    }

    /// The stream `id` ended.
    func closed(_ id: UInt64) {
        state.withLockedValue { state in state.open.removeAll { $0.id == id } }
    }

    /// Streams open now.
    var count: Int { state.withLockedValue { $0.open.count } }
}

/// Why `savingsctl web` could not serve.
public struct WebFailure: Error, CustomStringConvertible {
    public let description: String
    init(_ description: String) { self.description = description }
}

/// How the server task ended.
final class Outcome: @unchecked Sendable {
    var error: (any Error)?
}
