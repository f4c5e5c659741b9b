import Foundation

/// Which shipped preset reads a file: a file imported without rules whose header is not
/// savingsd's own is offered the preset whose header it has.
public enum PresetProbe {
    /// Bytes of a file's start looked at.
    public static let prefixBytes = 64 * 1024

    /// The presets that find every column they read in the header of a file starting with
    /// `prefix`, by name, those reading more of its columns first (a withdrawal history's
    /// header has the deposit history's columns and a fee); empty when the file is savingsd's
    /// own `date,amount,…` (or none fits).
    public static func matching(_ prefix: [UInt8], now: Date, timeZone: TimeZone) -> [String] {
        let body = prefix.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(prefix.dropFirst(3)) : prefix
        let lines = body.split(separator: 0x0A, maxSplits: 2_000, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? Array(line.dropLast()) : Array(line)
        }
        if let first = lines.first, (try? TransactionCSVFormat(header: record(first, separator: UInt8(ascii: ","), encoding: .utf8, line: 1),
                                                               timeZone: timeZone, now: now)) != nil {
            return []
        }
        let found: [(name: String, columns: Int)] = presets.compactMap { name, rules in
            guard let line = headerLine(lines, rules: rules) else { return nil }
            let header = record(lines[line], separator: rules.separator, encoding: rules.encoding, line: line + 1)
            guard let format = try? RulesRowFormat(rules: rules, header: header, now: now, timeZone: timeZone) else { return nil }
            return (name, format.columnsRead)
        }
        return found.sorted { $0.columns > $1.columns }.map(\.name)
    }

    /// What a preset reads, from the first line of its comment: "Binance's withdrawal history".
    public static func title(_ name: String) -> String {
        guard let text = ImportPresets.texts[name], let first = text.split(separator: "\n").first, first.hasPrefix("# ") else { return name }
        let line = first.dropFirst(2)
        let end = [line.range(of: " (")?.lowerBound, line.firstIndex(of: ":"), line.firstIndex(of: ",")].compactMap { $0 }.min() ?? line.endIndex
        return String(line[..<end])
    }

    /// The shipped presets, read once.
    private static let presets: [(name: String, rules: ImportRules)] = ImportPresets.names.compactMap { name in
        (try? ImportPresets.rules(name)).flatMap { $0 }.map { (name, $0) }
    }

    /// What a file without rules is told when a preset reads it.
    public static func suggestion(_ names: [String]) -> String? {
        guard let first = names.first else { return nil }
        let intro = "the file's header is not date,amount[,note,external_id]"
        guard names.count > 1 else {
            return "\(intro); it is laid out as the preset \(first) reads (\(title(first))): import it with --rules \(first) (rules = \"\(first)\"), and try --dry-run first"
        }
        // Some exports share a header (Binance's deposits and withdrawals): the user knows which this is.
        let listed = names.map { "\($0) (\(title($0)))" }.joined(separator: ", ")
        return "\(intro); presets that read its header: \(listed); import it with --rules and the one that says what the file holds, and try --dry-run first"
    }

    /// The index of the header line the rules' `skip` leads to, within `lines`.
    private static func headerLine(_ lines: [[UInt8]], rules: ImportRules) -> Int? {
        switch rules.skip {
        case .lines(let count):
            return count < lines.count ? count : nil
        case .until(let pattern):
            for (index, line) in lines.enumerated().prefix(200) {
                let text = rules.encoding.text(line) ?? String(decoding: line, as: UTF8.self)
                if (try? pattern.matches(text)) == true { return index }
            }
            return nil
        }
    }

    private static func record(_ line: [UInt8], separator: UInt8, encoding: ImportRules.Encoding, line number: Int) -> CSVTokenizer.Record {
        var tokenizer = CSVTokenizer(separator: separator, encoding: encoding, line: number)
        var records = tokenizer.feed(line)
        if let last = tokenizer.finish() { records.append(last) }
        return records.first ?? CSVTokenizer.Record(line: number, fields: [])
    }
}
