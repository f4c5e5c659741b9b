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
        try await pace?.take(cost)
        let path = "/0/private/" + endpoint
        let nonce = await nonces.next()
        let request: (body: String, headers: [(String, String)])
        do {
            request = try KrakenAnswers.request(path: path, parameters: parameters, nonce: nonce, key: key, secret: secret)
        } catch {
            throw ProviderFailure("the credential's Kraken secret is not base64 (copy the private key as Kraken shows it)")
        }
        let answer = try await http.send(.POST, base + path, headers: request.headers, body: Array(request.body.utf8))
        switch answer.status {
        case 200: break
        case 500...599: throw ProviderFailure("Kraken answered HTTP \(answer.status)", retryAfter: 60)
        default: throw ProviderFailure("Kraken answered HTTP \(answer.status) to \(endpoint)")
        }
        let body = answer.body
        return try await OffPool.run { try KrakenAnswers.json(body, what: endpoint) }
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
        return (balances[code] ?? 0, LinkedService.krakenCurrency(code))
    }

    /// Pages of 50 from the newest, `end` pinned to the first page's newest entry so that
    /// entries arriving meanwhile do not shift the offsets; `start` (exclusive) bounds an
    /// incremental read. A deposit or withdrawal Kraken lists before crediting it has no
    /// balance yet and is listed again, with one, when credited: only that one is kept.
    ///
    /// One request is in flight at a time (Kraken wants nonces in order), but the next page is
    /// asked for as soon as one arrives, while the rows read so far are stored; rows are stored
    /// a thousand at a time, each batch with where a stopped read goes on (and what was read
    /// when a page fails).
    func history(since: Date?, resume: String?, store: @escaping @Sendable ([LinkedRow], _ cursor: String?) async throws -> Void) async throws -> Set<String>? {
        var cursor = resume.flatMap(Cursor.init) ?? Cursor(start: since.map { String(Int64($0.timeIntervalSince1970)) }, end: nil, offset: 0)
        var listed = Set<String>()
        var batch: [LinkedRow] = []
        var page = try await ledgerPage(cursor)
        if cursor.end == nil { cursor.end = page.entries.first?.id }
        while true {
            cursor.offset += page.entries.count
            let done = page.entries.isEmpty || cursor.offset >= page.count
            // The next page is on its way while this one is taken in.
            let next: Task<(entries: [KrakenAnswers.Entry], count: Int), any Error>? = done ? nil : Task { [cursor] in try await ledgerPage(cursor) }
            listed.formUnion(page.entries.map(\.id))
            batch += page.entries.filter { $0.asset == code }.compactMap(Self.row)
            if done || batch.count >= Self.batch {
                do {
                    try await store(batch, done ? nil : cursor.text)
                } catch {
                    next?.cancel()
                    throw error
                }
                batch = []
            }
            guard let next else { break }
            do {
                page = try await withTaskCancellationHandler { try await next.value } onCancel: { next.cancel() }
            } catch {
                // What was read before the failure is kept, and the next sync goes on after it.
                if !batch.isEmpty, !Task.isCancelled { try? await store(batch, cursor.text) }
                throw error
            }
            guard listed.count <= 10_000_000 else { throw ProviderFailure("Kraken's ledger goes on beyond ten million entries") }
        }
        return resume == nil ? listed : nil
    }

    /// Rows stored in one database transaction.
    static let batch = 1000

    private func ledgerPage(_ cursor: Cursor) async throws -> (entries: [KrakenAnswers.Entry], count: Int) {
        var parameters = [("asset", code)]
        if let start = cursor.start { parameters.append(("start", start)) }
        if let end = cursor.end { parameters.append(("end", end)) }
        parameters.append(("ofs", String(cursor.offset)))
        let answer = try await call("Ledgers", parameters, cost: 2)
        return try await OffPool.run { try KrakenAnswers.ledgers(answer) }
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
