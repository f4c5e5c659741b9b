import Foundation
import GRDB
import SavingsCore

/// What a `tx.import` did (or, in a dry run, would do).
public struct CSVImportResult: Sendable, Equatable {
    public struct Problem: Error, Sendable, Equatable {
        public var line: Int
        public var reason: String
        /// The file's asset code the row was refused for, when no asset is given for it.
        public var unmappedCode: String?

        public init(line: Int, reason: String, unmappedCode: String? = nil) {
            self.line = line
            self.reason = reason
            self.unmappedCode = unmappedCode
        }
    }

    /// One asset's share of the file.
    public struct AssetSummary: Sendable, Equatable {
        public var assetID: String
        public var name: String
        /// The file's codes for it (an asset column's values).
        public var codes: [String] = []
        public var rows = 0
        public var inserted = 0
        public var alreadyPresent = 0
        /// Rows a rule skipped (or that move nothing).
        public var skipped = 0
        public var autoAllocated = 0
        /// The amounts of its rows in the file, new and already present (with rules or in a dry run).
        public var total: Decimal = 0
        /// What rows skipped by rule moved in the file's running balance.
        public var skippedAmount: Decimal = 0
        public var balanceChecked = false
    }

    /// A row as it would be stored (a dry run's first rows).
    public struct PreviewRow: Sendable, Equatable {
        public var line: Int
        public var asset: String
        public var date: String
        public var amount: String
        public var note: String?
        public var externalID: String
        public var alreadyPresent: Bool
    }

    public var inserted = 0
    /// Rows already present (same external_id, or the same content when none is given).
    public var alreadyPresent = 0
    public var autoAllocated = 0
    /// Rows refused; with `partial` the others were imported, otherwise nothing was.
    public var problems: [Problem] = []
    public var problemCount = 0
    public var rows = 0
    public var skipped = 0
    public var assets: [AssetSummary] = []
    /// The file's asset codes without an asset, and their rows (skipped).
    public var unmapped: [String: Int] = [:]
    /// Rows refused because their code has no asset (the rules' `unmapped = "error"`), by code.
    public var codesWithoutAsset: [String: Int] = [:]
    public var preview: [PreviewRow] = []
    public var dryRun = false
    /// Nothing was written because of a problem (a bad row without `partial`, or a running
    /// balance that disagrees).
    public var refused = false
    /// A running balance disagreed (which `partial` does not get past).
    public var balanceDisagrees = false
}

/// How `tx.import` reads and writes a file.
public struct ImportOptions: Sendable {
    /// The asset of a file without an asset column.
    public var asset: String?
    public var rules: ImportRules?
    public var partial = false
    /// Read, check and count everything; write nothing.
    public var dryRun = false
    public var balanceCheck = true
    public static let previewRows = 20

    public init(asset: String?, rules: ImportRules? = nil, partial: Bool = false, dryRun: Bool = false, balanceCheck: Bool = true) {
        self.asset = asset
        self.rules = rules
        self.partial = partial
        self.dryRun = dryRun
        self.balanceCheck = balanceCheck
    }
}

/// One asset an import writes into, with what it has written so far.
private final class ImportTarget {
    let asset: AssetRecord
    let ref: Int64
    var allocator: DepositAllocator
    var chunk = ImportChunk()
    var summary: CSVImportResult.AssetSummary
    /// `summary.total` while rows come (integers while they fit).
    var total = RunningTotal(0)
    var balance: RunningBalanceCheck?

    init(asset: AssetRecord, now: Date, checkBalance: Bool, _ db: Database) throws {
        self.asset = asset
        ref = try SavingsDatabase.assetRef(asset.id, db)
        allocator = try DepositAllocator(asset: asset, now: now, db)
        summary = CSVImportResult.AssetSummary(assetID: asset.id, name: asset.name)
        balance = checkBalance ? RunningBalanceCheck() : nil
        summary.balanceChecked = checkBalance
    }
}

extension SavingsDatabase {
    /// Imports a CSV file of transactions into one asset (see `importTransactions(file:options:...)`).
    public func importTransactions(asset reference: String, path: String, partial: Bool, now: Date, timeZone: TimeZone,
                                   progress: (@Sendable (_ phase: String, _ rows: Int) -> Void)? = nil) async throws -> CSVImportResult {
        try await importTransactions(file: .path(path), options: ImportOptions(asset: reference, partial: partial), now: now,
                                     timeZone: timeZone, progress: progress)
    }

    /// `importTransactions(asset:path:...)` over any `ImportFile` (a path, or an upload).
    public func importTransactions(asset reference: String, file: ImportFile, partial: Bool, now: Date, timeZone: TimeZone,
                                   progress: (@Sendable (_ phase: String, _ rows: Int) -> Void)? = nil) async throws -> CSVImportResult {
        try await importTransactions(file: file, options: ImportOptions(asset: reference, partial: partial), now: now,
                                     timeZone: timeZone, progress: progress)
    }

    /// Imports a CSV file of transactions: into `options.asset`, or with rules whose asset
    /// column names each row's asset, into several. Rows already present are skipped, so
    /// importing the same file again inserts nothing. Without `partial`, any bad row refuses
    /// the whole file (nothing written) and every problem is reported with its line; with it,
    /// the good rows are imported and the bad ones reported. A running balance column that
    /// disagrees refuses the file either way. Deposits auto-allocate as `tx.add`. A dry run
    /// does all of it and rolls back.
    ///
    /// The file is read once, inside the write: rows go in a chunk at a time, and a refused
    /// file's transaction is rolled back (after its first problem the rest is only checked).
    public func importTransactions(file: ImportFile, options: ImportOptions, now: Date, timeZone: TimeZone,
                                   progress: (@Sendable (_ phase: String, _ rows: Int) -> Void)? = nil) async throws -> CSVImportResult {
        let now = Timestamp.truncatedToMilliseconds(now)
        // Where a large count of identical rows goes (beside the database; a database in memory: /tmp).
        let directory = writer.path.hasPrefix("/") ? (writer.path as NSString).deletingLastPathComponent : NSTemporaryDirectory()
        if let rules = options.rules {
            // An asset a [[when]] block or a second leg names is the rules' mistake when there is none.
            var named: [(key: String, asset: String)] = []
            for (index, rule) in rules.when.enumerated() {
                if let asset = rule.asset { named.append(("when[\(index + 1)].asset", asset)) }
                if let asset = rule.secondLeg?.asset { named.append(("when[\(index + 1)].second_leg.asset", asset)) }
            }
            if !named.isEmpty {
                try await read { [named] db in
                    for (key, asset) in named {
                        do {
                            _ = try Self.resolveAsset(asset, db)
                        } catch let error as DomainError where error.kind == .notFound {
                            throw DomainError.invalidField("rules", "\(rules.name): \(key) names '\(asset)', which is no asset of yours (give an asset's name or id; a file's code is mapped under [assets])")
                        }
                    }
                }
            }
        } else {
            // A provider's export sent without rules: say which preset reads it.
            let names = try await OffPool.run { PresetProbe.matching(try file.prefix(PresetProbe.prefixBytes), now: now, timeZone: timeZone) }
            if let suggestion = PresetProbe.suggestion(names) { throw DomainError.invalidField("rules", suggestion) }
        }
        if var rules = options.rules, !rules.when.isEmpty {
            // The patterns first run as the rows are written, on a budget of the order of reading
            // the file; rules and a file that spend it are imported again in two passes, the
            // patterns deciding each row before the write begins (and off the serving pool):
            // however long they take then, no other client's write waits for them.
            rules.verdicts = RuleVerdicts(fileBytes: file.size ?? 0, mode: .direct)
            var direct = options
            direct.rules = rules
            do {
                return try await write(file: file, options: direct, now: now, timeZone: timeZone, directory: directory, progress: progress)
            } catch is RuleVerdicts.OverBudget {
                let verdicts = RuleVerdicts(fileBytes: file.size ?? 0)
                rules.verdicts = verdicts
                let decide = CSVFileRows(file: file, rules: rules, now: now, timeZone: timeZone)
                try await OffPool.run { try decide.forEach { _ in } }
                verdicts.replay()
                var decided = options
                decided.rules = rules
                return try await write(file: file, options: decided, now: now, timeZone: timeZone, directory: directory, progress: progress)
            }
        }
        return try await write(file: file, options: options, now: now, timeZone: timeZone, directory: directory, progress: progress)
    }

    /// The import's write: the file read once, rows in a chunk at a time (see `importTransactions`).
    private func write(file: ImportFile, options: ImportOptions, now: Date, timeZone: TimeZone, directory: String,
                       progress: (@Sendable (_ phase: String, _ rows: Int) -> Void)?) async throws -> CSVImportResult {
        let rows = CSVFileRows(file: file, rules: options.rules, now: now, timeZone: timeZone)
        let checkBalance = options.balanceCheck && options.rules?.balance != nil
        // Totals per asset and the preview cost a little per row: only where they are shown.
        let detailed = options.rules != nil || options.dryRun
        let partial = options.partial
        let result = try await bulkWrite(cacheBytes: Self.importCacheBytes(fileBytes: file.size)) { db -> BulkWriteOutcome<CSVImportResult> in
            var targets: [ImportTarget] = []
            var byReference: [String: ImportTarget] = [:]
            var last: (reference: String?, target: ImportTarget)?
            /// The asset a row names (nil: the import's), resolved once.
            func target(_ reference: String?, code: String?) throws -> ImportTarget {
                if let last, last.reference == reference { return last.target }
                let key = reference ?? ""
                if let known = byReference[key] {
                    last = (reference, known)
                    return known
                }
                guard let name = reference ?? options.asset else {
                    throw DomainError.invalidField("asset", "the file's rows name no asset: give asset, or rules with an asset column")
                }
                let asset: AssetRecord
                do {
                    asset = try Self.resolveAsset(name, db)
                } catch let error as DomainError where error.kind == .notFound && code != nil {
                    throw DomainError(.notFound, "no asset matches '\(name)' (the rules map the file's '\(code!)' to it)",
                                      details: ["reference": name])
                }
                let found: ImportTarget
                if let same = targets.first(where: { $0.asset.id == asset.id }) {
                    found = same
                } else {
                    try Self.refuseIfWatched(assetID: asset.id, db)
                    found = try ImportTarget(asset: asset, now: now, checkBalance: checkBalance, db)
                    targets.append(found)
                }
                byReference[key] = found
                last = (reference, found)
                return found
            }
            // A file of one asset: that asset is checked (it exists, it is not watched) before any row.
            if options.rules?.asset == nil { _ = try target(nil, code: nil) }
            var result = CSVImportResult()
            result.dryRun = options.dryRun
            var previewLines = Set<Int>()
            var refs = RefBlock(.transactions)
            func flush(_ target: ImportTarget) throws {
                try target.chunk.flush(into: db, asset: (target.asset.id, target.ref), createdAt: now, refs: &refs) { entry, inserted in
                    if detailed, previewLines.contains(entry.row.line) {
                        result.preview.append(.init(line: entry.row.line, asset: target.asset.name, date: entry.row.dateText,
                                                    amount: entry.row.amountText, note: entry.row.note, externalID: entry.key,
                                                    alreadyPresent: !inserted))
                    }
                    guard inserted else {
                        result.alreadyPresent += 1
                        target.summary.alreadyPresent += 1
                        return
                    }
                    result.inserted += 1
                    target.summary.inserted += 1
                    try target.allocator.inserted(amount: entry.row.amount, units: entry.row.units, date: entry.row.date, db)
                }
            }
            try ImportReader.forEach(rows, directory: directory) { read in
                result.rows += 1
                if result.rows % 10_000 == 0 { progress?("importing", result.rows) }
                let row: TransactionCSVRow
                let into: ImportTarget
                switch read.row {
                case .failure(let problem):
                    result.record(problem)
                    return
                case .success(.unassigned(let code, let unmapped)):
                    result.skipped += 1
                    if unmapped { result.unmapped[code, default: 0] += 1 }
                    return
                case .success(.skipped(let line, let asset, let code, let date, let amount, let balance)):
                    result.skipped += 1
                    let target = try target(asset, code: code)
                    target.summary.skipped += 1
                    if let amount { target.balance?.add(line: line, date: date, amount: amount, balance: balance, skipped: true) }
                    return
                case .success(.row(let good, let asset, let code, let balance)):
                    row = good
                    into = try target(asset, code: code)
                    into.balance?.add(line: row.line, date: row.date, amount: row.amount, units: row.units, balance: balance, skipped: false)
                    into.summary.rows += 1
                    if detailed {
                        into.total.add(row.amount, units: row.units)
                        if let code, !into.summary.codes.contains(code) { into.summary.codes.append(code) }
                    }
                }
                // A file that will be refused writes nothing more: the rest is only checked.
                if !partial, result.problemCount > 0 { return }
                if detailed, previewLines.count < ImportOptions.previewRows { previewLines.insert(row.line) }
                // Identical rows without an external_id were told apart by their order as they were read.
                if let key = read.key { into.chunk.append(row, key) }
                if into.chunk.isFull { try flush(into) }
            }
            for target in targets {
                guard let check = target.balance, let oldest = check.oldestDate else { continue }
                target.summary.skippedAmount = check.skippedAmount
                let opening = try Self.balance(assetID: target.asset.id, at: oldest.addingTimeInterval(-0.001), db)
                if let mismatch = check.verdict(opening: opening) {
                    result.record(.init(line: mismatch.line, reason: Self.balanceMismatch(mismatch, asset: target.asset.name, oldest: oldest)))
                    result.balanceDisagrees = true
                }
            }
            result.refused = result.balanceDisagrees || (!partial && result.problemCount > 0)
            result.problems.sort { $0.line < $1.line }
            if result.refused, !options.dryRun {
                var refused = CSVImportResult()
                refused.rows = result.rows
                refused.problems = result.problems
                refused.problemCount = result.problemCount
                refused.refused = true
                refused.balanceDisagrees = result.balanceDisagrees
                return .rollback(refused)
            }
            for target in targets { try flush(target) }
            try refs.finish(db)
            for target in targets {
                try target.allocator.apply(timeZone: timeZone, db)
                target.summary.autoAllocated = target.allocator.allocated
                result.autoAllocated += target.allocator.allocated
            }
            for target in targets { target.summary.total = target.total.value }
            result.assets = targets.map(\.summary)
            result.preview.sort { $0.line < $1.line }
            progress?("importing", result.rows)
            return options.dryRun ? .rollback(result) : .commit(result)
        }
        MemoryRelease.returnFreedMemory()
        return result
    }

    /// Why a running balance refuses a file.
    private static func balanceMismatch(_ mismatch: RunningBalanceCheck.Mismatch, asset: String, oldest: Date) -> String {
        "balance: the file says \(Amount.plainText(mismatch.found)) after this row, but \(asset) would hold "
            + "\(Amount.plainText(mismatch.expected)) (its balance before \(Timestamp.format(oldest)), the file's oldest row, "
            + "plus the file's rows up to here); import the missing rows first, or import with balance_check false (--no-balance-check)"
    }
}

extension CSVImportResult {
    /// Keeps the first problems in full and counts the rest.
    mutating func record(_ problem: Problem) {
        problemCount += 1
        if let code = problem.unmappedCode { codesWithoutAsset[code, default: 0] += 1 }
        if problems.count < 100 { problems.append(problem) }
    }
}
