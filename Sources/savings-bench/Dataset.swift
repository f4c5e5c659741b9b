import Foundation
import SavingsCore

/// How big the generated data is.
struct DatasetSize {
    var goals: Int
    var assets: Int
    var transactions: Int
    var historyRows: Int
    /// Change points in the current month's window at each `month.progress` step.
    var progressSteps: [Int]
    /// Transactions written as an hledger journal.
    var journalTransactions: Int
    /// Transactions in the history of the watched xpub.
    var chainTransactions: Int
    /// Rows of the file imported through rules and in the plain format.
    var rulesRows: Int

    static let full = DatasetSize(goals: 1_000, assets: 200, transactions: 1_000_000, historyRows: 50_000,
                                  progressSteps: [1_000, 10_000, 100_000], journalTransactions: 100_000, chainTransactions: 10_000,
                                  rulesRows: 200_000)
    static let smoke = DatasetSize(goals: 20, assets: 10, transactions: 5_000, historyRows: 300,
                                   progressSteps: [100, 300, 1_000], journalTransactions: 1_000, chainTransactions: 1_500,
                                   rulesRows: 2_000)
}

/// The benchmark's data, generated deterministically from a seed relative to the current month:
/// a legacy document (goals, assets with opening balances, allocations, 12 months of plans, 6
/// of them closed), one CSV of five years of history per asset, and current-month CSVs for
/// the progress steps. It all enters savingsd through its public import methods.
struct Dataset {
    static let goalCurrencies = ["EUR", "USD", "GBP"]
    static let fiat = ["EUR", "USD", "GBP", "CHF"]
    static let crypto = ["BTC", "ETH", "SOL", "ADA", "DOT"]
    /// Price of one unit in USD (the pivot), so every pair converts.
    static let usdPrices: [String: String] = ["EUR": "1.08", "GBP": "1.27", "CHF": "1.13", "BTC": "91234.5",
                                              "ETH": "3120.75", "SOL": "142.3", "ADA": "0.45", "DOT": "6.8"]

    let size: DatasetSize
    let directory: String
    let now: Date
    var random: SeededGenerator
    let calendar: Calendar = {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = TimeZone(identifier: "UTC")!
        return calendar
    }()

    init(size: DatasetSize, directory: String, now: Date, seed: UInt64) {
        self.size = size
        self.directory = directory
        self.now = now
        random = SeededGenerator(state: seed)
    }

    var current: MonthLabel { MonthLabel(now, in: TimeZone(identifier: "UTC")!) }
    var monthStart: Date { calendar.date(from: DateComponents(year: current.year, month: current.month, day: 1))! }
    /// History runs over the five years before the current month.
    var historyStart: Date { calendar.date(byAdding: .month, value: -60, to: monthStart)! }

    func assetCurrency(_ index: Int) -> String {
        index % 2 == 0 ? Self.crypto[(index / 2) % Self.crypto.count] : Self.fiat[(index / 2) % Self.fiat.count]
    }

    func isCrypto(_ index: Int) -> Bool { index % 2 == 0 }

    /// The first assets are each wholly reserved for one goal, so every deposit imported into
    /// them is allocated automatically and writes an allocation-history row (as for a savings
    /// account kept for one goal). Enough of them to reach `historyRows`.
    var autoAllocatedAssets: Int {
        let deposits = max(1, size.transactions / size.assets * 7 / 10)
        let needed = max(0, size.historyRows - 5 * size.assets)
        return min(size.assets, (needed + deposits - 1) / deposits)
    }
    static func goalName(_ index: Int) -> String { "Goal \(index)" }
    static func assetName(_ index: Int) -> String { "Asset \(index)" }
    static let progressAsset = "Progress"

    mutating func amount(crypto: Bool, max: UInt64) -> String {
        let cents = random.next() % max + 1
        return crypto ? String(format: "%d.%08d", cents / 100_000_000, cents % 100_000_000)
            : String(format: "%d.%02d", cents / 100, cents % 100)
    }

    func day(_ date: Date) -> String {
        let parts = calendar.dateComponents([.year, .month, .day], from: date)
        return String(format: "%04d-%02d-%02d", parts.year!, parts.month!, parts.day!)
    }

    func month(_ label: MonthLabel) -> String { String(format: "%04d-%02d", label.year, label.month) }

    /// The legacy document; returns its path.
    mutating func writeLegacyDocument() throws -> String {
        var goals: [String] = [], assets: [String] = [], allocations: [String] = [], plans: [String] = [], records: [String] = []
        let created = day(calendar.date(byAdding: .month, value: -13, to: monthStart)!) + "T09:00:00Z"
        for index in 0..<size.goals {
            let target = random.next() % 49_000 + 1_000
            let deadline = calendar.date(byAdding: .month, value: 6 + Int(random.next() % 30), to: monthStart)!
            goals.append(#"{"id":"G\#(index)","name":"\#(Self.goalName(index))","currency":"\#(Self.goalCurrencies[index % 3])","target_amount":"\#(target)","deadline":"\#(day(deadline))","start_date":"\#(day(calendar.date(byAdding: .month, value: -12, to: monthStart)!))","created_at":"\#(created)"}"#)
        }
        let opened = day(historyStart) + "T00:00:00Z"
        for index in 0..<size.assets {
            let balance = isCrypto(index) ? "\(random.next() % 10 + 1).5" : "\(random.next() % 90_000 + 10_000)"
            assets.append(#"{"id":"A\#(index)","name":"\#(Self.assetName(index))","currency":"\#(assetCurrency(index))","created_at":"\#(opened)","balance":"\#(balance)"}"#)
            if index < autoAllocatedAssets {
                allocations.append(#"{"asset_id":"A\#(index)","goal_id":"G\#((index * 5) % size.goals)","percentage":"1"}"#)
            } else {
                for k in 0..<5 {
                    allocations.append(#"{"asset_id":"A\#(index)","goal_id":"G\#((index * 5 + k) % size.goals)","percentage":"0.1"}"#)
                }
            }
        }
        assets.append(#"{"id":"AP","name":"\#(Self.progressAsset)","currency":"EUR","created_at":"\#(opened)","balance":"100000"}"#)
        allocations.append(#"{"asset_id":"AP","goal_id":"G0","percentage":"0.5"}"#)
        for back in 0..<12 {
            let label = month(current.adding(-back))
            let closed = back >= 1 && back <= 6
            if closed {
                let start = calendar.date(byAdding: .month, value: -back, to: monthStart)!
                let end = calendar.date(byAdding: .day, value: 27, to: start)!
                records.append(#"{"id":"E\#(back)","month_label":"\#(label)","status":"closed","started_at":"\#(day(start))T08:00:00Z","completed_at":"\#(day(end))T20:00:00Z"}"#)
            }
            let stamp = day(calendar.date(byAdding: .month, value: -back, to: monthStart)!) + "T07:00:00Z"
            for index in 0..<size.goals {
                let required = random.next() % 900 + 100
                plans.append(#"{"id":"P\#(back)-\#(index)","goal_id":"G\#(index)","month_label":"\#(label)","required_monthly":"\#(required)","custom_amount":null,"is_protected":false,"is_skipped":false,"state":"\#(back == 0 ? "draft" : "completed")","created_date":"\#(stamp)","last_modified_date":"\#(stamp)","execution_record_id":\#(closed ? "\"E\(back)\"" : "null")}"#)
            }
        }
        let document = """
        {"format":"cryptosavings-legacy","version":1,"exported_at":"\(day(now))T00:00:00Z",
         "goals":[\(goals.joined(separator: ",\n"))],
         "assets":[\(assets.joined(separator: ",\n"))],
         "allocations":[\(allocations.joined(separator: ",\n"))],
         "monthly_plans":[\(plans.joined(separator: ",\n"))],
         "contributions":[],
         "execution_records":[\(records.joined(separator: ",\n"))]}
        """
        let path = directory + "/legacy.json"
        try document.write(toFile: path, atomically: true, encoding: .utf8)
        return path
    }

    /// One CSV per asset, `transactions / assets` rows each in date order over the five years
    /// before this month. Rows newer than the journal cutoff are also written to an hledger
    /// journal and to one file of every row (for `sqlite3 .import`).
    mutating func writeHistory(journalCutoff: Date) throws -> (files: [(asset: String, path: String, rows: Int)], journalRows: Int) {
        let perAsset = size.transactions / size.assets
        let span = monthStart.timeIntervalSince(historyStart)
        var files: [(String, String, Int)] = []
        let all = try Writer(path: directory + "/all.csv")
        let journal = try Writer(path: directory + "/ledger.journal")
        for (commodity, usd) in (Self.usdPrices.merging(["USD": "1"]) { a, _ in a }).sorted(by: { $0.key < $1.key }) where commodity != "EUR" {
            let eur = Decimal(string: usd)! / Decimal(string: Self.usdPrices["EUR"]!)!
            journal.write("P \(day(historyStart)) \(commodity) \(Amount.format(eur, scale: 6)) EUR\n")
        }
        journal.write("\n")
        var journalRows = 0
        for index in 0..<size.assets {
            let path = directory + "/asset-\(index).csv"
            let file = try Writer(path: path)
            file.write("date,amount,note\n")
            let crypto = isCrypto(index)
            let commodity = assetCurrency(index)
            for row in 0..<perAsset {
                let at = historyStart.addingTimeInterval(span * (Double(row) + Double(random.next() % 1000) / 1000) / Double(perAsset))
                var value = amount(crypto: crypto, max: crypto ? 20_000_000 : 50_000)
                if random.next() % 10 < 3 { value = "-" + value }
                let date = day(at)
                let line = "\(date),\(value),row \(row)\n"
                file.write(line)
                all.write(line)
                if at >= journalCutoff {
                    journalRows += 1
                    let quantity = value.hasPrefix("-") ? String(value.dropFirst()) : value
                    let (from, to) = value.hasPrefix("-") ? ("assets:asset\(index)", "expenses:out") : ("income:in", "assets:asset\(index)")
                    journal.write("\(date) row \(row)\n    \(to)  \(quantity) \(commodity)\n    \(from)\n\n")
                }
            }
            try file.close()
            files.append((Self.assetName(index), path, perAsset))
        }
        try all.close()
        try journal.close()
        return (files, journalRows)
    }

    /// Transactions for the progress asset dated inside the executing month's window, after
    /// `startedAt` (when `month.start` ran) and up to a second ago, so each one is a change
    /// point month.progress has to go through.
    mutating func writeProgressRows(count: Int, name: String, after startedAt: Date) throws -> String {
        let path = directory + "/\(name).csv"
        let file = try Writer(path: path)
        file.write("date,amount,note\n")
        let first = startedAt.addingTimeInterval(0.002)
        let window = max(0.001, Date().addingTimeInterval(-1).timeIntervalSince(first))
        for row in 0..<count {
            let at = first.addingTimeInterval(window * Double(row) / Double(count))
            file.write("\(Timestamp.format(at)),\(amount(crypto: false, max: 10_000)),\(name) \(row)\n")
        }
        try file.close()
        return path
    }
}

/// Buffered file output.
final class Writer {
    private let handle: FileHandle
    private var buffer = [UInt8]()

    init(path: String) throws {
        guard FileManager.default.createFile(atPath: path, contents: nil), let handle = FileHandle(forWritingAtPath: path) else { throw BenchError("cannot write \(path)") }
        self.handle = handle
        buffer.reserveCapacity(1 << 20)
    }

    func write(_ text: String) {
        buffer.append(contentsOf: text.utf8)
        if buffer.count >= 1 << 20 { flush() }
    }

    private func flush() {
        handle.write(Data(buffer))
        buffer.removeAll(keepingCapacity: true)
    }

    func close() throws {
        flush()
        try handle.close()
    }
}
