import Foundation
import Glibc
import SavingsCore
import SavingsRPC
import SavingsStore

/// The `savingsd-export` document: `{"format", "version", "schema", "exported_at", <sections>}`,
/// each section an array of rows whose values are exactly the stored text.
package enum ExportDocument {
    static let format = "savingsd-export"
    static let version = 1

    static func header(database: SavingsDatabase, now: Date) async throws -> [String: JSONValue] {
        ["format": .string(format), "version": .int(version), "schema": .string(try await database.schemaName()),
         "exported_at": Wire.timestamp(now)]
    }

    package static func json(_ row: TransferRow) -> JSONValue {
        .object(row.mapValues { cell in
            switch cell {
            case .null: .null
            case .integer(let n): .number(String(n))
            case .text(let s): .string(s)
            }
        })
    }

    /// Reads and checks a document; every problem names where it is. `name` is how messages
    /// call the file, `field` the parameter that brought it (`path` or `upload`).
    package static func read(_ data: Data, name: String, field: String) throws -> [String: [TransferRow]] {
        let document: JSONValue
        do {
            document = try JSONParser.parse(Array(data))
        } catch {
            throw DomainError.invalidField(field, "\(name) is not a JSON document: \(error)")
        }
        guard case .object(let members) = document, members["format"]?.stringValue == format else {
            throw DomainError.invalidField(field, "\(name) is not a savingsd export (\"format\": \"\(format)\" is missing)")
        }
        guard members["version"]?.intValue == version else {
            throw DomainError.invalidField(field, "export version \(members["version"].map(JSONSerializer.serialize) ?? "?") is not supported (this build reads version \(version))")
        }
        var sections: [String: [TransferRow]] = [:]
        for (key, value) in members where !["format", "version", "schema", "exported_at"].contains(key) {
            guard let rows = value.arrayValue else { throw DomainError.invalidField("document", "\(key) must be an array") }
            sections[key] = try rows.enumerated().map { index, row in
                guard case .object(let fields) = row else { throw DomainError.invalidField("document", "\(key)[\(index)] must be an object") }
                return try fields.mapValues { value -> TransferCell in
                    switch value {
                    case .null: return .null
                    case .string(let s): return .text(s)
                    case .bool(let b): return .integer(b ? 1 : 0)
                    case .number(let literal):
                        guard let n = Int64(literal) else { throw DomainError.invalidField("document", "\(key)[\(index)]: \(literal) is not an integer") }
                        return .integer(n)
                    default: throw DomainError.invalidField("document", "\(key)[\(index)]: nested values are not allowed")
                    }
                }
            }
        }
        return sections
    }
}

/// Collects an export in memory for a response, refusing to grow past `limit` bytes.
final class ExportCollector: TransferSink, @unchecked Sendable {
    private let limit: Int
    private var bytes = 0
    private var sections: [String: [JSONValue]] = [:]

    init(limit: Int) { self.limit = limit }

    func write(_ section: String, _ row: TransferRow) throws {
        let value = ExportDocument.json(row)
        bytes += JSONSerializer.bytes(value).count + 1
        guard bytes <= limit else {
            throw DomainError(.tooLarge, "the export is larger than \(limit) bytes; pass path to write it to a file")
        }
        sections[section, default: []].append(value)
    }

    func document(header: [String: JSONValue]) -> JSONValue {
        var document = header
        for (section, _, _) in SavingsDatabase.transferSections { document[section] = .array(sections[section] ?? []) }
        return .object(document)
    }
}

/// Streams an export into a file: written beside the target (mode 0600), renamed into place.
final class ExportFileWriter: TransferSink, @unchecked Sendable {
    private let handle: FileHandle
    private var buffer: [UInt8] = []
    private var current: String?
    private var firstInSection = true
    private(set) var counts: [String: Int] = [:]
    private(set) var bytes = 0
    private var rows = 0
    /// Told (section, rows written so far) every `progressEvery` rows.
    private let progress: (@Sendable (_ section: String, _ rows: Int) -> Void)?
    static let progressEvery = 5_000

    private init(handle: FileHandle, progress: (@Sendable (String, Int) -> Void)?) {
        self.handle = handle
        self.progress = progress
    }

    static func write(to path: String, overwrite: Bool, header: [String: JSONValue],
                      progress: (@Sendable (_ section: String, _ rows: Int) -> Void)? = nil,
                      export: (ExportFileWriter) async throws -> Void) async throws -> (bytes: Int, counts: [String: Int]) {
        if FileManager.default.fileExists(atPath: path), !overwrite {
            throw DomainError(.conflict, "\(path) already exists (pass overwrite: true to replace it)", details: ["field": "path"])
        }
        let partial = path + ".partial-\(UUID().uuidString.prefix(8))"
        let fd = Glibc.open(partial, O_CREAT | O_EXCL | O_WRONLY | O_CLOEXEC, 0o600)
        guard fd >= 0 else { throw DomainError.invalidField("path", "cannot create \(path): \(String(cString: strerror(errno)))") }
        let writer = ExportFileWriter(handle: FileHandle(fileDescriptor: fd, closeOnDealloc: true), progress: progress)
        do {
            try await writer.fill(header: header, durable: true, export: export)
            guard rename(partial, path) == 0 else {
                throw DomainError.invalidField("path", "cannot move the export into place: \(String(cString: strerror(errno)))")
            }
            return (writer.bytes, writer.counts)
        } catch {
            unlink(partial)
            if error is DomainError || error is any DomainErrorConvertible { throw error }
            throw DomainError(.storageError, "the export could not be written: \((error as NSError).localizedDescription)")
        }
    }

    /// Streams an export into a spool (a download): not made durable, it lives for one request.
    static func write(into spool: Spool, header: [String: JSONValue],
                      progress: (@Sendable (_ section: String, _ rows: Int) -> Void)? = nil,
                      export: (ExportFileWriter) async throws -> Void) async throws -> [String: Int] {
        let writer = ExportFileWriter(handle: try spool.writer(), progress: progress)
        do {
            try await writer.fill(header: header, durable: false, export: export)
        } catch {
            if error is DomainError || error is any DomainErrorConvertible { throw error }
            throw DomainError(.storageError, "the export could not be written: \((error as NSError).localizedDescription)")
        }
        spool.refreshSize()
        return writer.counts
    }

    /// The header, every section `export` writes, the end of the document.
    private func fill(header: [String: JSONValue], durable: Bool, export: (ExportFileWriter) async throws -> Void) async throws {
        var opening = JSONSerializer.serialize(.object(header))
        opening.removeLast()  // the closing brace: sections follow
        try emit(Array(opening.utf8))
        try await export(self)
        try finish(durable: durable)
    }

    func write(_ section: String, _ row: TransferRow) throws {
        if section != current { try open(section) }
        try emit(Array(((firstInSection ? "\n" : ",\n") + JSONSerializer.serialize(ExportDocument.json(row))).utf8))
        firstInSection = false
        counts[section, default: 0] += 1
        rows += 1
        if rows % Self.progressEvery == 0 { progress?(section, rows) }
    }

    private func open(_ section: String) throws {
        if current != nil { try emit(Array("]".utf8)) }
        current = section
        firstInSection = true
        counts[section] = counts[section] ?? 0
        try emit(Array(",\"\(section)\":[".utf8))
    }

    private func finish(durable: Bool) throws {
        for (section, _, _) in SavingsDatabase.transferSections where counts[section] == nil { try open(section) }
        try emit(Array("]}\n".utf8))
        try flush()
        if durable { try handle.synchronize() }
        try handle.close()
    }

    private func emit(_ bytes: [UInt8]) throws {
        buffer += bytes
        self.bytes += bytes.count
        if buffer.count >= 1 << 20 { try flush() }
    }

    private func flush() throws {
        try handle.write(contentsOf: buffer)
        buffer.removeAll(keepingCapacity: true)
    }
}
