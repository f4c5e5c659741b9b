import Foundation
import SavingsCore
import SavingsRPC
import SavingsStore

/// `tx.import`: a bank's or exchange's CSV file, read plainly (`date,amount[,note,external_id]`)
/// or through rules (a shipped preset, a rules file on the daemon's side, or the rules' text).
enum TransactionImport {
    static func register(into registry: inout MethodRegistry, context: DaemonContext) {
        registry.register(MethodSpec(
            "tx.import", summary: "Import transactions from a CSV file: date,amount[,note,external_id], or any bank's or exchange's export through rules; idempotent.",
            params: [
                .optional("asset", .reference, "the asset's id or name (required unless the rules name each row's asset)"),
                .optional("path", .string, "the CSV file, a path on the daemon's side (header line first; dates YYYY-MM-DD or ISO 8601; decimal point '.')"),
                Transfer.uploadParam("the CSV file"),
                .optional("format", .string, "\"csv\" (the only format)"),
                .optional("rules", .string, "how to read the file: a preset (\(ImportPresets.names.joined(separator: ", "))) or an absolute path to a rules file (TOML) on the daemon's side"),
                .optional("rules_text", .string, "how to read the file: a rules file's text (TOML, at most 64 KiB)"),
                .optional("assets", .object, "the file's asset codes and the assets they are, e.g. {\"XXBT\": \"Kraken BTC\"} (added to the rules' [assets])"),
                .optional("dry_run", .boolean, "read and check everything and report the first rows as they would be stored, totals per asset and every problem; write nothing"),
                .optional("balance_check", .boolean, "check the rules' running balance column against the asset's balance (default true)"),
                .optional("partial", .boolean, "import the good rows and report the bad ones (default: a bad row refuses the file)"),
                .optional("progress", .boolean, "send progress notifications {method: \"progress\", params: {phase, done}} while it runs"),
            ],
            result: ResultSpec("import", "{\"rows\", \"imported\", \"already_present\", \"skipped\", \"auto_allocated\", \"assets\", \"unmapped\", \"codes_without_asset\", \"problems\", \"dry_run\", \"preview\"?}",
                               schema: Self.resultSchema), writes: true, transfer: .upload)) { params, call in
            try await importTransactions(params, call: call, context: context)
        }
    }

    /// The rules a call names, with its `assets` added; nil for a plain file.
    static func rules(_ params: Params, call: CallContext) throws -> ImportRules? {
        var rules: ImportRules?
        if let text = params.string("rules_text") {
            guard !params.has("rules") else { throw DomainError.invalidField("rules_text", "give rules or rules_text, not both") }
            rules = try ImportRules(toml: text, name: "the rules file")
        } else if let name = params.string("rules") {
            if let preset = try ImportPresets.rules(name) {
                rules = preset
            } else {
                if name.hasPrefix("/") { try DataMethods.requireOwnUser(call, field: "rules") }
                guard name.hasPrefix("/"), !name.contains("\0") else {
                    throw DomainError.invalidField("rules", "'\(name)' is neither a preset (\(ImportPresets.names.joined(separator: ", "))) nor an absolute path to a rules file")
                }
                let size = (try? FileManager.default.attributesOfItem(atPath: name))?[.size] as? Int
                guard let size, size <= ImportRules.maxTextBytes, let data = FileManager.default.contents(atPath: name) else {
                    throw DomainError.invalidField("rules", size == nil ? "cannot read \(name)" : "\(name) is longer than \(ImportRules.maxTextBytes) bytes")
                }
                guard let text = String(data: data, encoding: .utf8) else { throw DomainError.invalidField("rules", "\(name) is not UTF-8 text") }
                rules = try ImportRules(toml: text, name: name)
            }
        }
        if let map = params.values["assets"]?.objectValue {
            guard rules?.asset != nil else {
                throw DomainError.invalidField("assets", "maps the file's asset codes, but the rules name no asset column")
            }
            for (code, asset) in map {
                guard let name = asset.stringValue, !name.isEmpty else { throw DomainError.invalidField("assets", "\(code) must name an asset") }
                rules?.assets[code] = name
            }
        }
        return rules
    }

    /// A refused file is an error listing the first problems with their lines; a dry run
    /// reports them instead.
    static func importTransactions(_ params: Params, call: CallContext, context: DaemonContext) async throws -> JSONValue {
        let database = context.database
        if let format = params.string("format"), format.lowercased() != "csv" {
            throw DomainError.invalidField("format", "'\(format)' is not a supported format (csv)")
        }
        let rules = try rules(params, call: call)
        // Without an asset or rules the file is still read: a provider's export is told which
        // preset reads it, anything else that it needs an asset.
        let asset = params.string("asset")
        let options = ImportOptions(asset: asset, rules: rules, partial: params.bool("partial") ?? false,
                                    dryRun: params.bool("dry_run") ?? false, balanceCheck: params.bool("balance_check") ?? true)
        var progress: (@Sendable (String, Int) -> Void)?
        if params.bool("progress") == true {
            progress = { @Sendable phase, rows in call.progress("tx.import", phase: phase, done: rows) }
        }
        // An unknown asset is refused before the caller sends a byte (mapped ones when a row names them).
        if params.has("upload"), let asset { _ = try await database.asset(asset) }
        let file = try await IncomingFile.take(params, call: call, method: "tx.import", maxBytes: .max, context: context)
        let result = try await database.importTransactions(file: file.importFile, options: options, now: context.clock.now(),
                                                           timeZone: context.timeZone, progress: progress)
        if result.refused, !options.dryRun {
            let shown = result.problems.prefix(10).map { "line \($0.line): \($0.reason)" }.joined(separator: "; ")
            let more = result.problemCount > 10 ? "; and \(result.problemCount - 10) more" : ""
            let advice = result.balanceDisagrees ? "" : " (fix the file, or pass partial: true)"
            throw DomainError(.invalidField, "nothing was imported: \(shown)\(more)\(advice)",
                              details: ["field": file.field, "problems": String(result.problemCount), "first_line": String(result.problems[0].line)])
        }
        if !options.dryRun {
            for summary in result.assets where summary.inserted > 0 {
                context.events.publish("tx.imported", ["asset": .string(summary.name), "count": .int(summary.inserted)])
            }
        }
        return json(result)
    }

    static let resultSchema = Schema.object([
        "rows": Schema.count, "imported": Schema.count, "already_present": Schema.count,
        "skipped": Schema.described(Schema.count, "rows the rules skip (and rows of codes with no asset)"),
        "auto_allocated": Schema.count, "problem_count": Schema.count,
        "problems": Schema.described(Schema.array(Schema.object(["line": Schema.count, "reason": Schema.string])), "the first problems, by line"),
        "dry_run": Schema.boolean,
        "unmapped": Schema.described(Schema.map(Schema.count), "the file's asset codes no rule or asset names, with their rows"),
        "codes_without_asset": Schema.described(Schema.map(Schema.count), "codes the rules know whose asset does not exist, with their rows"),
        "assets": Schema.array(Schema.object([
            "asset_id": Schema.id, "name": Schema.string, "codes": Schema.array(Schema.string),
            "rows": Schema.count, "imported": Schema.count, "already_present": Schema.count, "skipped": Schema.count,
            "auto_allocated": Schema.count, "total": Schema.decimal, "skipped_amount": Schema.decimal, "balance_checked": Schema.boolean,
        ])),
        "refused": Schema.described(Schema.boolean, "dry_run: the file would be refused as it is"),
        "preview": Schema.described(Schema.array(Schema.object([
            "line": Schema.count, "asset": Schema.string, "date": Schema.timestamp, "amount": Schema.decimal,
            "note": Schema.nullable(Schema.string), "external_id": Schema.string, "already_present": Schema.boolean,
        ])), "dry_run: the first rows as they would be stored"),
    ], optional: ["refused", "preview"])

    static func json(_ result: CSVImportResult) -> JSONValue {
        var answer: [String: JSONValue] = [
            "rows": .int(result.rows), "imported": .int(result.inserted), "already_present": .int(result.alreadyPresent),
            "skipped": .int(result.skipped), "auto_allocated": .int(result.autoAllocated), "problem_count": .int(result.problemCount),
            "problems": .array(result.problems.map { ["line": .int($0.line), "reason": .string($0.reason)] }),
            "dry_run": .bool(result.dryRun),
            "unmapped": .object(result.unmapped.mapValues { .int($0) }),
            "codes_without_asset": .object(result.codesWithoutAsset.mapValues { .int($0) }),
            "assets": .array(result.assets.map { summary in
                [
                    "asset_id": .string(summary.assetID), "name": .string(summary.name), "codes": .array(summary.codes.map { .string($0) }),
                    "rows": .int(summary.rows), "imported": .int(summary.inserted), "already_present": .int(summary.alreadyPresent),
                    "skipped": .int(summary.skipped), "auto_allocated": .int(summary.autoAllocated),
                    "total": .string(Amount.plainText(summary.total)), "skipped_amount": .string(Amount.plainText(summary.skippedAmount)),
                    "balance_checked": .bool(summary.balanceChecked),
                ]
            }),
        ]
        if result.dryRun {
            answer["refused"] = .bool(result.refused)
            answer["preview"] = .array(result.preview.map { row in
                [
                    "line": .int(row.line), "asset": .string(row.asset), "date": .string(row.date), "amount": .string(row.amount),
                    "note": row.note.map { .string($0) } ?? .null, "external_id": .string(row.externalID),
                    "already_present": .bool(row.alreadyPresent),
                ]
            })
        }
        return .object(answer)
    }
}
