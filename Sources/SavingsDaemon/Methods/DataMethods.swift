import Foundation
import Logging
import SavingsCore
import SavingsRPC
import SavingsStore

/// `db.*`, `data.*` and `tx.import`: backups, checks, export/import and bank files.
enum DataMethods {
    /// Largest export returned inside a response; beyond it the caller must pass `path`.
    static let maxInlineExportBytes = 8 << 20
    /// Largest export document `data.import` reads.
    static let maxImportBytes = 2 << 30

    static func register(into registry: inout MethodRegistry, context: DaemonContext, logger: Logger) {
        let database = context.database

        registry.register(MethodSpec(
            "db.backup", summary: "Write a consistent copy of the database to PATH while the daemon keeps serving.",
            params: [.required("path", .string, "absolute path of the new file (mode 0600)"),
                     .optional("overwrite", .boolean, "replace an existing file (default false)"),
                     .optional("progress", .boolean, "send progress notifications {method: \"progress\", params: {phase: \"pages\", done, total}} while it runs")],
            result: ResultSpec("backup", "{\"path\", \"bytes\", \"pages\"}", schema: ["type": "object"]), writes: false)) { params, call in
            let progress: (@Sendable (Int, Int) -> Void)? = params.bool("progress") == true
                ? { @Sendable done, total in call.progress("db.backup", phase: "pages", done: done, total: total) } : nil
            let info = try await database.backup(to: try absolutePath(params), overwrite: params.bool("overwrite") ?? false, progress: progress)
            logger.notice("backup written", metadata: ["path": "\(info.path)", "bytes": "\(info.bytes)"])
            return ["path": .string(info.path), "bytes": .int(info.bytes), "pages": .int(info.pages)]
        }

        registry.register(MethodSpec(
            "db.check", summary: "Check the file (integrity, references) and the domain invariants.",
            params: [ParamSpec.progress],
            result: ResultSpec("report", "{\"ok\", \"integrity\", \"foreign_keys\", \"invariants\": [{name, ok, problems}]}",
                               schema: ["type": "object", "required": ["ok"]]),
            writes: false)) { _, _ in
            let report = try await database.check()
            return [
                "ok": .bool(report.ok),
                "integrity": .array(report.integrity.map(JSONValue.string)),
                "foreign_keys": .array(report.foreignKeys.map(JSONValue.string)),
                "invariants": .array(report.invariants.map { invariant in
                    ["name": .string(invariant.name), "ok": .bool(invariant.problems.isEmpty),
                     "problems": .array(invariant.problems.map(JSONValue.string))]
                }),
            ]
        }

        registry.register(MethodSpec(
            "data.export", summary: "Everything as one versioned JSON document, returned or written to PATH.",
            params: [.optional("path", .string, "write the document here (mode 0600) instead of returning it"),
                     .optional("overwrite", .boolean, "replace an existing file (default false)"),
                     .optional("progress", .boolean, "with path: send progress notifications {method: \"progress\", params: {phase: section, done: rows, total}}")],
            result: ResultSpec("export", "the document, or {\"path\", \"bytes\", \"counts\"} when written to a file",
                               schema: ["type": "object"]), writes: false)) { params, call in
            let header = try await ExportDocument.header(database: database, now: context.clock.now())
            guard params.has("path") else {
                let collector = ExportCollector(limit: maxInlineExportBytes)
                try await database.export(into: collector)
                return collector.document(header: header)
            }
            let path = try absolutePath(params)
            var progress: (@Sendable (String, Int) -> Void)?
            if params.bool("progress") == true {
                let total = try await database.transferRowCount()
                progress = { @Sendable section, rows in call.progress("data.export", phase: section, done: rows, total: total) }
            }
            let written = try await ExportFileWriter.write(to: path, overwrite: params.bool("overwrite") ?? false, header: header,
                                                           progress: progress) {
                try await database.export(into: $0)
            }
            logger.notice("export written", metadata: ["path": "\(path)", "bytes": "\(written.bytes)"])
            return ["path": .string(path), "bytes": .int(written.bytes),
                    "counts": .object(written.counts.mapValues { .int($0) })]
        }

        registry.register(MethodSpec(
            "data.import", summary: "Restore a data.export document: into an empty database, or replacing everything (backup first).",
            params: [.required("path", .string, "the export document"),
                     .optional("replace", .boolean, "replace a non-empty database's data (a backup is made first)"),
                     ParamSpec.progress],
            result: ResultSpec("import", "{\"counts\", \"backup\"?}", schema: ["type": "object"]), writes: true)) { params, _ in
            let sections = try ExportDocument.read(path: try absolutePath(params), maxBytes: maxImportBytes)
            var result: [String: JSONValue] = [:]
            let replace = params.bool("replace") ?? false
            if replace, try await !database.isEmpty() {
                let backup = try await database.automaticBackup(reason: "before-import", policy: context.liveConfig.current.backupPolicy,
                                                                now: context.clock.now())
                result["backup"] = .string(backup.path)
            }
            let counts = try await database.importData(sections, replace: replace)
            result["counts"] = .object(counts.mapValues { .int($0) })
            logger.notice("data imported", metadata: ["rows": "\(counts.values.reduce(0, +))"])
            return .object(result)
        }

        registry.register(MethodSpec(
            "tx.import", summary: "Import an asset's transactions from a CSV file (date,amount[,note,external_id]); idempotent.",
            params: [
                .required("asset", .reference, "the asset's id or name"),
                .required("path", .string, "the CSV file (header line first; dates YYYY-MM-DD or ISO 8601; decimal point '.')"),
                .optional("format", .string, "\"csv\" (the only format)"),
                .optional("partial", .boolean, "import the good rows and report the bad ones (default: a bad row refuses the file)"),
                .optional("progress", .boolean, "send progress notifications {method: \"progress\", params: {phase, done}} while it runs"),
            ],
            result: ResultSpec("import", "{\"rows\", \"imported\", \"already_present\", \"auto_allocated\", \"problems\"}",
                               schema: ["type": "object"]), writes: true)) { params, call in
            try await importTransactions(params, call: call, context: context)
        }
    }

    /// `tx.import`: a refused file is an error listing the first problems with their lines.
    static func importTransactions(_ params: Params, call: CallContext, context: DaemonContext) async throws -> JSONValue {
        let database = context.database
        if let format = params.string("format"), format.lowercased() != "csv" {
            throw DomainError.invalidField("format", "'\(format)' is not a supported format (csv)")
        }
        let partial = params.bool("partial") ?? false
        let asset = try params.requiredString("asset")
        var progress: (@Sendable (String, Int) -> Void)?
        if params.bool("progress") == true {
            progress = { @Sendable phase, rows in call.progress("tx.import", phase: phase, done: rows) }
        }
        let result = try await database.importTransactions(
            asset: asset, path: try absolutePath(params), partial: partial,
            now: context.clock.now(), timeZone: context.timeZone,
            progress: progress)
        if !partial, result.problemCount > 0 {
            let shown = result.problems.prefix(10).map { "line \($0.line): \($0.reason)" }.joined(separator: "; ")
            let more = result.problemCount > 10 ? "; and \(result.problemCount - 10) more" : ""
            throw DomainError(.invalidField, "nothing was imported: \(shown)\(more) (fix the file, or pass partial: true)",
                              details: ["field": "path", "problems": String(result.problemCount), "first_line": String(result.problems[0].line)])
        }
        if result.inserted > 0 {
            context.events.publish("tx.imported", ["asset": .string(asset), "count": .int(result.inserted)])
        }
        return [
            "rows": .int(result.rows), "imported": .int(result.inserted), "already_present": .int(result.alreadyPresent),
            "auto_allocated": .int(result.autoAllocated), "problem_count": .int(result.problemCount),
            "problems": .array(result.problems.map { ["line": .int($0.line), "reason": .string($0.reason)] }),
        ]
    }

    /// A whole file the caller named, refused before reading when it is larger than `maxBytes`.
    static func readBounded(_ path: String, maxBytes: Int) throws -> Data {
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int else {
            throw DomainError.invalidField("path", "cannot read \(path)")
        }
        guard size <= maxBytes else { throw DomainError(.tooLarge, "\(path) is larger than \(maxBytes) bytes") }
        guard let data = FileManager.default.contents(atPath: path) else { throw DomainError.invalidField("path", "cannot read \(path)") }
        return data
    }

    static func absolutePath(_ params: Params) throws -> String {
        let path = try params.requiredString("path")
        guard path.hasPrefix("/"), !path.contains("\0") else {
            throw DomainError.invalidField("path", "must be an absolute path (the daemon does not share your working directory)")
        }
        return path
    }
}
