import AsyncHTTPClient
import Foundation
import NIOCore
import NIOHTTP1
import NIOPosix
import SavingsCore
import Synchronization

/// One linked account at its service, for one sync (issue 50): what the key may do, the
/// account's balance and currency, and its history page by page. Every answer is hostile
/// input: bounded before it is read, and read off the serving pool.
protocol LinkedSession: Sendable {
    /// What the key may do beyond reading (trade, withdraw), in the service's words; nil when
    /// the service does not say.
    func powers() async throws -> [String]?
    /// The account's balance now, and its currency where the service names one.
    func account() async throws -> (balance: Decimal, currency: String?)
    /// The rows dated after `since` (every row when nil), page by page: `store` keeps each
    /// page with where a run stopped after it goes on. A run given `resume` (a cursor a
    /// stopped run stored) goes on there and ignores `since`. Returns the ids of every row
    /// listed, or nil when the run read only part of the window (a resumed one).
    func history(since: Date?, resume: String?, store: @escaping @Sendable ([LinkedRow], _ cursor: String?) async throws -> Void) async throws -> Set<String>?
    /// What the service said beside its answers in this sync (SimpleFIN's errors: a bank that
    /// wants you to sign in again), shown as the link's last error though the sync went on.
    func notices() async -> [String]
}

extension LinkedSession {
    func notices() async -> [String] { [] }
}

/// A signed call's answer: its status, headers and body (at most the transport's limit).
struct ServiceAnswer: Sendable {
    var status: Int
    var headers: [(String, String)]
    var body: [UInt8]

    func header(_ name: String) -> String? { headers.first { $0.0.lowercased() == name.lowercased() }?.1 }
}

extension ProviderHTTP {
    /// One request to a service's API, no redirect followed (a signature is for one URL).
    /// Every status comes back with its body (the services explain refusals there) except 429
    /// and 418, which throw with the wait the service asked for.
    func send(_ method: HTTPMethod, _ url: String, headers: [(String, String)], body: [UInt8]? = nil) async throws -> ServiceAnswer {
        let client: HTTPClient
        switch transport {
        case .answers(let answer):
            let bytes = try await answer(url)
            guard bytes.count <= maxBody else { throw ProviderFailure("the answer is larger than \(maxBody) bytes") }
            return ServiceAnswer(status: 200, headers: [], body: bytes)
        case .client(let found): client = found
        }
        let deadline = NIODeadline.now() + Self.answerTimeout
        var request = HTTPClientRequest(url: url)
        request.method = method
        request.headers.add(name: "Accept", value: "application/json")
        request.headers.add(name: "User-Agent", value: "savingsd")
        for (name, value) in headers { request.headers.add(name: name, value: value) }
        if let body { request.body = .bytes(ByteBuffer(bytes: body)) }
        let response: HTTPClientResponse
        do {
            response = try await client.execute(request, deadline: min(deadline, NIODeadline.now() + Self.requestTimeout))
        } catch {
            // The error's own text may name the address; the host alone is enough.
            throw ProviderFailure("the request to \(URL(string: url)?.host ?? "the service") failed (\(Self.reason(error)))", retryAfter: nil)
        }
        let answerHeaders = response.headers.map { ($0.name, $0.value) }
        if response.status.code == 429 || response.status.code == 418 {
            let wait = Self.retryAfter(response.headers.first(name: "Retry-After"), now: Date()) ?? 60
            throw ProviderFailure("the service asked to wait (HTTP \(response.status.code))", retryAfter: wait)
        }
        return ServiceAnswer(status: Int(response.status.code), headers: answerHeaders,
                             body: try await Self.collect(response, upTo: maxBody, deadline: deadline))
    }

    /// A transport error in a few words, without the URL it may carry.
    static func reason(_ error: any Error) -> String {
        if let client = error as? HTTPClientError {
            if client == .connectTimeout || client == .readTimeout || client == .deadlineExceeded { return "timed out" }
            if client == .remoteConnectionClosed { return "connection closed" }
        }
        if error is NIOConnectionError { return "cannot connect" }
        return "connection failed"
    }
}

/// Nonces that always increase (Kraken refuses a nonce not above the last it saw for the key):
/// milliseconds since 1970, or one more than the last when the clock has not moved on.
final class NonceSource: Sendable {
    private let last = Mutex<UInt64>(0)

    func next() -> UInt64 {
        last.withLock { last in
            last = max(UInt64(Date().timeIntervalSince1970 * 1000), last + 1)
            return last
        }
    }
}

/// A service's call counter as the client keeps it, so calls wait rather than be refused: the
/// counter rises by each call's cost and decays at a steady rate; a call that would pass the
/// maximum waits until it would not.
actor CallPace {
    let maximum: Double
    let decayPerSecond: Double
    private var counter: Double = 0
    private var at = ContinuousClock.now

    init(maximum: Double, decayPerSecond: Double) {
        self.maximum = maximum
        self.decayPerSecond = decayPerSecond
    }

    /// Waits until a call of `cost` fits, then counts it.
    func take(_ cost: Double) async throws {
        while true {
            let now = ContinuousClock.now
            counter = max(0, counter - (now - at) / .seconds(1) * decayPerSecond)
            at = now
            if counter + cost <= maximum { break }
            try await Task.sleep(for: .milliseconds(Int((counter + cost - maximum) / decayPerSecond * 1000) + 1))
        }
        counter += cost
    }
}

/// A credential's text split into what a service needs. Errors name the credential only.
enum LinkedCredential {
    /// Kraken and Binance: the API key on the first line, the secret on the second.
    static func keyAndSecret(_ secret: Secret, service: LinkedService) throws -> (key: String, secret: String) {
        let lines = secret.reveal().split(whereSeparator: \.isNewline).map { $0.trimmingCharacters(in: .whitespaces) }.filter { !$0.isEmpty }
        guard lines.count == 2, lines.allSatisfy({ $0.utf8.count <= 512 && !$0.contains(" ") }) else {
            throw ProviderFailure("the credential '\(secret.name)' is not a \(service.title) key: write the API key on its first line and the secret on its second")
        }
        return (lines[0], lines[1])
    }
}
