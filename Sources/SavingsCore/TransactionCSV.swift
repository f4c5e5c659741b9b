import Foundation

/// An RFC 4180 CSV tokenizer fed in chunks, so files of any size stream through bounded
/// memory: quoted fields, doubled quotes, CRLF or LF, newlines inside quotes.
public struct CSVTokenizer: Sendable {
    public struct Record: Sendable, Equatable {
        /// The line the record starts on (1-based).
        public var line: Int
        public var fields: [String]
        /// Whether a field's bytes are not text in the file's encoding (its fields then hold
        /// U+FFFD): such a record refuses the file.
        public var undecodable = false

        public init(line: Int, fields: [String], undecodable: Bool = false) {
            self.line = line
            self.fields = fields
            self.undecodable = undecodable
        }
    }

    /// Longest field accepted; a longer one is reported instead of growing without bound.
    public static let maxFieldBytes = 64 * 1024

    private var field: [UInt8] = []
    private var fields: [String] = []
    private var inQuotes = false
    private var quoteSeen = false
    private var line = 1
    private var recordLine = 1
    private var fieldStarted = false
    private var pendingCR = false
    private var recordUndecodable = false
    public private(set) var oversized: Int?
    /// The line of the first field holding a NUL byte (a binary file, or UTF-16 read as UTF-8):
    /// such a file is refused, never stored with the byte in it.
    public private(set) var nulByte: Int?
    private let separator: UInt8
    private let encoding: ImportRules.Encoding

    /// A tokenizer of fields split by `separator` in `encoding`, whose first line is `line`.
    public init(separator: UInt8 = UInt8(ascii: ","), encoding: ImportRules.Encoding = .utf8, line: Int = 1) {
        self.separator = separator
        self.encoding = encoding
        self.line = line
        recordLine = line
    }

    /// Feeds a buffer of bytes (what a file read hands over), calling `body` with each record
    /// it completes. The record's fields are lent for the call: one kept past it costs a copy,
    /// one that is not lets the next record reuse the same storage.
    public mutating func feed(_ bytes: UnsafeRawBufferPointer, _ body: (Record) throws -> Void) rethrows {
        var index = 0
        let count = bytes.count
        while index < count {
            // A run of plain bytes inside an unquoted field is appended at once.
            if !inQuotes, !pendingCR, !quoteSeen {
                let start = index
                while index < count {
                    let byte = bytes[index]
                    if byte == separator || byte == 0x22 || byte == 0x0A || byte == 0x0D { break }
                    index += 1
                }
                if index > start {
                    fieldStarted = true
                    append(UnsafeRawBufferPointer(rebasing: bytes[start..<index]))
                }
                if index == count { return }
            } else if inQuotes {
                // So is a run inside quotes, up to the closing (or a doubled) quote.
                let start = index
                while index < count {
                    let byte = bytes[index]
                    if byte == 0x22 { break }
                    if byte == 0x0A { line += 1 }
                    index += 1
                }
                if index > start { append(UnsafeRawBufferPointer(rebasing: bytes[start..<index])) }
                if index == count { return }
            }
            try feedBytes(CollectionOfOne(bytes[index]), body)
            index += 1
        }
    }

    /// Feeds bytes; returns the records completed by them.
    public mutating func feed(_ bytes: some Sequence<UInt8>) -> [Record] {
        var records: [Record] = []
        feedBytes(bytes) { records.append($0) }
        return records
    }

    @inline(__always)
    private mutating func feedBytes(_ bytes: some Sequence<UInt8>, _ body: (Record) throws -> Void) rethrows {
        for byte in bytes {
            if pendingCR {
                pendingCR = false
                if byte == 0x0A { continue }
            }
            if inQuotes {
                if byte == 0x22 {
                    inQuotes = false
                    quoteSeen = true
                } else {
                    if byte == 0x0A { line += 1 }
                    append(byte)
                }
                continue
            }
            if byte == separator {
                endField()
                continue
            }
            switch byte {
            case 0x22 where quoteSeen:
                // A doubled quote inside a quoted field.
                append(byte)
                inQuotes = true
                quoteSeen = false
            case 0x22 where !fieldStarted:
                inQuotes = true
                fieldStarted = true
            case 0x0D, 0x0A:
                pendingCR = byte == 0x0D
                if endRecordFields() {
                    defer {
                        fields.removeAll(keepingCapacity: true)
                        recordUndecodable = false
                    }
                    try body(Record(line: recordLine, fields: fields, undecodable: recordUndecodable))
                }
                line += 1
                recordLine = line
            default:
                quoteSeen = false
                fieldStarted = true
                append(byte)
            }
        }
    }

    /// The last record when the input does not end with a newline.
    public mutating func finish() -> Record? { endRecord() }

    /// Whether the input ended inside a quoted field.
    public var unterminatedQuote: Bool { inQuotes }

    private mutating func append(_ run: UnsafeRawBufferPointer) {
        let room = Self.maxFieldBytes - field.count
        if run.count > room, oversized == nil { oversized = recordLine }
        field.append(contentsOf: run.prefix(max(0, room)))
    }

    private mutating func append(_ byte: UInt8) {
        if field.count >= Self.maxFieldBytes {
            if oversized == nil { oversized = recordLine }
            return
        }
        field.append(byte)
    }

    private mutating func endField() {
        if nulByte == nil, !field.isEmpty, field.withUnsafeBufferPointer({ memchr($0.baseAddress!, 0, $0.count) }) != nil {
            nulByte = recordLine
        }
        if let text = encoding.text(field) {
            fields.append(text)
        } else {
            recordUndecodable = true
            fields.append(String(decoding: field, as: UTF8.self))
        }
        field.removeAll(keepingCapacity: true)
        fieldStarted = false
        quoteSeen = false
    }

    private mutating func endRecord() -> Record? {
        guard endRecordFields() else { return nil }
        defer {
            fields.removeAll(keepingCapacity: true)
            recordUndecodable = false
        }
        return Record(line: recordLine, fields: fields, undecodable: recordUndecodable)
    }

    /// Ends the record's last field; false for a blank line (no record).
    private mutating func endRecordFields() -> Bool {
        if fields.isEmpty && field.isEmpty && !fieldStarted { return false }
        endField()
        return true
    }
}

/// One transaction row of an import file, validated.
public struct TransactionCSVRow: Sendable, Equatable {
    public var line: Int
    public let date: Date
    public let amount: Decimal
    public var note: String?
    public var externalID: String?
    /// `Amount.plainText(amount)`, the stored form, worked out once from the file's text.
    public let amountText: String
    /// `date` in whole milliseconds since 1970, as the store keeps it.
    public let milliseconds: Int64
    /// The amount in 10⁻¹⁸ units (`RunningTotal.units`), nil when it does not fit.
    public let units: Int128?

    /// `amountText` and `units`, when the caller has them already, save working them out
    /// again (`units: .some(nil)`: known not to fit).
    public init(line: Int, date: Date, amount: Decimal, note: String?, externalID: String?, amountText: String? = nil,
                units: Int128?? = nil) {
        self.line = line
        self.date = date
        self.amount = amount
        self.note = note
        self.externalID = externalID
        let amountText = amountText ?? Amount.plainText(amount)
        self.amountText = amountText
        milliseconds = Timestamp.milliseconds(date)
        self.units = units ?? RunningTotal.units(amountText)
    }

    /// `Timestamp.format(date)`, the stored form: made when asked for, since a row carries
    /// no text of its own for it (a heap string copied with the row, for each row).
    public var dateText: String { Timestamp.format(milliseconds: milliseconds) }

    /// The row's idempotency key when the file gives no external_id: a stable hash of what it
    /// says, so the same row imported again is recognised.
    public var contentKey: String { Self.contentKey(contentHash) }

    /// The key of a row without an external_id: "csv-" and its content hash, and for the n-th
    /// identical row of one file after the first, "-n".
    public static func contentKey(_ hash: (UInt64, UInt64), repeat n: UInt32 = 0) -> String {
        let key = StableHash.hex(hash, prefix: "csv-")
        return n > 0 ? key + "-\(n)" : key
    }

    /// The hash `contentKey` shows: of "date|amount|note", hashed part by part.
    public var contentHash: (UInt64, UInt64) {
        var hash = StableHash.Accumulator()
        Timestamp.withFormatted(milliseconds: milliseconds) { hash.add(bytes: $0) }
        Self.addContent(amountText: amountText, note: note, to: &hash)
        return hash.lanes
    }

    /// The content hash of a row as stored (its date and amount in their stored forms).
    public static func contentHash(dateText: String, amountText: String, note: String?) -> (UInt64, UInt64) {
        var hash = StableHash.Accumulator()
        hash.add(dateText)
        addContent(amountText: amountText, note: note, to: &hash)
        return hash.lanes
    }

    /// What follows the date in a content hash: "|amount|note".
    private static func addContent(amountText: String, note: String?, to hash: inout StableHash.Accumulator) {
        hash.add("|")
        hash.add(amountText)
        hash.add("|")
        if let note { hash.add(note) }
    }
}

/// The header and row rules of `tx.import` CSV files: `date,amount[,note,external_id]`.
public struct TransactionCSVFormat: Sendable {
    public let columns: [String: Int]
    public let timeZone: TimeZone
    public let now: Date
    /// Where each column is, looked up once rather than by name on every row.
    private let dateColumn: Int, amountColumn: Int, noteColumn: Int?, externalIDColumn: Int?
    private var dates: RowDates
    public static let maxExternalIDLength = 200

    /// Reads the header; unknown or missing columns are refused with the line number.
    public init(header: CSVTokenizer.Record, timeZone: TimeZone, now: Date) throws {
        var columns: [String: Int] = [:]
        for (index, raw) in header.fields.enumerated() {
            var name = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if index == 0, name.hasPrefix("\u{FEFF}") { name.removeFirst() }
            guard ["date", "amount", "note", "external_id"].contains(name) else {
                throw DomainError.invalidField("path", "line \(header.line): unknown column '\(raw)' (expected date,amount[,note,external_id])")
            }
            guard columns[name] == nil else { throw DomainError.invalidField("path", "line \(header.line): column '\(name)' appears twice") }
            columns[name] = index
        }
        guard columns["date"] != nil, columns["amount"] != nil else {
            throw DomainError.invalidField("path", "line \(header.line): the header must name date and amount columns")
        }
        self.columns = columns
        (dateColumn, amountColumn, noteColumn, externalIDColumn) = (columns["date"]!, columns["amount"]!, columns["note"], columns["external_id"])
        self.timeZone = timeZone
        self.now = now
        dates = RowDates(formats: [.iso8601], timeZone: timeZone, now: now)
    }

    /// The field without surrounding white space. Most fields have none, which a look at the
    /// first and last byte shows without Foundation's Unicode-aware trimming.
    static func trimmed(_ field: String) -> String {
        func plain(_ byte: UInt8) -> Bool { byte > 0x20 && byte < 0x80 }
        let utf8 = field.utf8
        guard let first = utf8.first, let last = utf8.last else { return field }
        if plain(first), plain(last) { return field }
        // Spaces and tabs at the ends (a template's empty column leaves one) are cut by index;
        // what is left with another character at an end (a no-break space, a control code) is
        // Foundation's to decide, as before.
        func blank(_ byte: UInt8) -> Bool { byte == 0x20 || byte == 0x09 }
        var start = utf8.startIndex, end = utf8.endIndex
        while start < end, blank(utf8[start]) { start = utf8.index(after: start) }
        while end > start, blank(utf8[utf8.index(before: end)]) { end = utf8.index(before: end) }
        guard start < end else { return "" }
        if plain(utf8[start]), plain(utf8[utf8.index(before: end)]) { return String(field[start..<end]) }
        return field.trimmingCharacters(in: .whitespaces)
    }

    /// A row, or the reason it is refused (prefixed with nothing: the caller adds the line).
    public mutating func row(_ record: CSVTokenizer.Record) throws -> TransactionCSVRow {
        guard record.fields.count == columns.count else {
            throw DomainError.invalidField("path", "expected \(columns.count) fields, found \(record.fields.count)")
        }
        func value(_ column: Int?) -> String? { column.map { Self.trimmed(record.fields[$0]) } }
        let dateText = Self.trimmed(record.fields[dateColumn])
        let date = try day(dateText)
        let amountField = Self.trimmed(record.fields[amountColumn])
        // The common plain shape is read once; any other goes through the checks one by one.
        let (amount, amountText, units): (Decimal, String, Int128?)
        if let stored = Amount.stored(parsing: amountField), stored.value != 0 {
            (amount, amountText, units) = stored
        } else {
            amount = try AssetTransaction.validAmount(amountField)
            amountText = Amount.plainText(parsing: amountField) ?? Amount.plainText(amount)
            units = RunningTotal.units(amountText)
        }
        let note = value(noteColumn).flatMap { $0.isEmpty ? nil : $0 }
        _ = try GoalRules.validNotes(note)
        let externalID = value(externalIDColumn).flatMap { $0.isEmpty ? nil : $0 }
        if let externalID, externalID.count > Self.maxExternalIDLength {
            throw DomainError.invalidField("external_id", "longer than \(Self.maxExternalIDLength) characters")
        }
        return TransactionCSVRow(line: record.line, date: date, amount: amount, note: note, externalID: externalID,
                                 amountText: amountText, units: units)
    }

    /// A date field's instant (to the millisecond).
    private mutating func day(_ field: String) throws -> Date {
        guard let day = try dates.date(field, future: { DomainError.invalidField("date", "\(field) is in the future") }) else {
            throw DomainError.invalidField("date", "'\(field)' is not a date (YYYY-MM-DD or ISO 8601)")
        }
        return day
    }
}

/// A stable, platform-independent hash (two FNV-1a 64 lanes) for idempotency keys; not a
/// security boundary.
public enum StableHash {
    public static func hex128(_ text: String) -> String { hex(lanes(text)) }

    public static func lanes(_ text: String) -> (UInt64, UInt64) {
        var hash = Accumulator()
        hash.add(text)
        return hash.lanes
    }

    /// The lanes of several texts added one after another: the same as of their concatenation.
    public struct Accumulator {
        public private(set) var lanes: (UInt64, UInt64) = (0xcbf2_9ce4_8422_2325, 0x8422_2325_cbf2_9ce4)

        public init() {}

        public mutating func add(_ text: String) {
            var text = text
            text.withUTF8 { add(bytes: $0) }
        }

        public mutating func add(bytes: UnsafeBufferPointer<UInt8>) {
            var (a, b) = lanes
            for byte in bytes {
                a = (a ^ UInt64(byte)) &* 0x0000_0100_0000_01B3
                b = (b ^ UInt64(byte ^ 0x5A)) &* 0x0000_0100_0000_01B3
            }
            lanes = (a, b)
        }
    }

    /// The two lanes as 32 hex digits, after `prefix`.
    public static func hex(_ lanes: (UInt64, UInt64), prefix: StaticString = "") -> String {
        let start = prefix.utf8CodeUnitCount
        return String(unsafeUninitializedCapacity: start + 32) { buffer in
            for index in 0..<start { buffer[index] = prefix.utf8Start[index] }
            let digits: StaticString = "0123456789abcdef"
            func put(_ value: UInt64, at offset: Int) {
                for nibble in 0..<16 { buffer[offset + nibble] = digits.utf8Start[Int(value >> (60 - 4 * UInt64(nibble)) & 0xF)] }
            }
            put(lanes.0, at: start)
            put(lanes.1, at: start + 16)
            return start + 32
        }
    }
}

