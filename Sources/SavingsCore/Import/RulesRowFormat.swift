import Foundation

/// One data row of an import file, read.
public enum ImportRow: Sendable {
    /// A row to store: into `asset` (a savingsd asset's name or id; nil: the import's asset),
    /// from the file's asset `code` if it has one, with the file's running balance after it.
    case row(TransactionCSVRow, asset: String?, code: String?, balance: Decimal?)
    /// A row a rule skips (or one that moves nothing), with what the balance check needs: its
    /// asset (nil: the import's), code, date, amount and balance where they read.
    case skipped(line: Int, asset: String?, code: String?, date: Date?, amount: Decimal?, balance: Decimal?)
    /// A skipped row of a code without an asset: `unmapped` when that is why (the rules say
    /// `unmapped = "skip"`), not when a rule skipped it anyway.
    case unassigned(code: String, unmapped: Bool)
}

/// Turns an import file's records into rows: the plain format, or a rules file's.
public protocol ImportRowFormat: Sendable {
    mutating func next(_ record: CSVTokenizer.Record) throws -> ImportRow
    /// A further row the last record made (a second leg), asked for after each `next`.
    mutating func followUp() -> ImportRow?
}

extension ImportRowFormat {
    public mutating func followUp() -> ImportRow? { nil }
}

/// A problem that refuses the whole file rather than one row (a rules file that does not fit it).
public struct ImportFileFailure: Error, Sendable {
    public let error: DomainError
}

extension TransactionCSVFormat: ImportRowFormat {
    public mutating func next(_ record: CSVTokenizer.Record) throws -> ImportRow {
        .row(try row(record), asset: nil, code: nil, balance: nil)
    }
}

/// The rows of a file read through `ImportRules`: columns found in the header (or by
/// position), numbers and dates in the file's own notation, `[[when]]` rules applied in order.
public struct RulesRowFormat: ImportRowFormat {
    public let rules: ImportRules
    /// Fields a row must have: the header's count, or (without a header) the highest position.
    private let width: Int
    private let exactWidth: Bool
    private let dateColumn: Int, feeColumn: Int?, assetColumn: Int?, balanceColumn: Int?
    private let amountColumns: Amounts
    private let header: [String]
    private let when: [(index: Int, rule: ImportRules.When, leg: Int?)]
    /// The note and external id templates: the columns' (index 0), then each `[[when]]` block's.
    private let notes: [[ResolvedPart]?], ids: [[ResolvedPart]?]
    /// The second leg the last row made, handed out by `followUp`.
    private var pending: ImportRow?
    /// The pass that decides the patterns before an import's write: it runs them and records
    /// what they say, and reads nothing else of a row. The pass that writes reads them back.
    private let deciding: Bool, replaying: Bool

    enum Amounts {
        case signed(Int)
        case split(in: Int?, out: Int?)
    }
    private var dates: RowDates
    /// How problems name the date column.
    private let dateLabel: String
    private var seenRow = false

    enum ResolvedPart: Sendable {
        case literal(String)
        case column(Int)
    }

    /// How many of the header's columns the rules read (a preset reading more of them fits it better).
    public let columnsRead: Int

    /// Resolves the rules' columns against `header` (nil when the rules say the file has none).
    public init(rules: ImportRules, header record: CSVTokenizer.Record?, now: Date, timeZone: TimeZone) throws {
        self.rules = rules
        dates = RowDates(formats: rules.dateFormats, timeZone: rules.timeZone ?? timeZone, now: now)
        header = record?.fields.enumerated().map { index, raw in
            var name = raw.trimmingCharacters(in: .whitespaces)
            if index == 0, name.hasPrefix("\u{FEFF}") { name.removeFirst() }
            return name
        } ?? []
        let headerLine = record?.line ?? 0
        let names = header
        // The highest column read: a file without a header must have at least that many fields.
        var highest = 0
        func index(_ column: ImportRules.Column, key: String) throws -> Int {
            let found = try resolve(column, key: key)
            highest = max(highest, found)
            return found
        }
        func resolve(_ column: ImportRules.Column, key: String) throws -> Int {
            guard let found = try find(column, key: key) else {
                let shown = names.prefix(20).joined(separator: ", ")
                throw DomainError.invalidField("rules", "\(rules.name): \(key) names \(column), which the header (line \(headerLine)) does not have (it has: \(shown))")
            }
            return found
        }
        /// The column's index, or nil when the header has no such name.
        func find(_ column: ImportRules.Column, key: String) throws -> Int? {
            switch column {
            case .position(let position):
                guard record == nil || position <= names.count else {
                    throw DomainError.invalidField("rules", "\(rules.name): \(key) is column \(position), but the header (line \(headerLine)) has \(names.count) columns")
                }
                return position - 1
            case .name(let name):
                let wanted = name.trimmingCharacters(in: .whitespaces).lowercased()
                return names.firstIndex(where: { $0.lowercased() == wanted })
            case .names(let choices):
                for name in choices {
                    if let found = try find(.name(name), key: key) { return found }
                }
                return nil
            }
        }
        dateColumn = try index(rules.date, key: "columns.date")
        switch rules.amount {
        case .signed(let column): amountColumns = .signed(try index(column, key: "columns.amount"))
        case .split(let `in`, let out):
            amountColumns = .split(in: try `in`.map { try index($0, key: "columns.amount_in") },
                                   out: try out.map { try index($0, key: "columns.amount_out") })
        }
        feeColumn = try rules.fee.map { try index($0, key: "columns.fee") }
        assetColumn = try rules.asset.map { try index($0, key: "columns.asset") }
        balanceColumn = try rules.balance.map { try index($0, key: "columns.balance") }
        when = try rules.when.enumerated().map { number, rule in
            (try index(rule.column, key: "when[\(number + 1)].column"), rule,
             try rule.secondLeg.map { try index($0.column, key: "when[\(number + 1)].second_leg.column") })
        }
        var templates: [String: [ResolvedPart]] = [:]
        for (key, template) in rules.templates {
            templates[key] = try template.parts.map { part in
                switch part {
                case .literal(let text): .literal(text)
                case .column(let column): .column(try index(column, key: key))
                case .optional(let column):
                    // Without a header a position is always there (an empty field if the row is short).
                    if record == nil { .column(try index(column, key: key)) } else { try find(column, key: key).map { .column($0) } ?? .literal("") }
                }
            }
        }
        notes = [templates["columns.note"]] + rules.when.indices.map { templates["when[\($0 + 1)].note"] }
        ids = [templates["columns.external_id"]] + rules.when.indices.map { templates["when[\($0 + 1)].external_id"] }
        replaying = rules.verdicts?.isReplaying ?? false
        deciding = rules.verdicts?.mode == .recording && !replaying
        var read = Set([dateColumn] + [feeColumn, assetColumn, balanceColumn].compactMap { $0 } + when.flatMap { [$0.index] + [$0.leg].compactMap { $0 } })
        switch amountColumns {
        case .signed(let column): read.insert(column)
        case .split(let `in`, let out): read.formUnion([`in`, out].compactMap { $0 })
        }
        for parts in templates.values {
            for case .column(let column) in parts { read.insert(column) }
        }
        columnsRead = read.count
        exactWidth = record != nil
        width = record.map { $0.fields.count } ?? highest + 1
        dateLabel = Self.label(dateColumn, header: header)
    }

    public mutating func next(_ record: CSVTokenizer.Record) throws -> ImportRow {
        let fields = record.fields
        guard exactWidth ? fields.count == width : fields.count >= width else {
            throw Self.problem("expected \(width) fields, found \(fields.count)")
        }
        func field(_ index: Int) -> String { TransactionCSVFormat.trimmed(fields[index]) }
        var skip = false
        var noteTemplate = 0, idTemplate = 0
        var asset: String?
        var direction: ImportRules.Direction?
        var leg: (number: Int, leg: ImportRules.SecondLeg, column: Int)?
        for (number, (index, rule, legColumn)) in when.enumerated() where try matches(rule, number: number, field(index), line: record.line) {
            skip = skip || rule.skip
            if rule.note != nil { noteTemplate = number + 1 }
            if rule.externalID != nil { idTemplate = number + 1 }
            asset = rule.asset ?? asset
            direction = rule.direction ?? direction
            if let second = rule.secondLeg, let legColumn { leg = (number, second, legColumn) }
        }
        // The second leg's groups: worked out (and recorded) by the deciding pass whenever a
        // rule that makes one matched, and read back at the same point by the writing pass.
        var legGroups: [String: String]??
        if let leg {
            if replaying {
                legGroups = .some(rules.verdicts!.nextGroups())
            } else if deciding {
                legGroups = .some(try captures(leg, text: field(leg.column), line: record.line))
            }
        }
        if deciding { return .skipped(line: record.line, asset: nil, code: nil, date: nil, amount: nil, balance: nil) }
        let code = assetColumn.map(field)
        if asset == nil, let code {
            asset = rules.assets[code]
            if asset == nil, !skip {
                guard rules.unmapped == .skip else {
                    throw Self.problem("the file's asset '\(code)' is not mapped to an asset (add \(code) = \"NAME\" under [assets], or --map \(code)=NAME; or unmapped = \"skip\")",
                                       unmapped: code)
                }
                return .unassigned(code: code, unmapped: true)
            }
        }
        let balance = try balanceColumn.map { try number($0, fields: fields, required: false) } ?? nil
        if skip {
            if asset == nil, let code { return .unassigned(code: code, unmapped: false) }
            let date = try? day(field(dateColumn), line: record.line)
            return .skipped(line: record.line, asset: asset, code: code, date: date, amount: try? amount(fields, direction: direction), balance: balance)
        }
        let amount = try amount(fields, direction: direction)
        let date = try day(field(dateColumn), line: record.line)
        guard amount != 0 else { return .skipped(line: record.line, asset: asset, code: code, date: date, amount: 0, balance: balance) }
        seenRow = true
        let note = try GoalRules.validNotes(render(notes[noteTemplate]))
        let externalID = render(ids[idTemplate])
        if let externalID, externalID.count > TransactionCSVFormat.maxExternalIDLength {
            throw DomainError.invalidField("external_id", "longer than \(TransactionCSVFormat.maxExternalIDLength) characters")
        }
        let row = TransactionCSVRow(line: record.line, date: date, amount: amount, note: note, externalID: externalID)
        if let leg {
            let groups = try legGroups ?? captures(leg, text: field(leg.column), line: record.line)
            pending = try secondLeg(leg, groups: groups, text: field(leg.column), row: row, line: record.line)
        }
        return .row(row, asset: asset, code: code, balance: balance)

        func render(_ template: [ResolvedPart]?) -> String? {
            guard let parts = template else { return nil }
            // One column alone (the common template) is the field itself.
            if parts.count == 1, case .column(let index) = parts[0] {
                let text = field(index)
                return text.isEmpty ? nil : text
            }
            var text = ""
            for part in parts {
                switch part {
                case .literal(let literal): text += literal
                case .column(let index): text += field(index)
                }
            }
            let trimmed = TransactionCSVFormat.trimmed(text)
            return trimmed.isEmpty ? nil : trimmed
        }
    }

    public mutating func followUp() -> ImportRow? {
        defer { pending = nil }
        return pending
    }

    /// The groups of `rule`'s pattern on `text` (recorded when a pass decides them for a later
    /// one); a pattern that takes too long refuses the file.
    private func captures(_ rule: (number: Int, leg: ImportRules.SecondLeg, column: Int), text: String, line: Int) throws -> [String: String]? {
        let key = "when[\(rule.number + 1)].second_leg"
        let found: (groups: [String: String]?, steps: Int)
        do {
            found = try rule.leg.pattern.captures(text)
        } catch is RowPattern.StepLimit {
            if rules.verdicts?.mode == .direct { throw RuleVerdicts.OverBudget() }
            throw ImportFileFailure(error: DomainError.invalidField(
                "rules", "\(rules.name): \(key).matches takes more than \(RowPattern.maxSteps) steps on one field (line \(line)); simplify the pattern"))
        }
        if let verdicts = rules.verdicts {
            guard verdicts.spend(found.steps) else {
                if verdicts.mode == .direct { throw RuleVerdicts.OverBudget() }
                throw ImportFileFailure(error: DomainError.invalidField("rules", "\(rules.name): \(key).matches takes too long over the file (line \(line)); simplify the pattern"))
            }
            verdicts.record(groups: found.groups)
        }
        return found.groups
    }

    /// The second leg `rule` makes of a row: its asset and amount from the pattern's groups.
    private func secondLeg(_ rule: (number: Int, leg: ImportRules.SecondLeg, column: Int), groups: [String: String]?, text: String,
                           row: TransactionCSVRow, line: Int) throws -> ImportRow {
        let key = "when[\(rule.number + 1)].second_leg"
        guard let groups, let amountText = groups["amount"] else {
            throw Self.problem("\(columnName(rule.column)): '\(text)' does not match \(key).matches '\(rule.leg.pattern.shown)', which reads the second leg")
        }
        guard let plain = rules.number.value(amountText), var amount = try? Amount.parse(plain), amount != 0 else {
            throw Self.problem("\(columnName(rule.column)): '\(amountText)' (the second leg's amount) is not an amount")
        }
        amount = rule.leg.direction == .in ? abs(amount) : -abs(amount)
        var asset = rule.leg.asset
        var code: String?
        if asset == nil {
            guard let found = groups["asset"], !found.isEmpty else {
                throw Self.problem("\(columnName(rule.column)): '\(text)' names no asset for the second leg")
            }
            code = found
            asset = rules.assets[found]
            if asset == nil {
                guard rules.unmapped == .skip else {
                    throw Self.problem("the file's asset '\(found)' (the second leg's) is not mapped to an asset (add \(found) = \"NAME\" under [assets], or --map \(found)=NAME; or unmapped = \"skip\")",
                                       unmapped: found)
                }
                return .unassigned(code: found, unmapped: true)
            }
        }
        let leg = TransactionCSVRow(line: line, date: row.date, amount: amount, note: row.note, externalID: row.externalID.map { $0 + "-2" })
        return .row(leg, asset: asset, code: code, balance: nil)
    }

    /// The row's amount: signed, or in less out; forced in or out by a rule; then less the fee
    /// (paid from the same asset, on top of what went out or from what came in).
    private func amount(_ fields: [String], direction: ImportRules.Direction?) throws -> Decimal {
        var amount: Decimal
        switch amountColumns {
        case .signed(let column):
            amount = try number(column, fields: fields, required: true) ?? 0
        case .split(let `in`, let out):
            let money = try `in`.map { try number($0, fields: fields, required: false) } ?? nil
            let spent = try out.map { try number($0, fields: fields, required: false) } ?? nil
            if let money, let spent, money != 0, spent != 0 {
                throw Self.problem("both \(columnName(`in`!)) and \(columnName(out!)) have an amount")
            }
            amount = (money ?? 0) - abs(spent ?? 0)
        }
        switch direction {
        case .in?: amount = abs(amount)
        case .out?: amount = -abs(amount)
        case nil: break
        }
        // A fee is paid whichever sign the file writes it with (Kraken has written both).
        if let feeColumn, let fee = try number(feeColumn, fields: fields, required: false), !fee.isZero { amount -= abs(fee) }
        return amount
    }

    /// A row's problem: the caller puts its line before it.
    /// A `[[when]]` pattern's verdict on a field: read back when an earlier pass decided it, else
    /// worked out (and recorded for the pass that writes). A pattern that takes too long on a
    /// field refuses the file, naming the rule and the line.
    private func matches(_ rule: ImportRules.When, number: Int, _ text: String, line: Int) throws -> Bool {
        if replaying { return rules.verdicts!.next() }
        func refuse(_ why: String) -> ImportFileFailure {
            ImportFileFailure(error: DomainError.invalidField(
                "rules", "\(rules.name): when[\(number + 1)].matches '\(rule.pattern.shown)' \(why) (line \(line)); simplify the pattern"))
        }
        let found: (matched: Bool, steps: Int)
        do {
            found = try rule.pattern.matchesCounting(text)
        } catch is RowPattern.StepLimit {
            if rules.verdicts?.mode == .direct { throw RuleVerdicts.OverBudget() }
            throw refuse("takes more than \(RowPattern.maxSteps) steps on one field")
        }
        if let verdicts = rules.verdicts {
            guard verdicts.spend(found.steps) else {
                if verdicts.mode == .direct { throw RuleVerdicts.OverBudget() }
                throw refuse("takes too long over the file")
            }
            verdicts.record(found.matched)
        }
        return found.matched
    }

    private static func problem(_ reason: String, unmapped code: String? = nil) -> DomainError {
        DomainError(.invalidField, reason, details: code.map { ["field": "row", "unmapped": $0] } ?? ["field": "row"])
    }

    private func columnName(_ index: Int) -> String { Self.label(index, header: header) }

    /// How problems name a column: by its header, or by position.
    private static func label(_ index: Int, header: [String]) -> String {
        index < header.count ? "column '\(header[index])'" : "column \(index + 1)"
    }

    /// A number in the file's notation; an empty field is nil unless `required`.
    private func number(_ index: Int, fields: [String], required: Bool) throws -> Decimal? {
        let text = TransactionCSVFormat.trimmed(fields[index])
        if text.isEmpty, !required { return nil }
        guard let plain = rules.number.value(text), let value = try? Amount.parse(plain) else {
            throw Self.problem("\(columnName(index)): '\(text)' is not an amount (decimal mark '\(Character(Unicode.Scalar(rules.number.decimalMark)))')")
        }
        return value
    }

    /// A date field's instant (to the millisecond).
    private mutating func day(_ text: String, line: Int) throws -> Date {
        let column = dateLabel
        guard let day = try dates.date(text, future: { Self.problem("\(column): \(text) is in the future") }) else {
            let formats = rules.dateFormats.map { "\"\($0.source)\"" }.joined(separator: " or ")
            // The first row not fitting means the rules do not fit the file.
            guard seenRow else {
                throw ImportFileFailure(error: DomainError.invalidField(
                    "rules", "\(rules.name): date_format \(formats) does not match line \(line), the first row's date '\(text)'"))
            }
            throw Self.problem("\(column): '\(text)' does not match date_format \(formats)")
        }
        return day
    }
}
