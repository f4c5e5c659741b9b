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
            "db.backup", summary: "A consistent copy of the database while the daemon keeps serving: sent to the caller, or written to PATH.",
            params: [.optional("path", .string, "absolute path of a new file on the daemon's side (mode 0600), e.g. in [database] backup_dir"),
                     Transfer.downloadParam,
                     .optional("overwrite", .boolean, "replace an existing file at path (default false)"),
                     .optional("progress", .boolean, "send progress notifications {method: \"progress\", params: {phase: \"pages\" then \"sending\", done, total}} while it runs")],
            result: ResultSpec("backup", "{\"path\", \"bytes\", \"pages\"}; with download {\"bytes\", \"pages\"}", schema: Schema.object([
                "path": Schema.described(Schema.string, "the file written (not with download)"), "bytes": Schema.count, "pages": Schema.count,
            ], optional: ["path"])),
            writes: false, transfer: .download)) { params, call in
            let progress: (@Sendable (Int, Int) -> Void)? = params.bool("progress") == true
                ? { @Sendable done, total in call.progress("db.backup", phase: "pages", done: done, total: total) } : nil
            if try Transfer.isDownload(params) {
                // Taken beside the database under a transfer's name, then held by descriptor alone.
                let copy = context.liveConfig.current.transferDirectory + "/" + NamelessFile.namePrefix + UUID().uuidString + ".db"
                let info = try await database.backup(to: copy, overwrite: false, progress: progress)
                let spool = try Spool(adopting: copy)
                try await Transfer.send(spool, call: call, method: "db.backup", progress: params.bool("progress") == true)
                logger.notice("backup sent", metadata: ["bytes": "\(spool.size)"])
                return ["bytes": .int(spool.size), "pages": .int(info.pages)]
            }
            let info = try await database.backup(to: try absolutePath(params, call: call), overwrite: params.bool("overwrite") ?? false, progress: progress)
            logger.notice("backup written", metadata: ["path": "\(info.path)", "bytes": "\(info.bytes)"])
            return ["path": .string(info.path), "bytes": .int(info.bytes), "pages": .int(info.pages)]
        }

        registry.register(MethodSpec(
            "db.check", summary: "Check the file (integrity, references) and the domain invariants.",
            params: [ParamSpec.progress],
            result: ResultSpec("report", "{\"ok\", \"integrity\", \"foreign_keys\", \"invariants\": [{name, ok, problems}]}",
                               schema: Schema.object([
                                   "ok": Schema.boolean,
                                   "integrity": Schema.described(Schema.array(Schema.string), "PRAGMA integrity_check: [\"ok\"] when sound"),
                                   "foreign_keys": Schema.described(Schema.array(Schema.string), "rows whose reference is broken"),
                                   "invariants": Schema.array(Schema.object(["name": Schema.string, "ok": Schema.boolean, "problems": Schema.array(Schema.string)])),
                               ])),
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
            "data.export", summary: "Everything as one versioned JSON document: returned, sent to the caller, or written to PATH.",
            params: [.optional("path", .string, "write the document here on the daemon's side (mode 0600) instead of returning it"),
                     Transfer.downloadParam,
                     .optional("overwrite", .boolean, "replace an existing file at path (default false)"),
                     .optional("progress", .boolean, "with path or download: send progress notifications {method: \"progress\", params: {phase: section, done: rows, total}}")],
            result: ResultSpec("export", "the document; {\"path\", \"bytes\", \"counts\"} when written to a file; {\"bytes\", \"counts\"} with download",
                               schema: Schema.oneOf([
                                   ExportDocument.schema,
                                   Schema.object(["path": Schema.string, "bytes": Schema.count, "counts": Schema.ref("Counts")], optional: ["path"],
                                                 "with path or download: what was written"),
                               ])), writes: false, transfer: .download)) { params, call in
            let header = try await ExportDocument.header(database: database, now: context.clock.now())
            let download = try Transfer.isDownload(params)
            guard download || params.has("path") else {
                let collector = ExportCollector(limit: maxInlineExportBytes)
                try await database.export(into: collector)
                return collector.document(header: header)
            }
            var progress: (@Sendable (String, Int) -> Void)?
            if params.bool("progress") == true {
                let total = try await database.transferRowCount()
                progress = { @Sendable section, rows in call.progress("data.export", phase: section, done: rows, total: total) }
            }
            if download {
                // The whole document is taken first (one read snapshot, never held open for a
                // slow reader), then sent.
                let spool = try Spool(directory: context.liveConfig.current.transferDirectory)
                let counts = try await ExportFileWriter.write(into: spool, header: header, progress: progress) {
                    try await database.export(into: $0)
                }
                try await Transfer.send(spool, call: call, method: "data.export", progress: params.bool("progress") == true)
                logger.notice("export sent", metadata: ["bytes": "\(spool.size)"])
                return ["bytes": .int(spool.size), "counts": .object(counts.mapValues { .int($0) })]
            }
            let path = try absolutePath(params, call: call)
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
            params: [.optional("path", .string, "the export document, a path on the daemon's side"),
                     Transfer.uploadParam("the export document"),
                     .optional("replace", .boolean, "replace a non-empty database's data (a backup is made first)"),
                     ParamSpec.progress],
            result: ResultSpec("import", "{\"counts\", \"backup\"?}", schema: Schema.object([
                "counts": Schema.ref("Counts"), "backup": Schema.described(Schema.string, "with replace: the backup made first"),
            ], optional: ["backup"])), writes: true, transfer: .upload)) { params, call in
            let replace = params.bool("replace") ?? false
            // Who may name a path is settled first: a refusal for it tells nothing of the database.
            if params.has("path") { try requireOwnUser(call, field: "path") }
            // Refused before anything is sent: a database holding data, without replace.
            if !replace, try await !database.isEmpty() { throw SavingsDatabase.notEmpty }
            let file = try await IncomingFile.take(params, call: call, method: "data.import", maxBytes: maxImportBytes, context: context)
            var result: [String: JSONValue] = [:]
            // Read as a stream: checked whole first, then written row by row (ExportDocument.restore).
            let counts = try await ExportDocument.restore(file.importFile, maxBytes: maxImportBytes, database: database, replace: replace) {
                if replace, try await !database.isEmpty() {
                    let backup = try await database.automaticBackup(reason: "before-import", policy: context.liveConfig.current.backupPolicy,
                                                                    now: context.clock.now())
                    result["backup"] = .string(backup.path)
                }
            }
            result["counts"] = .object(counts.mapValues { .int($0) })
            logger.notice("data imported", metadata: ["rows": "\(counts.values.reduce(0, +))"])
            return .object(result)
        }

        TransactionImport.register(into: &registry, context: context)
    }

    /// The file `field` names on the daemon's side, for the daemon's own user and root only:
    /// the daemon opens it with its own rights, which another user must not borrow to read or
    /// replace the daemon user's files.
    static func absolutePath(_ params: Params, call: CallContext, field: String = "path") throws -> String {
        let path = try params.requiredString(field)
        try requireOwnUser(call, field: field)
        guard path.hasPrefix("/"), !path.contains("\0") else {
            throw DomainError.invalidField(field, "must be an absolute path (the daemon does not share your working directory)")
        }
        return path
    }

    static func requireOwnUser(_ call: CallContext, field: String) throws {
        guard call.mayNamePaths else {
            throw DomainError(.permissionDenied,
                              "\(field): only savingsd's own user and root may name files on the daemon's side; send the file over the connection instead (upload, download; savingsctl does)",
                              details: ["field": field])
        }
    }
}

/// The file a method reads: the bytes the caller sent over the connection (`upload`), or a
/// path on the daemon's side (`path`).
struct IncomingFile: Sendable {
    /// How messages name it: its path, or "the upload".
    let name: String
    /// The parameter that brought it.
    let field: String
    private let spool: Spool?
    private let path: String?

    /// Receives the upload (at most `maxBytes` and `rpc.max_upload_bytes`), or checks the path.
    static func take(_ params: Params, call: CallContext, method: String, maxBytes: Int, context: DaemonContext) async throws -> IncomingFile {
        guard try Transfer.isUpload(params) else {
            let path = try DataMethods.absolutePath(params, call: call)
            return IncomingFile(name: path, field: "path", spool: nil, path: path)
        }
        let config = context.liveConfig.current
        let spool = try await Transfer.receive(params, call: call, method: method, limit: min(maxBytes, config.maxUploadBytes),
                                               lineLimit: config.maxLineBytes, directory: config.transferDirectory)
        return IncomingFile(name: "the upload", field: "upload", spool: spool, path: nil)
    }

    /// A CSV import's view of it, read in chunks.
    var importFile: ImportFile {
        if let spool { return ImportFile(name: name, field: field, size: spool.size) { try spool.reader() } }
        return .path(path ?? "")
    }

    /// The whole file, refused before reading when it is larger than `maxBytes`.
    func contents(maxBytes: Int) throws -> Data {
        if let spool {
            guard spool.size <= maxBytes else { throw DomainError(.tooLarge, "the upload is larger than \(maxBytes) bytes") }
            return try spool.contents()
        }
        let path = path ?? ""
        guard let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int else {
            throw DomainError.invalidField("path", "cannot read \(path)")
        }
        guard size <= maxBytes else { throw DomainError(.tooLarge, "\(path) is larger than \(maxBytes) bytes") }
        guard let data = FileManager.default.contents(atPath: path) else { throw DomainError.invalidField("path", "cannot read \(path)") }
        return data
    }
}
