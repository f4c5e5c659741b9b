import Foundation
import HTTPTypes
import Hummingbird
import NIOCore
import Synchronization

/// The access rules, known once the server has its port.
final class AccessBox: @unchecked Sendable {
    private let lock = NSLock()
    private var value: WebAccess?
    var access: WebAccess? {
        get { lock.withLock { value } }
        set { lock.withLock { value = newValue } }
    }
}

/// Applies `WebAccess` to every request and adds the security headers to every answer.
struct Guard<Context: RequestContext>: RouterMiddleware {
    let state: AccessBox
    let pages: Pages
    let sent = FormsSent()

    func handle(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        var response: Response
        do {
            // Figures and dates as the browser's locale writes them, on every page this answers.
            let locale = WebLocale.preferred(request.headers[.acceptLanguage])
            response = try await WebLocale.$current.withValue(locale) { try await decide(request, context: context, next: next) }
        } catch let error as HTTPError {
            // A page nothing serves, or a form too large: a page saying so, with the same headers
            // as every other (they were an empty answer without them).
            let reason = switch error.status {
            case .notFound: "There is no page at this address. Start again from the dashboard."
            case .contentTooLarge: "The form is larger than the 64 KiB a form may be; send less."
            default: error.body ?? "The request could not be served."
            }
            response = WebServer.html(pages.problem(reason, title: error.status.reasonPhrase), status: error.status)
        }
        for (name, value) in WebAccess.securityHeaders {
            if let field = HTTPField.Name(name) { response.headers[field] = value }
        }
        return response
    }

    private func decide(_ request: Request, context: Context, next: (Request, Context) async throws -> Response) async throws -> Response {
        guard let access = state.access else { return WebServer.html(pages.problem("starting"), status: .serviceUnavailable) }
        var request = request
        var csrf: String?
        var sentBody = ""
        if request.method == .post {
            // A form with a file (multipart) only where a file is taken, and larger: read only
            // once its Host, cookie and Origin are this session's (the form's token, inside the
            // body, is checked after), so no one else has the server hold a file.
            let boundary = Multipart.paths.contains(request.uri.path) ? Multipart.boundary(contentType: request.headers[.contentType]) : nil
            if boundary != nil {
                let before = access.check(.init(
                    method: request.method.rawValue, host: request.head.authority, path: request.uri.path, token: nil,
                    cookieHeader: request.headers[.cookie], origin: request.headers[.origin], referer: request.headers[.referer],
                    csrf: access.formField))
                if case .deny(let reason) = before { return WebServer.html(pages.problem(reason, title: "Forbidden"), status: .forbidden) }
            }
            let body: ByteBuffer
            do {
                body = try await request.collectBody(upTo: boundary == nil ? Form.maxBytes : Multipart.maxBodyBytes)
            } catch {
                let limit = boundary == nil ? "the 64 KiB a form may be" : "the \(PendingFiles.maxFileBytes >> 20) MiB a file may be"
                return WebServer.html(pages.problem("The form is larger than \(limit); send less.", title: "Too large"), status: .contentTooLarge)
            }
            if let boundary {
                do {
                    // Only its token is needed here: a file's steps write nothing, so they are
                    // not in the register of forms sent (`Multipart.readingPaths`).
                    csrf = try Multipart(Array(buffer: body), boundary: boundary).text("csrf")
                } catch {
                    return WebServer.html(pages.problem("\(error)", title: "Bad request"), status: .badRequest)
                }
            } else {
                let text = String(buffer: body)
                csrf = Form(text)["csrf"]
                sentBody = text
            }
        }
        let verdict = access.check(.init(
            method: request.method.rawValue, host: request.head.authority, path: request.uri.path,
            token: request.uri.queryParameters["token"].map(String.init), cookieHeader: request.headers[.cookie],
            origin: request.headers[.origin], referer: request.headers[.referer], csrf: csrf))
        switch verdict {
        case .allow:
            // A form sent twice (a double click) is written once: the second is answered as the first was.
            // The same form (page, action and fields); another action or answer from the same page is a new sending.
            // The import's first steps only read (a check, a question): sent again, they are answered again.
            guard let id = csrf.flatMap({ WebAccess.formToken($0).form }), !Multipart.readingPaths.contains(request.uri.path) else {
                return try await next(request, context)
            }
            var hasher = Hasher()
            hasher.combine(request.uri.path)
            hasher.combine(sentBody)
            let form = "\(id):\(hasher.finalize())"
            switch sent.begin(form) {
            case .first:
                do {
                    let response = try await next(request, context)
                    sent.finish(form, location: response.status == .seeOther ? response.headers[.location] : nil)
                    return response
                } catch {
                    sent.finish(form, location: nil)
                    throw error
                }
            case .again:
                if let location = await sent.outcome(form) { return Response(status: .seeOther, headers: [.location: location]) }
                return WebServer.html(pages.problem("This form was already sent, and what it asked was done once. Go back and reload the page to send it again.",
                                                    title: "Already sent"), status: .conflict)
            }
        case .exchange(let path):
            return Response(status: .seeOther, headers: [.location: path, .setCookie: access.setCookie])
        case .deny(let reason):
            return WebServer.html(pages.problem(reason, title: "Forbidden"), status: .forbidden)
        }
    }
}

/// An `application/x-www-form-urlencoded` body's fields.
struct Form {
    /// Longest form body read.
    static let maxBytes = 64 * 1024

    private var fields: [String: String] = [:]

    init(_ body: String) {
        for pair in body.split(separator: "&") {
            let parts = pair.split(separator: "=", maxSplits: 1).map { Self.decode(String($0)) }
            if let name = parts.first, fields[name] == nil { fields[name] = parts.count > 1 ? parts[1] : "" }
        }
    }

    subscript(name: String) -> String? { fields[name] }

    /// The fields whose names start with `prefix`, by the rest of their names (`map.XXBT`).
    func prefixed(_ prefix: String) -> [String: String] {
        Dictionary(uniqueKeysWithValues: fields.compactMap { key, value in key.hasPrefix(prefix) ? (String(key.dropFirst(prefix.count)), value) : nil })
    }

    private static func decode(_ text: String) -> String {
        text.replacingOccurrences(of: "+", with: " ").removingPercentEncoding ?? text
    }
}

/// The forms sent so far, by their id (the most recent 4,096): a form whose id was sent before
/// is not written again, and gets the answer the first one got.
final class FormsSent: Sendable {
    enum Start { case first, again }

    private struct State {
        /// Each id sent: nil while the first is being answered, then where it led (if anywhere).
        var outcomes: [String: String?] = [:]
        var done: Set<String> = []
        var order: [String] = []
    }

    private let state = Mutex(State())
    static let kept = 4_096

    func begin(_ form: String) -> Start {
        state.withLock { state in
            if state.outcomes.index(forKey: form) != nil { return .again }
            state.outcomes[form] = .some(nil)
            state.order.append(form)
            if state.order.count > Self.kept {
                let oldest = state.order.removeFirst()
                state.outcomes[oldest] = nil
                state.done.remove(oldest)
            }
            return .first
        }
    }

    func finish(_ form: String, location: String?) {
        state.withLock { state in
            guard state.outcomes.index(forKey: form) != nil else { return }
            state.outcomes[form] = .some(location)
            state.done.insert(form)
        }
    }

    /// Where the first sending led, once it is answered (waiting at most five seconds).
    func outcome(_ form: String) async -> String? {
        for _ in 0..<250 {
            let found: (done: Bool, location: String?) = state.withLock { state in
                (state.done.contains(form) || state.outcomes.index(forKey: form) == nil, state.outcomes[form] ?? nil)
            }
            if found.done { return found.location }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return nil
    }
}
