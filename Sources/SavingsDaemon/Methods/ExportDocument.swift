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

    /// The largest row a document may hold (an execution record's frozen month, some 250
    /// bytes an event, is the largest a real one has): what one row's reading holds at most.
    static let maxRowBytes = 16 << 20
    /// The largest value of the header's members.
    static let maxHeaderValueBytes = 64 << 10
    /// One document is read at a time: however many arrive at once, memory holds one reader's
    /// chunk and row (imports are written one at a time anyway).
    static let turns = Turns()

    /// Restores the document in `file` (`data.import`): reads it once to check every row of
    /// every section (nothing is written if one is wrong), calls `beforeWriting` (the backup),
    /// then reads it again section by section as the rows go into the database in one
    /// transaction. Memory stays flat whatever the document's size: a chunk of the file and one
    /// row at a time. Every problem names the file's field (`upload` or `path`) and the place.
    static func restore(_ file: ImportFile, maxBytes: Int, database: SavingsDatabase, replace: Bool,
                        beforeWriting: () async throws -> Void) async throws -> [String: Int] {
        if let size = file.size, size > maxBytes { throw DomainError(.tooLarge, "\(file.name) is larger than \(maxBytes) bytes") }
        await turns.enter()
        do {
            // An import that went in while this one waited its turn leaves no room for it.
            if !replace, try await !database.isEmpty() { throw SavingsDatabase.notEmpty }
            let check = try await database.transferDocumentCheck()
            let (document, checked) = try await OffPool.run { try Self.check(file, check) }
            try await beforeWriting()
            let counts = try await relabel(file) { try await database.importData(document, checked: checked, replace: replace) }
            await turns.leave()
            return counts
        } catch {
            await turns.leave()
            throw error
        }
    }

    /// The first reading: the header, every section's place in the file, every row checked.
    /// Syntax errors are reported first (the file is not JSON), then a missing or other format
    /// or version, then the first row that is wrong.
    static func check(_ file: ImportFile, _ start: TransferDocumentCheck) throws -> (Sections, TransferDocumentCheck) {
        var check = start
        var header: [String: JSONValue] = [:]
        var offsets: [String: Int] = [:]
        var problem: (any Error)?
        try relabel(file) {
            let reader = try JSONFileReader(try file.reader())
            try reader.members { key in
                guard header[key] == nil, offsets[key] == nil else {
                    throw JSONParser.Failure(message: "duplicate key \"\(key)\"", offset: reader.offset)
                }
                if headerKeys.contains(key) {
                    let (bytes, at) = try reader.value(maxBytes: maxHeaderValueBytes)
                    header[key] = try JSONFileReader.parse(bytes, at: at)
                    return
                }
                _ = try reader.peek()
                offsets[key] = reader.offset
                do {
                    try check.section(key)
                } catch {
                    problem = problem ?? error
                }
                guard try reader.peek() == UInt8(ascii: "[") else {
                    problem = problem ?? DomainError.invalidField("document", "\(key) must be an array")
                    try reader.skip()
                    return
                }
                try reader.elements(maxBytes: maxRowBytes) { index, bytes, at in
                    let value = try JSONFileReader.parse(bytes, at: at)
                    guard problem == nil else { return }
                    do {
                        try check.row(try row(value, section: key, index: index), section: key, index: index)
                    } catch {
                        problem = error
                    }
                }
            }
            try reader.expectEnd()
        }
        guard header["format"]?.stringValue == format else {
            throw DomainError.invalidField(file.field, "\(file.name) is not a savingsd export (\"format\": \"\(format)\" is missing)")
        }
        guard header["version"]?.intValue == version else {
            throw DomainError.invalidField(file.field, "export version \(header["version"].map(JSONSerializer.serialize) ?? "?") is not supported (this build reads version \(version))")
        }
        if let problem { throw relabeled(problem, file) }
        return (Sections(file: file, offsets: offsets), check)
    }

    /// The document as JSON Schema: the header, then each section's rows, column by column as
    /// stored (text, whole numbers or null; the columns are the tables' of the `schema` named).
    static let schema: JSONValue = {
        let row = Schema.map(["type": ["string", "integer", "null"]], "a row: its columns and their stored values")
        var properties: [String: JSONValue] = [
            "format": Schema.constant(.string(format)), "version": Schema.constant(.int(version)),
            "schema": Schema.described(Schema.string, "the newest migration of the database exported"), "exported_at": Schema.timestamp,
        ]
        for (section, table, _) in SavingsDatabase.transferSections {
            properties[section] = Schema.described(Schema.array(row), "the rows of table \(table)")
        }
        return Schema.object(properties, "without path or download: the document itself")
    }()

    static let headerKeys: Set<String> = ["format", "version", "schema", "exported_at"]

    /// A row of a document as the store takes it: flat, numbers whole.
    static func row(_ value: JSONValue, section: String, index: Int) throws -> TransferRow {
        guard case .object(let fields) = value else { throw DomainError.invalidField("document", "\(section)[\(index)] must be an object") }
        return try fields.mapValues { value -> TransferCell in
            switch value {
            case .null: return .null
            case .string(let s): return .text(s)
            case .bool(let b): return .integer(b ? 1 : 0)
            case .number(let literal):
                guard let n = Int64(literal) else {
                    throw DomainError.invalidField("document", "\(section)[\(index)]: \(literal) is not a whole number (amounts are decimal strings)")
                }
                return .integer(n)
            default: throw DomainError.invalidField("document", "\(section)[\(index)]: nested values are not allowed")
            }
        }
    }

    /// The document's sections where the first reading found them, read again row by row.
    struct Sections: TransferSource {
        let file: ImportFile
        let offsets: [String: Int]

        func forEachRow(in section: String, _ body: (Int, TransferRow) throws -> Void) throws {
            guard let offset = offsets[section] else { return }
            let reader = try JSONFileReader(try file.reader(), offset: offset)
            try reader.elements(maxBytes: maxRowBytes) { index, bytes, at in
                try body(index, try row(try JSONFileReader.parse(bytes, at: at), section: section, index: index))
            }
        }
    }

    /// Runs `body`, its problems said as the file's: a problem of the document (`document`) names
    /// the field that brought it (`upload`, `path`); text that is not JSON says where.
    static func relabel<T>(_ file: ImportFile, _ body: () async throws -> T) async throws -> T {
        do {
            return try await body()
        } catch {
            throw Self.relabeled(error, file)
        }
    }

    static func relabel<T>(_ file: ImportFile, _ body: () throws -> T) throws -> T {
        do {
            return try body()
        } catch {
            throw Self.relabeled(error, file)
        }
    }

    static func relabeled(_ error: any Error, _ file: ImportFile) -> any Error {
        switch error {
        case let failure as JSONParser.Failure:
            return DomainError.invalidField(file.field, "\(file.name) is not a JSON document: \(failure)")
        case let long as JSONFileReader.ValueTooLong:
            return DomainError.invalidField(file.field, "\(file.name) holds a row longer than \(long.limit) bytes (at byte \(long.offset))")
        case let error as DomainError where error.details["field"] == "document":
            let message = error.message.hasPrefix("document: ") ? String(error.message.dropFirst("document: ".count)) : error.message
            // The field names an upload; a path is named as well.
            return DomainError.invalidField(file.field, (file.field == "path" ? "\(file.name): " : "") + message)
        case is DomainError, is any DomainErrorConvertible:
            return error
        default:
            return DomainError(.storageError, "\(file.name) could not be read: \((error as NSError).localizedDescription)")
        }
    }

    /// The first reading alone, as `data.import` does it before writing (the fuzz target `export`
    /// drives it): the rows of each section of a document that passes.
    package static func checkedCounts(_ file: ImportFile, _ start: TransferDocumentCheck) throws -> [String: Int] {
        try check(file, start).1.counts
    }
}

/// Turns taken one at a time, in the order asked.
actor Turns {
    private var taken = false
    private var waiting: [CheckedContinuation<Void, Never>] = []

    func enter() async {
        guard taken else {
            taken = true
            return
        }
        await withCheckedContinuation { waiting.append($0) }
    }

    func leave() {
        if waiting.isEmpty { taken = false } else { waiting.removeFirst().resume() }
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
