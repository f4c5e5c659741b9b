import Foundation

/// Which shipped preset reads a file: a file imported without rules whose header is not
/// savingsd's own is offered the preset whose header it has.
public enum PresetProbe {
    /// Bytes of a file's start looked at.
    public static let prefixBytes = 64 * 1024

    /// The presets that find every column they read in the header of a file starting with
    /// `prefix`, by name; empty when the file is savingsd's own `date,amount,…` (or none fits).
    public static func matching(_ prefix: [UInt8], now: Date, timeZone: TimeZone) -> [String] {
        let body = prefix.starts(with: [0xEF, 0xBB, 0xBF]) ? Array(prefix.dropFirst(3)) : prefix
        let lines = body.split(separator: 0x0A, maxSplits: 2_000, omittingEmptySubsequences: false).map { line in
            line.last == 0x0D ? Array(line.dropLast()) : Array(line)
        }
        if let first = lines.first, (try? TransactionCSVFormat(header: record(first, separator: UInt8(ascii: ","), encoding: .utf8, line: 1),
                                                               timeZone: timeZone, now: now)) != nil {
            return []
        }
        return presets.filter { _, rules in
            guard let line = headerLine(lines, rules: rules) else { return false }
            let header = record(lines[line], separator: rules.separator, encoding: rules.encoding, line: line + 1)
            return (try? RulesRowFormat(rules: rules, header: header, now: now, timeZone: timeZone)) != nil
        }.map(\.name)
    }

    /// The shipped presets, read once.
    private static let presets: [(name: String, rules: ImportRules)] = ImportPresets.names.compactMap { name in
        (try? ImportPresets.rules(name)).flatMap { $0 }.map { (name, $0) }
    }

    /// What a file without rules is told when a preset reads it.
    public static func suggestion(_ names: [String]) -> String? {
        guard let first = names.first else { return nil }
        let others = names.dropFirst().map { "--rules \($0)" }
        return "the file's header is not date,amount[,note,external_id]; it is laid out as the preset \(first) reads: import it with --rules \(first)"
            + (others.isEmpty ? "" : " (or \(others.joined(separator: ", ")))") + " (rules = \"\(first)\"), and try --dry-run first"
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
