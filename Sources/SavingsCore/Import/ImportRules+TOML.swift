import Foundation
internal import TOMLKit

extension ImportRules {
    /// Longest rules file read.
    public static let maxTextBytes = 64 * 1024

    /// Reads a rules file. Every problem is an `invalid_field` on `rules` naming the key (or,
    /// for TOML syntax, the line).
    public init(toml text: String, name: String) throws {
        self.init(name: name)
        guard text.utf8.count <= Self.maxTextBytes else {
            throw DomainError.invalidField("rules", "\(name) is longer than \(Self.maxTextBytes) bytes")
        }
        // Nesting is bounded before the parser, which recurses once per level.
        if let line = TOMLNesting.firstLine(deeperThan: TOMLNesting.maxDepth, in: text) {
            throw DomainError.invalidField("rules", "\(name), line \(line): nested deeper than \(TOMLNesting.maxDepth) levels (tables, dotted keys, arrays)")
        }
        if let trap = TOMLParserTraps.first(in: text) {
            throw DomainError.invalidField("rules", "\(name), line \(trap.line): \(trap.reason)")
        }
        // Only TOML that savingsd's own reader takes (plain tables, keys, strings, numbers,
        // booleans, arrays) reaches toml++, which aborts the process on some malformed texts.
        do {
            _ = try TOMLReader.read(text, arraysOfTables: true)
        } catch {
            throw DomainError.invalidField("rules", "\(name), line \(error.line): \(error.reason)")
        }
        let table: TOMLTable
        do {
            table = try TOMLTable(string: text)
        } catch let error as TOMLParseError {
            throw DomainError.invalidField("rules", "\(name), line \(error.source.begin.line): \(error.description)")
        }
        var top = RulesTable(table, path: "", name: name)
        if let separator = try top.character("separator") {
            guard ![UInt8(ascii: "\""), 0x0A, 0x0D].contains(separator) else {
                throw top.invalid("separator", "cannot be a quote or a line break")
            }
            self.separator = separator
        }
        if let value = top.take("skip") {
            if let count = value.int, count >= 0, count <= 1000 {
                skip = .lines(count)
            } else if let pattern = value.string {
                skip = .until(try RowPattern(pattern, key: "\(name): skip"))
            } else {
                throw top.invalid("skip", "must be a number of lines (0 to 1000) or a pattern the header line matches")
            }
        }
        header = try top.bool("header") ?? true
        if let encoding = try top.string("encoding") {
            guard let known = Encoding(rawValue: encoding.lowercased()) ?? (encoding.lowercased() == "latin-1" ? .latin1 : nil) else {
                throw top.invalid("encoding", "'\(encoding)' is not one of \(Encoding.allCases.map(\.rawValue).joined(separator: ", "))")
            }
            self.encoding = known
        }
        if let mark = try top.character("decimal_mark") {
            guard mark == UInt8(ascii: ".") || mark == UInt8(ascii: ",") else { throw top.invalid("decimal_mark", "must be \".\" or \",\"") }
            number.decimalMark = mark
        }
        if let value = top.take("thousands_separator") {
            guard let text = value.string, text.utf8.count <= 1, text.utf8.allSatisfy({ ".,' ".utf8.contains($0) }) else {
                throw top.invalid("thousands_separator", "must be one of \".\", \",\", \"'\", \" \" or \"\" (none)")
            }
            number.thousandsSeparator = text.utf8.first
            guard number.thousandsSeparator != number.decimalMark else {
                throw top.invalid("thousands_separator", "must differ from decimal_mark")
            }
        }
        if let value = top.take("number_affixes") {
            guard let list = value.array?.map(\.string), list.count <= 16,
                  list.allSatisfy({ $0.map { !$0.isEmpty && $0.count <= 8 && !$0.contains(where: { $0.isNumber || "+-.,".contains($0) }) } ?? false }) else {
                throw top.invalid("number_affixes", "must be a list of up to 16 texts of 1 to 8 characters, without digits, signs or marks (e.g. [\"€\", \"$\", \"EUR\"])")
            }
            number.affixes = list.map { $0! }
        }
        if let value = top.take("date_format") {
            let formats = value.string.map { [$0] } ?? value.array.map { $0.map(\.string) } ?? [nil]
            guard !formats.isEmpty, formats.allSatisfy({ $0 != nil }) else {
                throw top.invalid("date_format", "must be a format (\"dd.MM.yyyy\") or a list of them")
            }
            dateFormats = try formats.map { try DatePattern(parsing: $0!, key: "\(name): date_format") }
        }
        if let zone = try top.string("timezone") {
            guard let known = TimeZone(identifier: zone) else { throw top.invalid("timezone", "'\(zone)' is not a time zone (e.g. Europe/Berlin, UTC)") }
            timeZone = known
        }
        if let policy = try top.string("unmapped") {
            guard let known = Unmapped(rawValue: policy) else { throw top.invalid("unmapped", "must be \"error\" or \"skip\"") }
            unmapped = known
        }
        if var columns = try top.table("columns") {
            try readColumns(&columns)
            try columns.finish()
        }
        guard header || (columns.allSatisfy { if case .position = $0.column { true } else { false } }
                         && templates.allSatisfy { $0.template.columns.allSatisfy { if case .position = $0 { true } else { false } } }) else {
            throw top.invalid("header", "is false, so columns must be positions (1 is the first)")
        }
        if var assets = try top.table("assets") {
            for code in assets.keys {
                guard let asset = try assets.string(code), !asset.isEmpty else { throw assets.invalid(code, "must name a savingsd asset") }
                self.assets[code] = asset
            }
        }
        if let blocks = top.take("when") {
            guard let array = blocks.array else { throw top.invalid("when", "must be [[when]] blocks") }
            for (index, block) in array.enumerated() {
                guard let table = block.table else { throw top.invalid("when", "must be [[when]] blocks") }
                var rule = RulesTable(table, path: "when[\(index + 1)].", name: name)
                when.append(try Self.when(&rule))
                try rule.finish()
            }
        }
        try top.finish()
    }

    private mutating func readColumns(_ table: inout RulesTable) throws {
        date = try table.column("date") ?? date
        let signed = try table.column("amount")
        let `in` = try table.column("amount_in"), out = try table.column("amount_out")
        switch (signed, `in`, out) {
        case (let signed?, nil, nil): amount = .signed(signed)
        case (nil, nil, nil): break
        case (nil, _, _): amount = .split(in: `in`, out: out)
        case (_?, _, _): throw table.invalid("amount", "give either amount or amount_in and/or amount_out, not both")
        }
        fee = try table.column("fee")
        asset = try table.column("asset")
        balance = try table.column("balance")
        note = try table.template("note")
        externalID = try table.template("external_id")
    }

    private static func when(_ table: inout RulesTable) throws -> When {
        guard let column = try table.column("column") else { throw table.invalid("column", "is required: the column to match") }
        guard let source = try table.string("matches") else { throw table.invalid("matches", "is required: a regular expression") }
        var rule = When(column: column, pattern: try RowPattern(source, key: "\(table.name): \(table.path)matches"))
        rule.skip = try table.bool("skip") ?? false
        rule.note = try table.template("note")
        rule.externalID = try table.template("external_id")
        rule.asset = try table.string("asset")
        rule.direction = try direction(&table)
        if var leg = try table.table("second_leg") {
            rule.secondLeg = try secondLeg(&leg)
            try leg.finish()
        }
        guard rule.skip || rule.note != nil || rule.externalID != nil || rule.asset != nil || rule.direction != nil || rule.secondLeg != nil else {
            throw table.invalid("skip", "a [[when]] block does nothing without skip, note, external_id, asset, direction or second_leg")
        }
        if rule.skip, rule.secondLeg != nil { throw table.invalid("second_leg", "cannot be on a block that skips the row") }
        return rule
    }

    private static func direction(_ table: inout RulesTable) throws -> Direction? {
        guard let direction = try table.string("direction") else { return nil }
        guard let known = Direction(rawValue: direction) else { throw table.invalid("direction", "must be \"in\" or \"out\"") }
        return known
    }

    private static func secondLeg(_ table: inout RulesTable) throws -> SecondLeg {
        guard let column = try table.column("column") else { throw table.invalid("column", "is required: the column the second leg is read from") }
        guard let source = try table.string("matches") else {
            throw table.invalid("matches", "is required: a regular expression with the groups (?<amount>…) and (?<asset>…)")
        }
        let pattern = try RowPattern(source, key: "\(table.name): \(table.path)matches")
        var leg = SecondLeg(column: column, pattern: pattern)
        leg.asset = try table.string("asset")
        leg.direction = try direction(&table) ?? .in
        guard pattern.groupNames["amount"] != nil else { throw table.invalid("matches", "needs a group (?<amount>…): the second leg's amount") }
        guard leg.asset != nil || pattern.groupNames["asset"] != nil else {
            throw table.invalid("matches", "needs a group (?<asset>…), the second leg's asset code, or the key asset")
        }
        guard leg.asset == nil || pattern.groupNames["asset"] == nil else {
            throw table.invalid("asset", "and a group (?<asset>…) in matches both name the second leg's asset: give one")
        }
        return leg
    }
}

/// A TOML table being read: each key is taken once, and any key left over is refused.
private struct RulesTable {
    let table: TOMLTable
    let path: String
    let name: String
    private var taken: Set<String> = []

    init(_ table: TOMLTable, path: String, name: String) {
        self.table = table
        self.path = path
        self.name = name
    }

    var keys: [String] { table.keys }

    func invalid(_ key: String, _ reason: String) -> DomainError {
        DomainError.invalidField("rules", "\(name): \(path)\(key) \(reason)")
    }

    mutating func take(_ key: String) -> (any TOMLValueConvertible)? {
        taken.insert(key)
        return table[key]
    }

    mutating func string(_ key: String) throws -> String? {
        guard let value = take(key) else { return nil }
        guard let text = value.string else { throw invalid(key, "must be a string") }
        return text
    }

    mutating func bool(_ key: String) throws -> Bool? {
        guard let value = take(key) else { return nil }
        guard let flag = value.bool else { throw invalid(key, "must be true or false") }
        return flag
    }

    /// One ASCII character, "\t" included.
    mutating func character(_ key: String) throws -> UInt8? {
        guard let text = try string(key) else { return nil }
        guard text.utf8.count == 1, let byte = text.utf8.first, byte < 0x80 else { throw invalid(key, "must be one ASCII character") }
        return byte
    }

    mutating func table(_ key: String) throws -> RulesTable? {
        guard let value = take(key) else { return nil }
        guard let table = value.table else { throw invalid(key, "must be a table ([\(key)])") }
        return RulesTable(table, path: "\(path)\(key).", name: name)
    }

    /// A header name (string), several (the first the header has), or a position (integer from 1).
    mutating func column(_ key: String) throws -> ImportRules.Column? {
        guard let value = take(key) else { return nil }
        if let list = value.array {
            let names = list.map { $0.string?.trimmingCharacters(in: .whitespaces) ?? "" }
            guard !names.isEmpty, names.count <= 16, names.allSatisfy({ !$0.isEmpty }) else {
                throw invalid(key, "must be a column's header name, a list of names (the first the header has), or its position")
            }
            return names.count == 1 ? .name(names[0]) : .names(names)
        }
        if let position = value.int {
            guard position >= 1 else { throw invalid(key, "must be a position from 1 (got \(position))") }
            return .position(position)
        }
        guard let name = value.string, !name.trimmingCharacters(in: .whitespaces).isEmpty else {
            throw invalid(key, "must be a column's header name or its position (1 is the first)")
        }
        return .name(name)
    }

    /// A column (name or position) or a "{column} text" template.
    mutating func template(_ key: String) throws -> FieldTemplate? {
        guard let value = table[key] else { return nil }
        if value.string == nil { return try column(key).map { FieldTemplate(column: $0) } }
        return try FieldTemplate(parsing: try string(key)!, key: "\(name): \(path)\(key)")
    }

    func finish() throws {
        if let unknown = keys.sorted().first(where: { !taken.contains($0) }) {
            let known = taken.sorted().joined(separator: ", ")
            throw invalid(unknown, "is not a key savingsd knows here (known: \(known))")
        }
    }
}

extension ImportPresets {
    public static var names: [String] { texts.keys.sorted() }

    /// A shipped preset's rules, or nil when there is none of that name.
    public static func rules(_ name: String) throws -> ImportRules? {
        try texts[name].map { try ImportRules(toml: $0, name: name) }
    }
}
