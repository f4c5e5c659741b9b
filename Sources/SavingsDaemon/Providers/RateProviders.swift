import AsyncHTTPClient
import Foundation
import NIOCore
import NIOPosix
import SavingsCore
import SavingsRPC
import SavingsStore

/// Why a provider's refresh failed; `retryAfter` is the server's own request to wait (HTTP 429).
struct ProviderFailure: Error, CustomStringConvertible {
    var description: String
    var retryAfter: TimeInterval?

    init(_ description: String, retryAfter: TimeInterval? = nil) {
        self.description = description
        self.retryAfter = retryAfter
    }
}

/// A source of exchange rates. A provider returns every rate of one refresh or throws; a
/// refresh is stored all together or not at all.
protocol RateProvider: Sendable {
    var name: String { get }
    func fetch(needs: RateNeeds, now: Date) async throws -> [ExchangeRate]
}

/// The `file` provider: `{"rates": [{"base", "quote", "rate", "as_of"}]}`, re-read on each refresh.
struct FileRateProvider: RateProvider {
    let path: String
    let name = "file"
    static let maxBytes = 4 << 20

    func fetch(needs: RateNeeds, now: Date) async throws -> [ExchangeRate] {
        let data: Data
        do {
            data = try Data(contentsOf: URL(fileURLWithPath: path))
        } catch {
            throw ProviderFailure("cannot read the rates file: \(error.localizedDescription)")
        }
        guard data.count <= Self.maxBytes else { throw ProviderFailure("the rates file is larger than \(Self.maxBytes) bytes") }
        guard let document = try? JSONParser.parse(Array(data)), let items = document["rates"]?.arrayValue else {
            throw ProviderFailure("the rates file is not a JSON object with a \"rates\" array")
        }
        return try items.enumerated().map { index, item in
            do {
                guard let base = item["base"]?.stringValue, let quote = item["quote"]?.stringValue else {
                    throw ProviderFailure("base and quote are required")
                }
                let rateText: String
                switch item["rate"] {
                case .string(let text)?: rateText = text
                case .number(let literal)?: rateText = literal
                default: throw ProviderFailure("rate must be a decimal string or number")
                }
                let asOf = try item["as_of"]?.stringValue.map { try Timestamp.parse($0, field: "as_of") } ?? now
                return ExchangeRate(base: try CurrencyCode(base, field: "base"), quote: try CurrencyCode(quote, field: "quote"),
                                    rate: try ExchangeRate.validRate(rateText), asOf: asOf, provider: name, fetchedAt: now)
            } catch {
                throw ProviderFailure("rates[\(index)]: \(error)")
            }
        }
    }
}

/// GET requests to outside services (rate providers, block explorers): bounded time for the
/// whole answer (headers and body), bounded size, no redirect to another host, statuses turned
/// into failures.
struct ProviderHTTP: Sendable {
    /// Where answers come from: the daemon's HTTP client, or a function of the URL (the fuzzer
    /// feeds the providers' parsers that way, without sockets).
    enum Transport: Sendable {
        case client(HTTPClient)
        case answers(@Sendable (String) async throws -> [UInt8])
    }

    let transport: Transport
    /// Largest answer read: rate answers are small; a block explorer's page of a thousand
    /// transactions with their inputs and outputs is several megabytes.
    var maxBody = 1 << 20
    /// Until the headers arrive.
    static let requestTimeout = TimeAmount.seconds(20)
    /// Until the last byte of the body has arrived: an answer that trickles is given up.
    static let answerTimeout = TimeAmount.seconds(30)
    /// Redirects followed, each to the same scheme, host and port only.
    static let maxRedirects = 3

    init(client: HTTPClient, maxBody: Int = 1 << 20) {
        transport = .client(client)
        self.maxBody = maxBody
    }

    init(maxBody: Int = 1 << 20, answers: @escaping @Sendable (String) async throws -> [UInt8]) {
        transport = .answers(answers)
        self.maxBody = maxBody
    }

    /// The same transport with another size limit.
    func limited(to maxBody: Int) -> ProviderHTTP {
        var copy = self
        copy.maxBody = maxBody
        return copy
    }

    /// The client, for one made alike with a proxy.
    var client: HTTPClient? {
        if case .client(let client) = transport { return client }
        return nil
    }

    /// The configuration for the daemon's client: short connect and read timeouts, and no
    /// redirect followed by the client itself (`get` follows those that stay on the same host,
    /// so what is watched is never sent to a host the configuration does not name).
    static var configuration: HTTPClient.Configuration {
        var configuration = HTTPClient.Configuration(
            redirectConfiguration: .disallow,
            timeout: .init(connect: .seconds(5), read: .seconds(15)))
        configuration.connectionPool = .init(idleTimeout: .seconds(30))
        return configuration
    }

    func get(_ url: String, headers: [(String, String)] = []) async throws -> [UInt8] {
        let client: HTTPClient
        switch transport {
        case .answers(let answer):
            let bytes = try await answer(url)
            guard bytes.count <= maxBody else { throw ProviderFailure("the answer is larger than \(maxBody) bytes") }
            return bytes
        case .client(let found): client = found
        }
        let deadline = NIODeadline.now() + Self.answerTimeout
        var url = url
        for _ in 0...Self.maxRedirects {
            var request = HTTPClientRequest(url: url)
            request.headers.add(name: "Accept", value: "application/json")
            request.headers.add(name: "User-Agent", value: "savingsd")
            for (name, value) in headers { request.headers.add(name: name, value: value) }
            let response: HTTPClientResponse
            do {
                response = try await client.execute(request, deadline: min(deadline, NIODeadline.now() + Self.requestTimeout))
            } catch {
                throw ProviderFailure("request failed: \(error)")
            }
            switch response.status.code {
            case 200:
                return try await Self.collect(response, upTo: maxBody, deadline: deadline)
            case 301, 302, 303, 307, 308:
                let location = response.headers.first(name: "Location") ?? ""
                guard let next = Self.sameOrigin(location, from: url) else {
                    throw ProviderFailure("HTTP \(response.status.code): the service redirects to another host, which savingsd does not follow (set url to where it lives now)")
                }
                url = next
            case 429:
                throw ProviderFailure("rate limited (HTTP 429)", retryAfter: Self.retryAfter(response.headers.first(name: "Retry-After"), now: Date()))
            default:
                throw ProviderFailure("HTTP \(response.status.code) \(response.status.reasonPhrase)")
            }
        }
        throw ProviderFailure("more than \(Self.maxRedirects) redirects")
    }

    /// The body, at most `limit` bytes, all of it by `deadline`: reading stops there (the
    /// request is cancelled, which closes its connection).
    static func collect(_ response: HTTPClientResponse, upTo limit: Int, deadline: NIODeadline) async throws -> [UInt8] {
        let body = response.body
        // Room for what the answer says it holds, within the limit; each part is copied once,
        // into place (a buffer grown by doubling, then copied out, copied twice and faulted in
        // fresh pages for every large answer: about a third of the samples of the tasks that
        // drive a first sync's walk, in a profile of it).
        let expected = response.headers.first(name: "Content-Length").flatMap { Int($0, radix: 10) }
        let reading = Task { () throws -> [UInt8] in
            if let expected, expected > limit { throw NIOTooManyBytesError(maxBytes: limit) }
            var bytes: [UInt8] = []
            bytes.reserveCapacity(max(0, expected ?? 0))
            for try await part in body {
                guard part.readableBytes <= limit - bytes.count else { throw NIOTooManyBytesError(maxBytes: limit) }
                bytes.append(contentsOf: part.readableBytesView)
            }
            return bytes
        }
        // A timer on an event loop, not a task of its own: cheaper for the many small answers.
        let timer = MultiThreadedEventLoopGroup.singleton.any().scheduleTask(deadline: deadline) { reading.cancel() }
        defer { timer.cancel() }
        do {
            return try await withTaskCancellationHandler { try await reading.value } onCancel: { reading.cancel() }
        } catch is NIOTooManyBytesError {
            throw ProviderFailure("the answer is larger than \(limit) bytes")
        } catch {
            if NIODeadline.now() >= deadline {
                throw ProviderFailure("the answer did not arrive within \(answerTimeout.nanoseconds / 1_000_000_000) s")
            }
            throw ProviderFailure("reading the answer failed: \(error)")
        }
    }

    /// A redirect's target when it stays on the scheme, host and port of `url` (a relative
    /// `Location` does); nil otherwise.
    static func sameOrigin(_ location: String, from url: String) -> String? {
        guard let base = URL(string: url), let target = URL(string: location, relativeTo: base)?.absoluteURL else { return nil }
        func origin(_ url: URL) -> String? {
            guard let scheme = url.scheme?.lowercased(), let host = url.host?.lowercased() else { return nil }
            let port = url.port ?? (scheme == "https" ? 443 : 80)
            return "\(scheme)://\(host):\(port)"
        }
        guard let from = origin(base), from == origin(target) else { return nil }
        return target.absoluteString
    }

    /// `Retry-After` as seconds from now: delta-seconds or an HTTP date; nil when absent or unreadable.
    static func retryAfter(_ header: String?, now: Date) -> TimeInterval? {
        guard let header = header?.trimmingCharacters(in: .whitespaces), !header.isEmpty else { return nil }
        if let seconds = Int(header) { return TimeInterval(max(0, seconds)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        return formatter.date(from: header).map { max(0, $0.timeIntervalSince(now)) }
    }
}

/// CoinGecko's simple-price API: one request for every crypto currency the data uses.
struct CoinGeckoProvider: RateProvider {
    let http: ProviderHTTP
    let baseURL: String
    let ids: [String: String]
    let apiKeyFile: String?
    let name = "coingecko"

    /// Pro keys go to the pro host in their own header; everything else is a demo key.
    var apiKeyHeader: String { baseURL.contains("pro-api.") ? "x-cg-pro-api-key" : "x-cg-demo-api-key" }

    func fetch(needs: RateNeeds, now: Date) async throws -> [ExchangeRate] {
        guard let query = needs.coinGeckoQuery(ids: ids), !query.symbolsByID.isEmpty else { return [] }
        let url = "\(baseURL)/simple/price?ids=\(query.ids.joined(separator: ","))"
            + "&vs_currencies=\(query.vsCurrencies.map { $0.code.lowercased() }.joined(separator: ","))&include_last_updated_at=true"
        var headers: [(String, String)] = []
        if let key = try apiKey() { headers.append((apiKeyHeader, key)) }
        let body = try await http.get(url, headers: headers)
        // Read off the serving pool: an answer of up to 1 MiB is the service's to choose.
        return try await OffPool.run { try Self.parse(body, query: query, now: now) }
    }

    /// The key from `api_key_file`, read on every refresh so a rotated key is picked up. Its
    /// content never appears in an error.
    func apiKey() throws -> String? {
        guard let apiKeyFile else { return nil }
        guard let data = FileManager.default.contents(atPath: apiKeyFile), data.count <= 4096,
              let text = String(data: data, encoding: .utf8) else {
            throw ProviderFailure("cannot read the API key file")
        }
        let key = text.trimmingCharacters(in: .whitespacesAndNewlines)
        guard !key.isEmpty, key.unicodeScalars.allSatisfy({ $0.value > 32 && $0.value < 127 }) else {
            throw ProviderFailure("the API key file does not hold a key (one line of printable characters)")
        }
        return key
    }

    /// `{"bitcoin": {"eur": 50000.0, "last_updated_at": 1763600000}, ...}`. Any malformed price
    /// fails the whole answer; coins or currencies the service left out stay missing.
    static func parse(_ body: [UInt8], query: CoinGeckoQuery, now: Date) throws -> [ExchangeRate] {
        guard let document = try? JSONParser.parse(body), case .object(let coins) = document else {
            throw ProviderFailure("the answer is not a JSON object")
        }
        var rates: [ExchangeRate] = []
        for (id, symbols) in query.symbolsByID.sorted(by: { $0.key < $1.key }) {
            guard let entry = coins[id] else { continue }
            guard case .object(let prices) = entry else { throw ProviderFailure("\(id): not an object of prices") }
            var asOf = now
            if case .number(let literal)? = prices["last_updated_at"], let seconds = Int(literal), seconds > 0 {
                asOf = min(now, Date(timeIntervalSince1970: TimeInterval(seconds)))
            }
            for quote in query.vsCurrencies {
                guard let price = prices[quote.code.lowercased()] else { continue }
                guard case .number(let literal) = price, let rate = try? ExchangeRate.validRate(literal) else {
                    throw ProviderFailure("\(id).\(quote.code.lowercased()): not a positive number")
                }
                for symbol in symbols where symbol != quote {
                    rates.append(ExchangeRate(base: symbol, quote: quote, rate: rate, asOf: asOf, provider: "coingecko", fetchedAt: now))
                }
            }
        }
        guard !rates.isEmpty else { throw ProviderFailure("the answer holds none of the requested prices") }
        return rates
    }
}

/// Frankfurter (European Central Bank reference rates): one request from the pivot to every
/// other fiat currency the data uses.
struct FrankfurterProvider: RateProvider {
    let http: ProviderHTTP
    let baseURL: String
    let display: CurrencyCode
    let name = "frankfurter"

    func fetch(needs: RateNeeds, now: Date) async throws -> [ExchangeRate] {
        guard let query = needs.frankfurterQuery(display: display) else { return [] }
        let url = "\(baseURL)/latest?from=\(query.base.code)&to=\(query.targets.map(\.code).joined(separator: ","))"
        let body = try await http.get(url)
        return try await OffPool.run { try Self.parse(body, query: query, now: now) }
    }

    /// `{"amount": 1.0, "base": "EUR", "date": "2026-11-20", "rates": {"USD": 1.08}}`. The rates
    /// are the ECB's of that working day, fixed at 14:15 CET (13:15 UTC).
    static func parse(_ body: [UInt8], query: FrankfurterQuery, now: Date) throws -> [ExchangeRate] {
        guard let document = try? JSONParser.parse(body), case .object(let rates)? = document["rates"] else {
            throw ProviderFailure("the answer is not an object with \"rates\"")
        }
        guard document["base"]?.stringValue == query.base.code else {
            throw ProviderFailure("the answer is for base \(document["base"]?.stringValue ?? "?"), not \(query.base.code)")
        }
        if case .number(let amount)? = document["amount"], (try? Amount.parse(amount)) != 1 {
            throw ProviderFailure("the answer is for an amount of \(amount), not 1")
        }
        guard let dateText = document["date"]?.stringValue, let day = try? CalendarDate(parsing: dateText, field: "date"),
              let fixing = try? Timestamp.parse("\(day)T13:15:00Z", field: "date") else {
            throw ProviderFailure("the answer has no valid \"date\"")
        }
        let asOf = min(now, fixing)
        var result: [ExchangeRate] = []
        for quote in query.targets {
            guard let value = rates[quote.code] else { continue }
            guard case .number(let literal) = value, let rate = try? ExchangeRate.validRate(literal) else {
                throw ProviderFailure("rates.\(quote.code): not a positive number")
            }
            result.append(ExchangeRate(base: query.base, quote: quote, rate: rate, asOf: asOf, provider: "frankfurter", fetchedAt: now))
        }
        guard !result.isEmpty else { throw ProviderFailure("the answer holds none of the requested rates") }
        return result
    }
}
