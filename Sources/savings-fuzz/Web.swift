import Foundation
import HTTPTypes
import Hummingbird
import Logging
import NIOCore
import NIOEmbedded
import SavingsWeb

/// `web`: requests to savings-web as its router sees them, behind the guard (Host, token, cookie,
/// Origin/Referer, the form's CSRF field), through its routes, with no daemon to answer (each
/// screen shows why). The input is a request as HTTP/1.1 writes it: `METHOD TARGET`, header lines,
/// a blank line, the body. The guard's secrets are fixed (`WebTarget.token` and so on) so that
/// inputs can carry them. Every answer must carry the security headers, a redirect must stay
/// on this server, and nothing of the request may come back as markup.
enum WebTarget {
    static let target = FuzzTarget("web", prepare: { _ = responder }, run: run)

    static let token = "0123456789abcdef0123456789abcdef"
    static let session = "fedcba9876543210fedcba9876543210"
    static let csrf = "00112233445566778899aabbccddeeff"
    static let access = WebAccess(host: "127.0.0.1", port: 8080, token: token, session: session, csrf: csrf)
    /// No daemon listens there: each screen's call fails at once, as with savingsd stopped.
    static let daemon = DaemonLink(socketPath: "/nonexistent/savings-fuzz.sock")
    static let logger = Logger(label: "savings-fuzz") { _ in SwiftLogNoOpLogHandler() }
    static let responder: RouterResponder<BasicRequestContext> = {
        do {
            return try WebServer.responder(daemon: daemon, access: access, logger: logger)
        } catch {
            fatalError("savings-fuzz: the web responder cannot be made: \(error)")
        }
    }()
    static let channel = EmbeddedChannel()

    /// What a hostile request might try to have echoed as markup; no page has it.
    static let marker = "<fuzz"

    static let securityHeaders = WebAccess.securityHeaders.map { HTTPField.Name($0.0)! }

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let request = parse(input) else {
            trace("web: not a request")
            return
        }
        // Thrown: an error the server answers itself (404 for no route, 413, ...).
        guard let (head, body) = blocking({ await respond(request) }) else { return }
        trace("web: \(request.method) \(request.uri) -> \(head.status.code) \(head.headerFields[.location] ?? "")")
        let headers = head.headerFields
        // Every answer of the guarded routes carries the security headers (the router's own
        // empty 404 for a path no route has does not pass the guard).
        if !(head.status == .notFound && body.isEmpty), let missing = securityHeaders.first(where: { headers[$0] == nil }) {
            finding("a \(head.status.code) answer without \(missing)")
        }
        // A form's redirect goes back to a page of this server (the token's redirect, which sets
        // the cookie, goes to the path the link named).
        if let location = headers[.location], headers[.setCookie] == nil,
           !location.hasPrefix("/") || location.hasPrefix("//") || location.hasPrefix("/\\") {
            finding("a redirect away from this server: \(location)")
        }
        if body.contains(marker) { finding("the request's text came back as markup") }
    }

    static func respond(_ request: Request) async -> (HTTPResponse, String)? {
        let context = BasicRequestContext(source: .init(channel: channel, logger: logger))
        let response: Response
        do {
            response = try await responder.respond(to: request, context: context)
        } catch is any HTTPResponseError {
            return nil
        } catch {
            finding("the router threw \(error)")
        }
        let collector = BodyCollector()
        do { try await response.body.write(collector) } catch { finding("writing the answer failed: \(error)") }
        return (response.head, collector.text)
    }

    /// `METHOD TARGET [VERSION]`, `Name: value` lines, a blank line, the body; nil for what the
    /// server's HTTP parser refuses before the router (no method, a malformed field name).
    static func parse(_ input: UnsafeRawBufferPointer) -> Request? {
        var lines: [Substring] = []
        var index = input.startIndex
        var bodyStart = input.endIndex
        while index < input.endIndex {
            let end = input[index...].firstIndex(of: 0x0A) ?? input.endIndex
            var line = String(decoding: input[index..<end], as: UTF8.self)[...]
            if line.hasSuffix("\r") { line = line.dropLast() }
            index = min(end + 1, input.endIndex)
            if line.isEmpty, !lines.isEmpty {
                bodyStart = index
                break
            }
            lines.append(line)
        }
        guard let requestLine = lines.first else { return nil }
        let parts = requestLine.split(separator: " ", omittingEmptySubsequences: true)
        guard parts.count >= 2, let method = HTTPRequest.Method(String(parts[0])) else { return nil }
        var fields = HTTPFields()
        var authority: String?
        for line in lines.dropFirst() {
            guard let colon = line.firstIndex(of: ":"), let name = HTTPField.Name(String(line[..<colon])) else { return nil }
            let value = line[line.index(after: colon)...].trimmingCharacters(in: .whitespaces)
            if name == HTTPField.Name("Host")! {
                authority = value
            } else {
                fields.append(HTTPField(name: name, value: value))
            }
        }
        let body = ByteBuffer(bytes: input[bodyStart...])
        if body.readableBytes > 0 { fields[.contentLength] = String(body.readableBytes) }
        let head = HTTPRequest(method: method, scheme: "http", authority: authority, path: String(parts[1]), headerFields: fields)
        return Request(head: head, body: RequestBody(buffer: body))
    }
}

/// Collects an answer's body.
private final class BodyCollector: ResponseBodyWriter, @unchecked Sendable {
    private var buffer = ByteBuffer()
    var text: String { String(buffer: buffer) }

    func write(_ buffer: ByteBuffer) async throws {
        var buffer = buffer
        self.buffer.writeBuffer(&buffer)
    }

    func finish(_ trailingHeaders: HTTPFields?) async throws {}
}
