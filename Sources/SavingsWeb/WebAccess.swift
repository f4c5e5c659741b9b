import Foundation

/// Who may use a running `savingsctl web`, guarded like a local notebook server.
///
/// - A random 128-bit token in the first URL is exchanged for a session cookie
///   (`HttpOnly; SameSite=Strict`); a request without that cookie is refused.
/// - The `Host` header must name the listen address or `localhost` at its port: a page of
///   another site whose name resolves to 127.0.0.1 (DNS rebinding) is refused.
/// - A state change is a POST carrying the session's CSRF token, from this origin.
///
/// The daemon's own rules (allowed users and groups, read-only groups) apply on top: the
/// server talks to savingsd over its socket with the credentials of the user who started it.
public struct WebAccess: Sendable {
    /// The token of the first URL.
    public let token: String
    /// The session cookie's value, given in exchange for the token.
    let session: String
    /// What a form must send back with a POST.
    public let csrf: String
    /// `Host` values accepted, and the origins a POST may come from.
    let hosts: Set<String>

    /// The session cookie's name: one of its own per port, since cookies ignore ports and two
    /// servers on one host (the user unit's and one started by hand) would sign each other out.
    public let cookieName: String

    /// The headers every answer carries: nothing from another origin, no framing, no sniffing,
    /// nothing cached, and a referrer for this origin only. (`no-referrer` would have the
    /// browser send `Origin: null` with the page's own forms; the token's URL is redirected
    /// away from at once, so no page's address holds it.)
    public static let securityHeaders: [(String, String)] = [
        ("Content-Security-Policy",
         "default-src 'none'; script-src 'self'; style-src 'self'; img-src 'self' data:; connect-src 'self'; "
            + "form-action 'self'; frame-ancestors 'none'; base-uri 'none'"),
        ("X-Content-Type-Options", "nosniff"),
        ("X-Frame-Options", "DENY"),
        ("Referrer-Policy", "same-origin"),
        ("Cache-Control", "no-store"),
    ]

    /// The access of a server listening on `host` at `port`, with fresh secrets.
    public init(host: String, port: Int) {
        self.init(host: host, port: port, token: Self.secret(), session: Self.secret(), csrf: Self.secret())
    }

    /// The access with the secrets given (tests, and the fuzz target `web`, whose inputs carry them).
    package init(host: String, port: Int, token: String, session: String, csrf: String) {
        self.token = token
        self.session = session
        self.csrf = csrf
        cookieName = "savings_session_\(port)"
        var hosts: Set<String> = ["localhost:\(port)", "\(Self.bracketed(host)):\(port)"]
        if host == "127.0.0.1" || host == "localhost" { hosts.insert("127.0.0.1:\(port)") }
        if host == "::1" { hosts.insert("[::1]:\(port)") }
        self.hosts = hosts
    }

    /// A random 128-bit value as 32 hexadecimal digits.
    static func secret() -> String {
        var generator = SystemRandomNumberGenerator()
        return (0..<2).map { _ in
            let value = generator.next() as UInt64
            let digits = String(value, radix: 16)
            return String(repeating: "0", count: 16 - digits.count) + digits
        }.joined()
    }

    static func bracketed(_ host: String) -> String { host.contains(":") ? "[\(host)]" : host }

    /// What a request gets.
    public enum Verdict: Equatable, Sendable {
        /// It goes on.
        case allow
        /// The first URL: answered by a redirect to `path` that sets the session cookie.
        case exchange(path: String)
        /// Refused (403), with the reason shown.
        case deny(String)
    }

    /// The parts of a request the rules look at.
    public struct Request: Sendable {
        public var method: String
        public var host: String?
        public var path: String
        public var token: String?
        public var cookieHeader: String?
        public var origin: String?
        public var referer: String?
        /// The form's CSRF field, for a POST.
        public var csrf: String?

        public init(method: String, host: String?, path: String, token: String?, cookieHeader: String?, origin: String?,
                    referer: String?, csrf: String?) {
            self.method = method
            self.host = host
            self.path = path
            self.token = token
            self.cookieHeader = cookieHeader
            self.origin = origin
            self.referer = referer
            self.csrf = csrf
        }
    }

    /// The verdict on `request` (a POST's form already read into `csrf`).
    public func check(_ request: Request) -> Verdict {
        guard let host = request.host?.lowercased(), hosts.contains(host) else {
            return .deny("this address is not served here (Host: \(request.host ?? "none"))")
        }
        if let token = request.token {
            guard request.method == "GET", Self.same(token, self.token) else { return .deny("the link's token is not this server's") }
            return .exchange(path: request.path)
        }
        guard let cookie = Self.cookie(cookieName, in: request.cookieHeader), Self.same(cookie, session) else {
            return .deny("open the link savingsctl web printed (it holds the token)")
        }
        if request.method == "GET" || request.method == "HEAD" { return .allow }
        guard request.method == "POST" else { return .deny("\(request.method) is not served") }
        // The browser names where a POST comes from; it must be this server.
        guard let from = request.origin ?? request.referer.flatMap(Self.origin(of:)), hosts.contains(where: { "http://\($0)" == from.lowercased() }) else {
            return .deny("a change must come from this page (Origin: \(request.origin ?? "none"))")
        }
        // The form's token is the session's, then (in pages this server rendered) a dot and the
        // form's own id, which `FormsSent` uses to write a form sent twice once.
        guard let csrf = request.csrf.map(Self.formToken), Self.same(csrf.token, self.csrf) else {
            return .deny("the form's token is missing or stale: reload the page")
        }
        return .allow
    }

    /// A form's `csrf` field: the session's token, and the form's id after a dot where it has one.
    static func formToken(_ field: String) -> (token: String, form: String?) {
        guard let dot = field.firstIndex(of: ".") else { return (field, nil) }
        return (String(field[..<dot]), String(field[field.index(after: dot)...]))
    }

    /// The value of a rendered form's `csrf` field: the session's token and a new form id.
    public var formField: String { "\(csrf).\(Self.secret().prefix(16))" }

    /// The `Set-Cookie` value giving the session.
    public var setCookie: String { "\(cookieName)=\(session); HttpOnly; SameSite=Strict; Path=/" }

    /// A cookie's value in a `Cookie` header.
    static func cookie(_ name: String, in header: String?) -> String? {
        guard let header else { return nil }
        for part in header.split(separator: ";") {
            let pair = part.trimmingCharacters(in: .whitespaces)
            if pair.hasPrefix(name + "=") { return String(pair.dropFirst(name.count + 1)) }
        }
        return nil
    }

    /// `scheme://host[:port]` of a URL.
    static func origin(of url: String) -> String? {
        guard let components = URLComponents(string: url), let scheme = components.scheme, let host = components.host else { return nil }
        let port = components.port.map { ":\($0)" } ?? ""
        return "\(scheme)://\(bracketed(host))\(port)"
    }

    /// Compares secrets in time independent of where they differ.
    static func same(_ a: String, _ b: String) -> Bool {
        let x = Array(a.utf8), y = Array(b.utf8)
        guard x.count == y.count else { return false }
        var difference: UInt8 = 0
        for index in x.indices { difference |= x[index] ^ y[index] }
        return difference == 0
    }
}
