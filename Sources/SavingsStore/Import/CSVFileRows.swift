import Foundation
import SavingsCore

/// A file an import reads: a path the daemon opens itself, or bytes the caller sent over the
/// connection (already held by the daemon). Problems name it and the parameter that brought it.
public struct ImportFile: Sendable {
    /// How messages name the file: its path, or "the upload".
    public let name: String
    /// The parameter that brought it (`path` or `upload`).
    public let field: String
    /// Its size in bytes, when known: how many rows to expect.
    public let size: Int?
    let open: @Sendable () throws -> FileHandle?

    public init(name: String, field: String, size: Int?, open: @escaping @Sendable () throws -> FileHandle?) {
        self.name = name
        self.field = field
        self.size = size
        self.open = open
    }

    public static func path(_ path: String) -> ImportFile {
        let size = (try? FileManager.default.attributesOfItem(atPath: path))?[.size] as? Int
        return ImportFile(name: path, field: "path", size: size) { FileHandle(forReadingAtPath: path) }
    }

    /// Rows likely in the file: a typical row (a date, an amount, a short note) is about 24 bytes.
    var expectedRows: Int { (size ?? 0) / 24 }

    /// The file's first `count` bytes (fewer in a shorter file).
    func prefix(_ count: Int) throws -> [UInt8] {
        let handle = try reader()
        defer { try? handle.close() }
        var bytes: [UInt8] = []
        while bytes.count < count {
            guard let chunk = try? handle.read(upToCount: count - bytes.count), !chunk.isEmpty else { break }
            bytes += chunk
        }
        return bytes
    }

    /// A handle reading the file from its start, or an `invalid_field` naming it.
    public func reader() throws -> FileHandle {
        guard let handle = try open() else { throw DomainError.invalidField(field, "cannot read \(name)") }
        return handle
    }
}

/// Streams an import file's rows in bounded memory: one chunk, one record at a time. Without
/// rules the file is `date,amount[,note,external_id]`; with them, whatever they describe.
struct CSVFileRows: Sendable {
    let file: ImportFile
    let rules: ImportRules?
    let now: Date
    let timeZone: TimeZone
    static let chunkSize = 256 * 1024
    /// Longest line `skip` looks at when it searches for the header.
    static let maxSkippedLine = 64 * 1024

    private func format(_ header: CSVTokenizer.Record?) throws -> any ImportRowFormat {
        guard let rules else { return try TransactionCSVFormat(header: header!, timeZone: timeZone, now: now) }
        return try RulesRowFormat(rules: rules, header: header, now: now, timeZone: timeZone)
    }

    /// Bytes that are not text in the file's encoding refuse the file: nothing is stored with
    /// U+FFFD in place of what the file said.
    private func undecodable(_ line: Int) -> DomainError {
        guard let rules else {
            return DomainError.invalidField(file.field, "line \(line): bytes that are not UTF-8 text; the file is in another encoding (convert it, e.g. iconv -f WINDOWS-1252 -t UTF-8, or import it with rules that set encoding)")
        }
        return DomainError.invalidField(file.field, rules.encoding.undecodable(line: line, rules: rules.name))
    }

    /// Calls `body` with each data row (or its problem), in file order.
    func forEach(_ body: (Result<ImportRow, CSVImportResult.Problem>) throws -> Void) throws {
        let field = file.field, name = file.name
        guard let handle = try file.open() else {
            throw DomainError.invalidField(field, "cannot read \(name)")
        }
        defer { try? handle.close() }
        var skipper = LineSkipper(rules: rules)
        var tokenizer: CSVTokenizer?
        var rowFormat: (any ImportRowFormat)?
        func take(_ record: CSVTokenizer.Record) throws {
            if record.undecodable { throw undecodable(record.line) }
            if rowFormat == nil {
                let header = rules?.header == false ? nil : record
                do {
                    rowFormat = try format(header)
                } catch let error as DomainError where error.details["field"] == "path" && field != "path" {
                    throw DomainError.invalidField(field, String(error.message.dropFirst("path: ".count)))
                }
                // A file without a header starts with a row.
                if header != nil { return }
            }
            do {
                try body(.success(try rowFormat!.next(record)))
                while let more = rowFormat!.followUp() { try body(.success(more)) }
            } catch let failure as ImportFileFailure {
                throw failure.error
            } catch let error as DomainError {
                try body(.failure(.init(line: record.line, reason: error.message, unmappedCode: error.details["unmapped"])))
            }
        }
        while true {
            let chunk: Data
            do {
                chunk = try handle.read(upToCount: Self.chunkSize) ?? Data()
            } catch {
                throw DomainError.invalidField(field, "cannot read \(name)")
            }
            if chunk.isEmpty { break }
            var bytes = chunk[...]
            if tokenizer == nil {
                guard let line = try skipper.skip(&bytes) else { continue }
                tokenizer = CSVTokenizer(separator: rules?.separator ?? UInt8(ascii: ","), encoding: rules?.encoding ?? .utf8, line: line)
            }
            try bytes.withUnsafeBytes { try tokenizer!.feed($0, take) }
            if let line = tokenizer!.oversized {
                throw DomainError.invalidField(field, "line \(line): a field is longer than \(CSVTokenizer.maxFieldBytes) bytes")
            }
            if let line = tokenizer!.nulByte {
                throw DomainError.invalidField(field, "line \(line): a field holds a NUL byte; is it a text file (a UTF-16 file needs encoding in the rules)?")
            }
        }
        if tokenizer == nil, let rules {
            throw DomainError.invalidField("rules", "\(rules.name): no line of the file matches skip (\(skipper.describe))")
        }
        if tokenizer?.unterminatedQuote == true { throw DomainError.invalidField(field, "the file ends inside a quoted field") }
        if let last = tokenizer?.finish() { try take(last) }
        if let line = tokenizer?.nulByte {
            throw DomainError.invalidField(field, "line \(line): a field holds a NUL byte; is it a text file (a UTF-16 file needs encoding in the rules)?")
        }
        if rowFormat == nil {
            throw DomainError.invalidField(field, rules == nil ? "the file is empty (expected a header: date,amount[,note,external_id])" : "the file has no rows")
        }
    }
}

/// Drops the lines before a file's header (a count, or up to a line matching a pattern) and a
/// UTF-8 byte order mark, across chunk boundaries.
private struct LineSkipper {
    let skip: ImportRules.Skip
    let encoding: ImportRules.Encoding
    private var atStart = true
    private var skipped = 0
    private var carried: [UInt8] = []
    /// The pattern's steps so far: the header search is bounded like the rules' patterns.
    private var patternSteps = 0
    static let maxPatternSteps = 5_000_000
    static let maxSkippedLines = 10_000

    init(rules: ImportRules?) {
        skip = rules?.skip ?? .lines(0)
        encoding = rules?.encoding ?? .utf8
    }

    var describe: String {
        switch skip {
        case .lines(let count): "\(count) lines"
        case .until(let pattern): "\"\(pattern.shown)\""
        }
    }

    /// Removes skipped bytes from the front of `bytes`; the header's line number once it
    /// starts in them, nil while still skipping.
    mutating func skip(_ bytes: inout Data.SubSequence) throws -> Int? {
        if atStart, encoding == .utf8 || encoding == .utf8BOM {
            if bytes.starts(with: [0xEF, 0xBB, 0xBF]) { bytes = bytes.dropFirst(3) }
        }
        atStart = false
        while true {
            switch skip {
            case .lines(let count):
                if skipped >= count { return skipped + 1 }
            case .until(let pattern):
                // The start of a line that began in an earlier chunk is carried over.
                guard let newline = bytes.firstIndex(of: 0x0A) else {
                    carried += bytes.prefix(max(0, CSVFileRows.maxSkippedLine - carried.count))
                    bytes = bytes[bytes.endIndex...]
                    return nil
                }
                let line = carried + bytes[..<newline].prefix(CSVFileRows.maxSkippedLine)
                var text = encoding.text(line) ?? String(decoding: line, as: UTF8.self)
                if text.hasSuffix("\r") { text.removeLast() }
                let found: (matched: Bool, steps: Int)
                do {
                    found = try pattern.matchesCounting(text)
                    patternSteps += found.steps
                } catch is RowPattern.StepLimit {
                    patternSteps = .max
                    found = (false, 0)
                }
                guard patternSteps <= Self.maxPatternSteps, skipped < Self.maxSkippedLines else {
                    throw DomainError.invalidField("rules", "skip: none of the first \(skipped + 1) lines matches \(describe) within the time a header search may take; simplify the pattern or skip a count of lines")
                }
                if found.matched {
                    // The header line goes to the tokenizer whole.
                    bytes = (Data(carried) + bytes)[...]
                    carried = []
                    return skipped + 1
                }
                carried = []
            }
            guard let newline = bytes.firstIndex(of: 0x0A) else {
                bytes = bytes[bytes.endIndex...]
                return nil
            }
            bytes = bytes[bytes.index(after: newline)...]
            skipped += 1
        }
    }
}
