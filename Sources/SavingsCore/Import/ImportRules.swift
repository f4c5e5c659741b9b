import Foundation

/// How to read one bank's or exchange's CSV export: a rules file (TOML), in the manner of
/// hledger's CSV rules. Built by `ImportRules(toml:name:)`, which refuses an unknown key, a
/// value of the wrong type, a bad regular expression or date format, naming the key.
public struct ImportRules: Sendable {
    /// A column of the file: its header name (compared without case or surrounding space), or
    /// its position (1 is the first).
    public enum Column: Sendable, Equatable, CustomStringConvertible {
        case name(String)
        /// The first of these names that the header has: one rules file for every version
        /// of a provider's header.
        case names([String])
        case position(Int)

        public var description: String {
            switch self {
            case .name(let name): "'\(name)'"
            case .names(let names): names.map { "'\($0)'" }.joined(separator: " or ")
            case .position(let position): "column \(position)"
            }
        }
    }

    /// The file's text encoding; separators, quotes and digits are ASCII in all of them.
    public enum Encoding: String, Sendable, CaseIterable {
        case utf8 = "utf-8"
        /// UTF-8 behind a byte order mark (one is skipped in either UTF-8 form).
        case utf8BOM = "utf-8-bom"
        case latin1 = "iso-8859-1"
        case windows1252 = "windows-1252"
    }

    /// Where the amount is: one signed column, or money in and money out (in two columns, or
    /// one of them alone).
    public enum AmountColumns: Sendable, Equatable {
        case signed(Column)
        /// Either may be empty on a row; the out column's sign is ignored: it is money out.
        case split(in: Column?, out: Column?)
    }

    /// What to do with a row whose asset code has no asset.
    public enum Unmapped: String, Sendable {
        case refuse = "error"
        case skip
    }

    /// Forces a row's amount to money in (+) or out (−), whatever sign the file gives.
    public enum Direction: String, Sendable {
        case `in`, out
    }

    /// A `[[when]]` block: when `column` matches `pattern`, skip the row or override fields.
    public struct When: Sendable {
        public var column: Column
        public var pattern: RowPattern
        public var skip = false
        public var note: FieldTemplate?
        public var externalID: FieldTemplate?
        /// A savingsd asset (name or id) for the row, instead of the asset column's.
        public var asset: String?
        public var direction: Direction?
        public var secondLeg: SecondLeg?
    }

    /// A second booking made from the same row (`[when.second_leg]`): what a conversion
    /// received, which the row of the asset it spent names only in a text. Its amount and asset
    /// code are groups of `pattern` matched against `column` (`(?<amount>…)`, `(?<asset>…)`), or
    /// its asset is fixed; same date and note, external id the row's with "-2".
    public struct SecondLeg: Sendable {
        public var column: Column
        public var pattern: RowPattern
        public var direction: Direction = .in
        /// A savingsd asset for every second leg, instead of the `asset` group's code.
        public var asset: String?
    }

    /// Lines before the header: a count, or every line up to the first matching a pattern.
    public enum Skip: Sendable {
        case lines(Int)
        case until(RowPattern)
    }

    /// How messages name the rules: a preset's name, or "the rules file".
    public var name: String
    public var separator: UInt8 = UInt8(ascii: ",")
    public var skip: Skip = .lines(0)
    /// Whether the first line read (after `skip`) names the columns.
    public var header = true
    public var encoding: Encoding = .utf8
    public var number = NumberFormat()
    public var dateFormats: [DatePattern] = [.iso8601]
    /// The zone of dates without one; nil: the daemon's.
    public var timeZone: TimeZone?
    public var date: Column = .name("date")
    public var amount: AmountColumns = .signed(.name("amount"))
    /// Subtracted from the amount (a fee paid from the same asset).
    public var fee: Column?
    public var note: FieldTemplate?
    public var externalID: FieldTemplate?
    /// The column naming each row's asset; nil: the whole file is the import's asset.
    public var asset: Column?
    /// Set by an import that decides the `[[when]]` patterns in a pass of its own first.
    public var verdicts: RuleVerdicts?
    /// The file's asset codes and the savingsd assets (names or ids) they are.
    public var assets: [String: String] = [:]
    public var unmapped: Unmapped = .refuse
    /// A running balance column, checked against the asset's balance.
    public var balance: Column?
    public var when: [When] = []

    public init(name: String) { self.name = name }

    /// Every column the rules read, for checking them against the header.
    var columns: [(key: String, column: Column)] {
        var columns: [(String, Column)] = [("columns.date", date)]
        switch amount {
        case .signed(let column): columns.append(("columns.amount", column))
        case .split(let `in`, let out):
            if let `in` { columns.append(("columns.amount_in", `in`)) }
            if let out { columns.append(("columns.amount_out", out)) }
        }
        if let fee { columns.append(("columns.fee", fee)) }
        if let asset { columns.append(("columns.asset", asset)) }
        if let balance { columns.append(("columns.balance", balance)) }
        for (index, rule) in when.enumerated() {
            columns.append(("when[\(index + 1)].column", rule.column))
            if let leg = rule.secondLeg { columns.append(("when[\(index + 1)].second_leg.column", leg.column)) }
        }
        return columns
    }

    /// Every template, with its key.
    var templates: [(key: String, template: FieldTemplate)] {
        var templates: [(String, FieldTemplate)] = []
        if let note { templates.append(("columns.note", note)) }
        if let externalID { templates.append(("columns.external_id", externalID)) }
        for (index, rule) in when.enumerated() {
            if let note = rule.note { templates.append(("when[\(index + 1)].note", note)) }
            if let id = rule.externalID { templates.append(("when[\(index + 1)].external_id", id)) }
        }
        return templates
    }
}

/// A text made of literal parts and `{column}` references (a header name or a position).
public struct FieldTemplate: Sendable, Equatable {
    public enum Part: Sendable, Equatable {
        case literal(String)
        case column(ImportRules.Column)
        /// `{name?}`: the column's text, or nothing when the header has no such column.
        case optional(ImportRules.Column)
    }

    public let parts: [Part]

    /// A template: "{refid}-{asset}". A plain name is the column of that name; an integer
    /// (from TOML) its position. `{a|b}` is the first of the columns a header has, and a
    /// reference ending in `?` may be missing from the header (it reads as nothing).
    public init(parsing text: String, key: String) throws {
        guard text.contains("{") else {
            parts = [.column(.name(text))]
            return
        }
        var parts: [Part] = []
        var rest = Substring(text)
        while let open = rest.firstIndex(of: "{") {
            if open > rest.startIndex { parts.append(.literal(String(rest[..<open]))) }
            guard let close = rest[open...].firstIndex(of: "}") else {
                throw DomainError.invalidField("rules", "\(key): '{' without a closing '}' in \"\(text)\"")
            }
            var reference = rest[rest.index(after: open)..<close].trimmingCharacters(in: .whitespaces)
            let optional = reference.hasSuffix("?")
            if optional { reference.removeLast() }
            let names = reference.split(separator: "|").map { $0.trimmingCharacters(in: .whitespaces) }
            guard !names.isEmpty, names.allSatisfy({ !$0.isEmpty }) else {
                throw DomainError.invalidField("rules", "\(key): an empty {} in \"\(text)\"")
            }
            let column: ImportRules.Column = names.count > 1 ? .names(names) : Int(names[0]).map { .position($0) } ?? .name(names[0])
            parts.append(optional ? .optional(column) : .column(column))
            rest = rest[rest.index(after: close)...]
        }
        if !rest.isEmpty { parts.append(.literal(String(rest))) }
        self.parts = parts
    }

    public init(column: ImportRules.Column) { parts = [.column(column)] }

    var columns: [ImportRules.Column] {
        parts.compactMap {
            switch $0 {
            case .column(let column), .optional(let column): column
            case .literal: nil
            }
        }
    }
}

/// How a file writes numbers: "1.234,56" has decimal mark "," and thousands separator ".".
public struct NumberFormat: Sendable, Equatable {
    public var decimalMark = UInt8(ascii: ".")
    public var thousandsSeparator: UInt8?
    /// Texts a number may carry before or after it ("€", "EUR", "BTC"): a currency sign, a
    /// unit. Longest first.
    public var affixes: [String] = [] {
        didSet { affixes.sort { $0.count > $1.count } }
    }

    public init() {}

    /// `normalized`, after taking off one affix before the number (after a leading sign) and
    /// one after it (before a trailing sign): "-€180.01", "€40,512.33", "12,50 EUR-".
    public func value(_ field: String) -> String? {
        if let plain = normalized(field) { return plain }
        guard !affixes.isEmpty else { return nil }
        var text = Substring(field.trimmingCharacters(in: .whitespaces))
        var sign = ""
        if let first = text.first, first == "-" || first == "+" {
            sign = String(first)
            text = text.dropFirst().drop(while: \.isWhitespace)
        }
        if let affix = affixes.first(where: { text.hasPrefix($0) }) { text = text.dropFirst(affix.count).drop(while: \.isWhitespace) }
        var trailing = ""
        if let last = text.last, last == "-" || last == "+" {
            trailing = String(last)
            text = text.dropLast()
            while text.last?.isWhitespace == true { text = text.dropLast() }
        }
        if let affix = affixes.first(where: { text.hasSuffix($0) }) { text = text.dropLast(affix.count) }
        guard sign.isEmpty || trailing.isEmpty else { return nil }
        return normalized(sign + text + trailing)
    }

    /// A field's number as savingsd writes it ("-1234.56"), or nil when it is not one. Space
    /// (also no-break space) around or inside is ignored, a sign may lead or trail
    /// ("12,50-"), and an empty field is nil too.
    public func normalized(_ field: String) -> String? {
        var digits: [UInt8] = []
        digits.reserveCapacity(field.utf8.count + 1)
        var negative = false
        var seenDigit = false
        for scalar in field.unicodeScalars {
            guard scalar.isASCII else {
                if scalar == "\u{00A0}" || scalar == "\u{202F}" { continue }
                return nil
            }
            let byte = UInt8(scalar.value)
            switch byte {
            case UInt8(ascii: "0")...UInt8(ascii: "9"):
                digits.append(byte)
                seenDigit = true
            case decimalMark: digits.append(UInt8(ascii: "."))
            case thousandsSeparator where thousandsSeparator != nil:
                continue
            case UInt8(ascii: " "), UInt8(ascii: "\t"): continue
            case UInt8(ascii: "-"):
                guard !negative else { return nil }
                negative = true
            case UInt8(ascii: "+"): continue
            default: return nil
            }
        }
        guard seenDigit else { return nil }
        return (negative ? "-" : "") + String(decoding: digits, as: UTF8.self)
    }
}

extension ImportRules.Encoding {
    /// Windows-1252's characters at 0x80...0x9F (where ISO-8859-1 has control codes); the five
    /// bytes it leaves undefined are refused.
    private static let windows1252High: [Unicode.Scalar] = [
        "\u{20AC}", "\u{81}", "\u{201A}", "\u{192}", "\u{201E}", "\u{2026}", "\u{2020}", "\u{2021}",
        "\u{2C6}", "\u{2030}", "\u{160}", "\u{2039}", "\u{152}", "\u{8D}", "\u{17D}", "\u{8F}",
        "\u{90}", "\u{2018}", "\u{2019}", "\u{201C}", "\u{201D}", "\u{2022}", "\u{2013}", "\u{2014}",
        "\u{2DC}", "\u{2122}", "\u{161}", "\u{203A}", "\u{153}", "\u{9D}", "\u{17E}", "\u{178}",
    ]

    /// Windows-1252's five bytes that are no character.
    private static let windows1252Undefined: Set<UInt8> = [0x81, 0x8D, 0x8F, 0x90, 0x9D]

    /// A field's bytes as text, or nil when they are not text in this encoding (UTF-8 that
    /// does not decode, a byte Windows-1252 leaves undefined): such text is refused, never
    /// stored with U+FFFD in place of what the file said.
    public func text(_ bytes: [UInt8]) -> String? {
        // ASCII (most fields) is the same text in every one of them; `String(validating:)` is
        // generic and costs a metadata lookup a call, which showed in an import's profile.
        if bytes.allSatisfy({ $0 < 0x80 }) { return String(decoding: bytes, as: UTF8.self) }
        switch self {
        case .utf8, .utf8BOM:
            return String(validating: bytes, as: UTF8.self)
        case .latin1, .windows1252:
            // Non-ASCII text that is valid UTF-8 is a UTF-8 file read with the wrong rules:
            // Windows-1252 text almost never is ("Ã¼" for "ü"), and storing it so is mojibake.
            if String(validating: bytes, as: UTF8.self) != nil { return nil }
            var text = String.UnicodeScalarView()
            for byte in bytes {
                // ISO-8859-1 is read as Windows-1252, as the WHATWG Encoding Standard (and every
                // browser) reads it: files so labelled mean "€" by 0x80, not a control code.
                if (0x80...0x9F).contains(byte) {
                    guard !Self.windows1252Undefined.contains(byte) else { return nil }
                    text.append(Self.windows1252High[Int(byte - 0x80)])
                } else {
                    text.append(Unicode.Scalar(byte))
                }
            }
            return String(text)
        }
    }

    /// What a file whose bytes are not text in this encoding is told; `rules` names the rules
    /// that read it so.
    public func undecodable(line: Int, rules: String) -> String {
        switch self {
        case .utf8, .utf8BOM:
            "line \(line): bytes that are not UTF-8 text, which \(rules) reads the file as; the file is in another encoding (a German bank's is often Windows-1252 or ISO-8859-1: set encoding = \"windows-1252\" in the rules)"
        case .latin1, .windows1252:
            "line \(line): text that is not \(rawValue), which \(rules) reads the file as: it is UTF-8 (a statement opened and saved again often is; set encoding = \"utf-8\" in a copy of the rules), or holds a byte \(rawValue) leaves undefined"
        }
    }
}
