import Crypto
import Foundation
import SavingsRPC
import Testing

/// Binance, Coinbase and SimpleFIN links end to end against loopback stubs of their APIs
/// (signatures checked by the stub, windows and pages walked, the balance reconciled): each
/// history imported exactly and once, refusals said plainly, waits honoured while serving.
@Suite(.serialized) struct LinkedServicesTests {
    static func daemon(_ service: String, url: String?, credential: String) throws -> DaemonProcess {
        let directory = try makeScratchDirectory()
        try FileManager.default.createDirectory(atPath: directory + "/keys", withIntermediateDirectories: true, attributes: [.posixPermissions: 0o700])
        _ = FileManager.default.createFile(atPath: directory + "/keys/key", contents: Data(credential.utf8), attributes: [.posixPermissions: 0o600])
        var toml = "[linked]\ncredentials = \"\(directory)/keys\"\n"
        if let url { toml += "[linked.\(service)]\nurl = \"\(url)\"\n" }
        try toml.write(toFile: directory + "/savingsd.toml", atomically: true, encoding: .utf8)
        return try DaemonProcess(directory: directory, environment: ["SAVINGSD_CONFIG": directory + "/savingsd.toml", "SAVINGSD_LOG_LEVEL": "debug"])
    }

    /// Links an asset and syncs it; the sync's entry for it (whichever sync answered: the
    /// link's own, or one after it), once a second sync has added nothing.
    static func sync(_ daemon: DaemonProcess, _ service: String, account: String, currency: String) throws -> JSONValue {
        _ = try daemon.call("asset.create", ["name": "Linked", "currency": .string(currency), "kind": currency == "USD" ? "fiat" : "crypto"])
        _ = try daemon.call("asset.link", ["asset": "Linked", "service": .string(service), "account": .string(account), "credential": "key"])
        let first = try #require(try daemon.call("asset.sync", ["asset": "Linked"])["assets"]?.arrayValue?.first)
        let again = try #require(try daemon.call("asset.sync", ["asset": "Linked"])["assets"]?.arrayValue?.first)
        #expect(again["added"] == 0 && again["removed"] == [], "a second sync adds nothing: \(again)")
        return first
    }

    static func rows(_ daemon: DaemonProcess) throws -> [JSONValue] {
        try daemon.call("tx.list", ["asset": "Linked", "limit": 1000])["transactions"]?.arrayValue ?? []
    }

    @Test func binance() throws {
        let secret = "NhqPtmdSJYdKjVHjA7PZj4Mge3R5YNiP1e3UZjInClVN65XAbvqqM6A7H5fATj0j"
        let stub = try BinanceStub(key: "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A", secret: secret)
        let day: Int64 = 86_400_000, now = Int64(Date().timeIntervalSince1970 * 1000)
        stub.update {
            $0.deposits = [.init(id: "1", coin: "BTC", amount: "0.5", status: 1, insertTime: now - 400 * day),
                           .init(id: "2", coin: "BTC", amount: "0.25", status: 6, insertTime: now - 10 * day),
                           .init(id: "3", coin: "BTC", amount: "9", status: 0, insertTime: now - day)]
            $0.withdrawals = [.init(id: "a1", coin: "BTC", amount: "0.1", fee: "0.0005", status: 6, applyTime: now - 200 * day)]
            $0.balances = ["BTC": ("0.6", "0.0495")]
            $0.costs["/sapi/v1/capital/withdraw/history"] = 1
        }
        let daemon = try Self.daemon("binance", url: stub.url, credential: "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A\n\(secret)\n")
        let synced = try Self.sync(daemon, "binance", account: "BTC", currency: "BTC")
        #expect(synced["reconciled"] == true, "\(synced)\n\(daemon.log.suffix(2_000))")
        // Two credited deposits and a withdrawal with its fee; the pending deposit not.
        let rows = try Self.rows(daemon)
        #expect(rows.map { $0["amount"] } == ["0.25000000", "-0.10050000", "0.50000000"], "\(rows)")
        #expect(rows.allSatisfy { $0["source"] == "binance" })
        #expect(try daemon.call("asset.get", ["asset": "Linked"])["balance"] == "0.64950000")
        #expect(stub.http.requests(to: "/withdraw/history").count > 30, "windows of 90 days since July 2017")
        // An HTTP 429 with Retry-After: said, waited out with nothing sent, serving unaffected.
        stub.failing { _ in .rateLimited(after: 120) }
        let limited = try daemon.failure("asset.sync", ["asset": "Linked"])
        #expect(limited.kind == "provider_unavailable" && limited.data?["retry_in_seconds"] != nil, "\(limited)")
        let asked = stub.http.requests.count
        #expect(try daemon.failure("asset.sync", ["asset": "Linked"]).message.contains("asked to wait"))
        #expect(stub.http.requests.count == asked, "nothing sent while Binance asked to wait")
        #expect(try daemon.call("daemon.ping")["pong"] == true)
        #expect(try daemon.call("dashboard.get")["linked"]?["failing"] == ["Linked"])
        stub.failing(nil)

        let other = try Self.daemon("binance", url: stub.url, credential: "vmPUZE6mv9SD5VNHk4HlWFsOr6aKE2zvsw0MuIgwCIPy6utIco14y7Ju91duEh8A\nanother\n")
        _ = try other.call("asset.create", ["name": "Linked", "currency": "BTC", "kind": "crypto"])
        _ = try other.call("asset.link", ["asset": "Linked", "service": "binance", "credential": "key"])
        let refused = try other.failure("asset.sync", ["asset": "Linked"])
        #expect(refused.message.contains("refused the signature"), "\(refused)")
    }

    @Test func coinbase() throws {
        let key = P256.Signing.PrivateKey()
        let name = "organizations/0b2a/apiKeys/7c1f"
        let stub = try CoinbaseStub(keyName: name, publicKey: key.publicKey)
        stub.update {
            $0.accounts = [.init(id: "2bbf394c-193b-5b2a-9155-3b4732659ede", currency: "BTC", balance: "1.5",
                                 transactions: (0..<150).map { index in
                                     .init(id: String(format: "00000000-0000-4000-8000-%012d", index), type: "receive", status: index == 3 ? "pending" : "completed",
                                           amount: "0.01", createdAt: ISO8601DateFormatter().string(from: Date().addingTimeInterval(-Double(index + 1) * 3_600)))
                                 }),
                           .init(id: "58542935-67b5-56e1-a3f9-42686e07fa40", currency: "ETH", balance: "0")]
        }
        let credential = #"{"name": "\#(name)", "privateKey": "\#(key.pemRepresentation.replacingOccurrences(of: "\n", with: "\\n"))"}"#
        let daemon = try Self.daemon("coinbase", url: stub.url, credential: credential)
        let synced = try Self.sync(daemon, "coinbase", account: "BTC", currency: "BTC")
        #expect(synced["reconciled"] == false, "149 × 0.01 is 1.49, Coinbase says 1.5: \(synced)\n\(daemon.log.suffix(2_000))")
        #expect(try Self.rows(daemon).count == 149, "every completed transaction once, the pending one not")
        #expect(try daemon.call("asset.get", ["asset": "Linked"])["link"]?["reported_balance"] == "1.50000000")
        #expect(stub.http.requests(to: "/transactions").count >= 2, "pages of 100")
        stub.update { $0.publicKey = P256.Signing.PrivateKey().publicKey }
        let refused = try daemon.failure("asset.sync", ["asset": "Linked"])
        #expect(refused.message.contains("refused the key"), "\(refused)")
    }

    @Test func simpleFIN() throws {
        let stub = try SimpleFINStub()
        let now = Int64(Date().timeIntervalSince1970)
        stub.update {
            $0.accounts = [.init(id: "ACT-1", name: "Checking", currency: "USD", balance: "75.00", transactions: [
                .init(id: "T1", posted: now - 200 * 86_400, amount: "100.00", description: "PAYROLL"),
                .init(id: "T2", posted: now - 5 * 86_400, amount: "-25.00", description: "Uncle Frank's Bait Shop"),
                .init(id: "T3", posted: now, amount: "-1.00", description: "pending", pending: true),
            ])]
        }
        let daemon = try Self.daemon("simplefin", url: nil, credential: stub.accessURL)
        let synced = try Self.sync(daemon, "simplefin", account: "ACT-1", currency: "USD")
        #expect(synced["reconciled"] == true, "\(synced)\n\(daemon.log.suffix(2_000))")
        #expect(try Self.rows(daemon).map { $0["amount"] } == ["-25.00", "100.00"], "posted rows only")
        #expect(try Self.rows(daemon).first?["note"] == "Uncle Frank's Bait Shop")
        // Found by an outside check: the Bridge's errors beside a listed account were dropped, so
        // a bank connection that wants signing in again looked fine. They are the link's last
        // error now, and nothing is removed on the word of such an answer.
        var t2: SimpleFINStub.Transaction?
        stub.update { t2 = $0.accounts[0].transactions.first { $0.id == "T2" } }
        let saved = try #require(t2)
        stub.update { $0.errors = ["You must reauthenticate."]; $0.accounts[0].transactions.removeAll { $0.id == "T2" } }
        let warned = try #require(try daemon.call("asset.sync", ["asset": "Linked"])["assets"]?.arrayValue?.first)
        #expect(warned["removed"] == [], "\(warned)")
        #expect(try daemon.call("asset.get", ["asset": "Linked"])["link"]?["last_error"] == "SimpleFIN: You must reauthenticate.")
        #expect(try Self.rows(daemon).count == 2)
        stub.update { $0.errors = []; $0.accounts[0].transactions.append(saved) }

        // A setup token in the credential: claimed once, its access URL kept in its place.
        let claiming = try Self.daemon("simplefin", url: nil, credential: stub.setupToken())
        let linked = try Self.sync(claiming, "simplefin", account: "ACT-1", currency: "USD")
        #expect(linked["reconciled"] == true, "\(linked)\n\(claiming.log.suffix(2_000))")
        let kept = try String(contentsOfFile: claiming.directory + "/keys/key", encoding: .utf8)
        #expect(kept == stub.accessURL + "\n", "the access URL replaced the token")
        #expect(fileMode(claiming.directory + "/keys/key") == 0o600)
        #expect(!claiming.log.contains(stub.accessURL) && !claiming.log.contains("pass456"))
        // Claimed again (by someone else): said so, with what to do.
        let again = try Self.daemon("simplefin", url: nil, credential: stub.setupToken())
        _ = try again.call("asset.create", ["name": "Linked", "currency": "USD", "kind": "fiat"])
        _ = try again.call("asset.link", ["asset": "Linked", "service": "simplefin", "account": "ACT-1", "credential": "key"])
        #expect(try again.failure("asset.sync", ["asset": "Linked"]).message.contains("claimed already"))

        stub.update { $0.password = "changed" }
        let refused = try daemon.failure("asset.sync", ["asset": "Linked"])
        #expect(refused.message.contains("claim a new setup token"), "\(refused)")
    }
}
