import Foundation
import SavingsCore
import SavingsRPC
#if canImport(Glibc)
import Glibc
#endif

/// `tx.import` through rules against the plain format: the same rows of one euro account,
/// written as savingsd's own `date,amount,note,external_id` and as Kraken's ledgers.csv (every
/// text field quoted, a fee on some rows, a running balance, an asset column), the latter read
/// by the shipped `kraken-ledgers` preset (its `[[when]]` rule, fee, balance check and asset
/// column: the rules path at its most expensive).
struct KrakenLedger {
    /// The file's asset code, and the asset it is mapped to.
    static let code = "ZEUR"
    static let asset = "Kraken EUR"

    let plain: String
    let kraken: String
    let rows: Int

    /// Writes `rows` rows (seconds apart, over the year before `now`) to `directory`.
    init(rows: Int, directory: String, now: Date, seed: UInt64) throws {
        var random = SeededGenerator(state: seed)
        plain = directory + "/kraken-plain.csv"
        kraken = directory + "/kraken-ledgers.csv"
        self.rows = rows
        let plainFile = try Writer(path: plain), krakenFile = try Writer(path: kraken)
        plainFile.write("date,amount,note,external_id\n")
        krakenFile.write(#""txid","refid","time","type","subtype","aclass","asset","wallet","amount","fee","balance""# + "\n")
        /// Ten-thousandths of a euro as Kraken writes them: "1000.0000", "-0.8000".
        func fixed(_ value: Int) -> String {
            let whole = abs(value) / 10_000, fraction = abs(value) % 10_000
            let digits = String(fraction)
            return (value < 0 ? "-" : "") + String(whole) + "." + String(repeating: "0", count: 4 - digits.count) + digits
        }
        let letters = Array("ABCDEFGHIJKLMNOPQRSTUVWXYZ234567")
        func code(_ value: UInt64, _ count: Int) -> String {
            String((0..<count).map { letters[Int((value >> (5 * UInt64($0))) & 31)] })
        }
        // Up to 150 s apart: 200,000 rows span under a year.
        var milliseconds = Timestamp.milliseconds(now.addingTimeInterval(-366 * 86_400)) / 1000 * 1000
        var balance = 0
        for row in 0..<rows {
            milliseconds += Int64(random.next() % 150 + 1) * 1000
            var kind: String
            var amount: Int
            var fee = 0
            switch random.next() % 20 {
            case 0..<7:
                kind = "deposit"
                amount = Int(random.next() % 50_000_000) + 10_000
            case 7..<10:
                kind = "withdrawal"
                amount = -(Int(random.next() % 20_000_000) + 10_000)
            default:
                // A trade's euro leg: bought (euros out) or sold (euros in); a fee on a fifth of them.
                kind = "trade"
                amount = (Int(random.next() % 30_000_000) + 10_000) * (random.next() % 2 == 0 ? 1 : -1)
                if random.next() % 5 == 0 { fee = max(1, abs(amount) * 26 / 10_000) }
            }
            if balance + amount - fee < 0 {
                kind = "deposit"
                amount = abs(amount)
                fee = 0
            }
            balance += amount - fee
            let txid = "L" + code(UInt64(row), 5) + "-" + code(random.next(), 5) + "-" + code(random.next(), 6)
            let refid = code(random.next(), 7) + "-" + code(random.next(), 6) + "-" + code(random.next(), 6)
            let stamp = Timestamp.format(milliseconds: milliseconds)
            let time = String(stamp.prefix(10)) + " " + String(stamp.dropFirst(11).prefix(8))
            // Text quoted, numbers bare, as Kraken writes them.
            krakenFile.write(#""\#(txid)","\#(refid)","\#(time)","\#(kind)","","currency","\#(Self.code)","spot / main",\#(fixed(amount)),\#(fixed(fee)),\#(fixed(balance))"# + "\n")
            // What the preset makes of the row: the amount less the fee, "Kraken {type} {subtype?}", the txid.
            plainFile.write("\(stamp),\(fixed(amount - fee)),Kraken \(kind),\(txid)\n")
        }
        try plainFile.close()
        try krakenFile.close()
    }
}

/// Each import on a fresh database of its own (one empty euro account), by daemon-side path;
/// the plain file and the Kraken file take turns over `rounds` rounds, and the median of each.
func rulesImportFigures(work: String, savingsd: String, rows: Int, rounds: Int, now: Date) throws -> (figures: [Figure], notes: [String]) {
    let ledger = try KrakenLedger(rows: rows, directory: work, now: now, seed: 20_260_105)
    var plainTimes: [Double] = [], rulesTimes: [Double] = []
    for round in 0..<rounds {
        for rules in round % 2 == 0 ? [false, true] : [true, false] {
            // What the last daemon wrote goes to disk now, not during the next measurement.
            sync()
            let directory = work + "/" + (rules ? "rules-import" : "plain-import")
            try? FileManager.default.removeItem(atPath: directory)
            try FileManager.default.createDirectory(atPath: directory + "/db", withIntermediateDirectories: true)
            let daemon = try DaemonUnderTest(executable: savingsd, directory: directory, database: directory + "/db/savings.db")
            let client = try daemon.client()
            _ = try client.call("asset.create", ["name": .string(KrakenLedger.asset), "currency": "EUR", "kind": "fiat"])
            let params: [String: JSONValue] = rules
                ? ["path": .string(ledger.kraken), "rules": "kraken-ledgers", "assets": [KrakenLedger.code: .string(KrakenLedger.asset)]]
                : ["asset": .string(KrakenLedger.asset), "path": .string(ledger.plain)]
            let start = monotonicSeconds()
            let result = try client.call("tx.import", params, timeoutMilliseconds: 3_600_000)
            let seconds = monotonicSeconds() - start
            daemon.stop()
            try? FileManager.default.removeItem(atPath: directory)
            guard result["imported"]?.intValue == rows else {
                throw BenchError("tx.import of \(rules ? ledger.kraken : ledger.plain): \(JSONSerializer.serialize(result))")
            }
            if rules {
                guard result["assets"]?.arrayValue?.first?["balance_checked"]?.boolValue == true else {
                    throw BenchError("tx.import of \(ledger.kraken) checked no running balance: \(JSONSerializer.serialize(result))")
                }
                rulesTimes.append(seconds)
            } else {
                plainTimes.append(seconds)
            }
        }
    }
    for path in [ledger.plain, ledger.kraken] { try? FileManager.default.removeItem(atPath: path) }
    let plainSeconds = plainTimes.sorted()[plainTimes.count / 2], rulesSeconds = rulesTimes.sorted()[rulesTimes.count / 2]
    let plainRate = Double(rows) / plainSeconds, rulesRate = Double(rows) / rulesSeconds
    return ([Figure(name: "`tx.import` of \(rows) CSV rows through rules (Kraken's ledgers.csv, preset `kraken-ledgers`), against the plain format (median of \(rounds) rounds, in alternating order)",
                    median: rate(rulesRate) + " (\(String(format: "%.2f", rulesSeconds)) s)", p99: "—",
                    baseline: "the same rows as `date,amount,note,external_id`: " + rate(plainRate) + " (\(String(format: "%.2f", plainSeconds)) s)",
                    ratio: ratio(rulesRate / plainRate), target: "≥ 0.8×", met: rulesRate / plainRate >= 0.8)],
            ["rules against the plain format: the same \(rows) rows of one euro account, each import into a fresh database by daemon-side path; Kraken's file quotes every field and has an asset column (ZEUR, mapped with `assets`), a fee on about one row in ten and a running balance, so the preset's `[[when]]` rule (a first pass over the file deciding each row before the write), the fee, the asset mapping and the balance check all run; the plain file has the amounts less the fees, the preset's notes, the txids as external_id and the instants in savingsd's own form (2026-01-05T09:12:41.000Z)"])
}
