import Foundation
import NIOHTTP1
import SavingsCore
import SavingsRPC
import SavingsStore

/// A linked Kraken account: one asset code's ledger (https://docs.kraken.com/api/docs/rest-api/get-ledgers),
/// its balance (https://docs.kraken.com/api/docs/rest-api/get-account-balance), and what the
/// key may do (https://docs.kraken.com/api/docs/rest-api/get-api-key-info). Calls are paced
/// by the key's call counter and signed with a nonce that always increases.
struct KrakenSession: LinkedSession {
    let base: String
    /// Kraken's asset code (`XXBT`).
    let code: String
    let key: String
    let secret: String
    let http: ProviderHTTP
    let nonces: NonceSource
    let pace: CallPace?

    /// Ledger and trade history calls count 2 against the counter, the others 1.
    private func call(_ endpoint: String, _ parameters: [(String, String)] = [], cost: Double = 1) async throws -> JSONValue {
        let body = try await fetch(endpoint, parameters, cost: cost)
        return try await OffPool.run { try KrakenAnswers.json(body, what: endpoint) }
    }

    /// One call, paced, its answer's body as it came.
    private func fetch(_ endpoint: String, _ parameters: [(String, String)], cost: Double) async throws -> [UInt8] {
        try await pace?.take(cost)
        let request = try signed(endpoint, parameters)
        return try Self.body(try await http.send(request.method, request.url, headers: request.headers, body: request.body), endpoint)
    }

    /// A call signed now, with the newest nonce.
    private func signed(_ endpoint: String, _ parameters: [(String, String)]) throws -> (url: String, method: HTTPMethod, headers: [(String, String)], body: [UInt8]) {
        let path = "/0/private/" + endpoint
        let request: (body: String, headers: [(String, String)])
        do {
            request = try KrakenAnswers.request(path: path, parameters: parameters, nonce: nonces.next(), key: key, secret: secret)
        } catch {
            throw ProviderFailure("the credential's Kraken secret is not base64 (copy the private key as Kraken shows it)")
        }
        return (base + path, .POST, request.headers, Array(request.body.utf8))
    }

    /// An answer's body, or what its HTTP status means.
    private static func body(_ answer: ServiceAnswer, _ endpoint: String) throws -> [UInt8] {
        switch answer.status {
        case 200: return answer.body
        case 429, 418: throw ProviderFailure("Kraken asked to wait (HTTP \(answer.status))", retryAfter: ProviderHTTP.retryAfter(answer.header("Retry-After"), now: Date()) ?? 60)
        case 500...599: throw ProviderFailure("Kraken answered HTTP \(answer.status)", retryAfter: 60)
        default: throw ProviderFailure("Kraken answered HTTP \(answer.status) to \(endpoint)")
        }
    }

    func powers() async throws -> [String]? {
        let result: JSONValue
        do {
            result = try KrakenAnswers.result(try await call("GetApiKeyInfo"), what: "GetApiKeyInfo")
        } catch let failure as ProviderFailure where failure.retryAfter == nil && failure.description.hasPrefix("Kraken answered") {
            // An older API without the method: Kraken does not say.
            return nil
        }
        guard let permissions = result["permissions"]?.arrayValue else { return nil }
        return Self.powers(permissions.compactMap(\.stringValue))
    }

    /// The permissions beyond reading: any that is not a query (`query-funds`,
    /// `query-ledger-entries`, ...) and names funds moving or orders (`withdraw-funds`,
    /// `modify-trades`, `cancel-close-trades`).
    static func powers(_ permissions: [String]) -> [String] {
        permissions.filter { !$0.hasPrefix("query-") && ["withdraw", "trade", "order"].contains(where: $0.contains) }.map { String($0.prefix(40)) }
    }

    func account() async throws -> (balance: Decimal, currency: String?) {
        let balances = try KrakenAnswers.balances(try await call("Balance"))
        // A code the key's account does not hold at all is a wrong code, not a balance of zero
        // (Kraken lists the assets an account has held, at zero too).
        guard let balance = balances[code] else {
            let listed = balances.keys.sorted().prefix(20).joined(separator: ", ")
            throw ProviderFailure("Kraken lists no '\(code)' for this key" + (listed.isEmpty ? "" : " (it lists \(listed)); link the code it uses"))
        }
        return (balance, LinkedService.krakenCurrency(code))
    }

    /// Pages of 50 from the newest, `end` pinned to the first page's newest entry so that
    /// entries arriving meanwhile do not shift the offsets; `start` (exclusive) bounds an
    /// incremental read. A deposit or withdrawal Kraken lists before crediting it has no
    /// balance yet and is listed again, with one, when credited: only that one is kept.
    ///
    /// Kraken wants a key's nonces in order, so one request is in flight at a time. Once the
    /// first page has told the count, unpaced calls go back to back (`RequestChain`): each next
    /// page is asked for as soon as an answer arrives, while answers are read and rows stored.
    /// Rows are stored a thousand at a time, one batch after another, each with where a
    /// stopped read goes on; a failure keeps what was read before it.
    func history(since: Date?, resume: String?, store: @escaping @Sendable ([LinkedRow], _ cursor: String?) async throws -> Void) async throws -> Set<String>? {
        var cursor = resume.flatMap(Cursor.init) ?? Cursor(start: since.map { String(Int64($0.timeIntervalSince1970)) }, end: nil, offset: 0)
        var listed = Set<String>()
        var batch: [LinkedRow] = []
        var storing: Task<Void, any Error>?
        var count = 0
        let code = self.code
        /// Hands the batch to the store once the one before it is stored (one at a time, so
        /// memory stays bounded; a failed store stops the read before anything later is stored).
        func flush(_ cursor: String?) async throws {
            try await storing?.value
            let rows = batch
            batch = []
            storing = Task { try await store(rows, cursor) }
        }
        /// Takes in pages that came one after another (read in one go off the serving pool);
        /// true when the last was taken. Pages after a short one are left: their offsets assumed
        /// a full page before them.
        func take(_ answers: [[UInt8]]) async throws -> Bool {
            let pages = try await OffPool.run { () throws -> [(ids: [String], rows: [LinkedRow], count: Int, newest: String?)] in
                try answers.map { bytes in
                    let page = try KrakenAnswers.ledgers(try KrakenAnswers.json(bytes, what: "Ledgers"))
                    return (page.entries.map(\.id), page.entries.filter { $0.asset == code }.compactMap(Self.row), page.count, page.entries.first?.id)
                }
            }
            var done = false
            for page in pages {
                if cursor.end == nil { cursor.end = page.newest }
                count = page.count
                cursor.offset += page.ids.count
                listed.formUnion(page.ids)
                batch += page.rows
                guard listed.count <= 10_000_000 else { throw ProviderFailure("Kraken's ledger goes on beyond ten million entries") }
                done = page.ids.isEmpty || cursor.offset >= page.count
                if done || batch.count >= Self.batch { try await flush(done ? nil : cursor.text) }
                if done || page.ids.count != Self.pageSize { break }
            }
            return done
        }
        do {
            var done = try await take([try await fetch("Ledgers", ledgerParameters(cursor), cost: 2)])
            if !done, pace == nil, let client = http.client {
                let from = cursor, total = count
                let chain = RequestChain(client: client, maxBody: Self.maxPageBytes) { index in
                    let offset = from.offset + index * Self.pageSize
                    guard offset < total else { return nil }
                    return try signed("Ledgers", ledgerParameters(Cursor(start: from.start, end: from.end, offset: offset)))
                }
                defer { chain.cancel() }
                var expected = from.offset
                while !done {
                    let answers = try await chain.next()
                    guard !answers.isEmpty else { break }
                    done = try await take(try answers.map { try Self.body($0, "Ledgers") })
                    expected += answers.count * Self.pageSize
                    // A short page before the end: the pages asked for ahead no longer fit.
                    if !done, cursor.offset != expected { break }
                }
            }
            while !done { done = try await take([try await fetch("Ledgers", ledgerParameters(cursor), cost: 2)]) }
            try await storing?.value
        } catch {
            // What was read before the failure is kept, and the next sync goes on after it.
            if !Task.isCancelled {
                if !batch.isEmpty { try? await flush(cursor.text) }
                try? await storing?.value
            }
            throw error
        }
        return resume == nil ? listed : nil
    }

    /// Kraken's page, the largest answer a page may be (50 entries are ~12 KiB; 16 may wait
    /// unread), and the rows stored in one database transaction.
    static let pageSize = 50
    static let maxPageBytes = 1 << 20
    static let batch = 1000

    private func ledgerParameters(_ cursor: Cursor) -> [(String, String)] {
        var parameters = [("asset", code)]
        if let start = cursor.start { parameters.append(("start", start)) }
        if let end = cursor.end { parameters.append(("end", end)) }
        parameters.append(("ofs", String(cursor.offset)))
        return parameters
    }

    /// An entry as stored, or nil for a listing that is not yet credited.
    static func row(_ entry: KrakenAnswers.Entry) -> LinkedRow? {
        if ["deposit", "withdrawal"].contains(entry.type), entry.balance == nil { return nil }
        return LinkedRow(id: entry.id, date: entry.date, amount: entry.net, note: "Kraken \(entry.type)")
    }

    /// Where a stopped read goes on: its window and the offset reached.
    struct Cursor {
        var start: String?
        var end: String?
        var offset: Int

        init(start: String?, end: String?, offset: Int) {
            self.start = start
            self.end = end
            self.offset = offset
        }

        init?(_ text: String) {
            var fields: [String: String] = [:]
            for part in text.split(separator: ";") {
                let pair = part.split(separator: "=", maxSplits: 1).map(String.init)
                guard pair.count == 2 else { return nil }
                fields[pair[0]] = pair[1]
            }
            guard let offset = fields["ofs"].flatMap(Int.init), offset >= 0 else { return nil }
            self.init(start: fields["start"], end: fields["end"], offset: offset)
        }

        var text: String {
            ([start.map { "start=\($0)" }, end.map { "end=\($0)" }].compactMap { $0 } + ["ofs=\(offset)"]).joined(separator: ";")
        }
    }
}
