import Foundation
import SavingsCore
import SavingsStore

/// `csv`: a file `tx.import` reads, through one of a few fixed rules files: the input's first
/// line names them (`plain` for the format without rules, a shipped preset, or one of
/// `FixedRules`; any other first line picks one by its bytes), the rest is the file. The rows
/// are read and keyed as the import reads them before it stores any (`ImportReader.rows`, no
/// database). Keys made from a row's content must tell every row of the file apart.
enum CSVTarget {
    static let target = FuzzTarget("csv", prepare: { _ = choices }, run: run)

    /// The rules to read with, by name (nil: the plain format).
    static let choices: [(name: String, rules: ImportRules?)] = {
        var choices: [(name: String, rules: ImportRules?)] = [("plain", nil)]
        do {
            for name in ImportPresets.names {
                // As `--map CODE=NAME` gives them: the codes of the sample files, one left unmapped.
                var rules = try ImportPresets.rules(name)
                for code in ["BTC", "ETH", "USDT", "ZEUR", "XXBT", "EUR"] { rules?.assets[code] = "Asset \(code)" }
                choices.append((name, rules))
            }
            for (name, text) in FixedRules.texts { choices.append((name, try ImportRules(toml: text, name: name))) }
        } catch {
            fatalError("savings-fuzz: a fixed rules file is refused: \(error)")
        }
        return choices
    }()

    /// A fixed instant, so that what is "in the future" does not change between runs.
    static let now = Date(timeIntervalSince1970: 1_900_000_000)
    static let timeZone = TimeZone(identifier: "Europe/Berlin")!

    static func run(_ input: UnsafeRawBufferPointer) {
        let newline = input.firstIndex(of: 0x0A) ?? input.endIndex
        let selector = input[..<newline]
        let name = String(decoding: selector, as: UTF8.self)
        let choice = choices.first { $0.name == name } ?? choices[selector.reduce(0) { $0 + Int($1) } % choices.count]
        let file = UnsafeRawBufferPointer(rebasing: input[min(newline + 1, input.endIndex)...])
        // A file sent without rules is first shown to every preset (`PresetProbe`).
        if choice.rules == nil {
            let names = PresetProbe.matching(Array(file.prefix(PresetProbe.prefixBytes)), now: now, timeZone: timeZone)
            trace("csv: presets reading the header: \(names)")
        }
        guard let fd = MemoryFile.make(file) else { return }
        let importFile = ImportFile(name: "the upload", field: "upload", size: file.count) {
            FileHandle(fileDescriptor: fd, closeOnDealloc: true)
        }
        var derived = Set<String>()
        var rows = 0, problems = 0
        do {
            try ImportReader.rows(importFile, rules: choice.rules, now: now, timeZone: timeZone, directory: NSTemporaryDirectory()) { row, key in
                if case .failure(let problem) = row {
                    problems += 1
                    trace("  line \(problem.line): \(problem.reason)")
                }
                guard case .success(.row(let read, _, _, _)) = row else { return }
                rows += 1
                guard let key else { finding("line \(read.line): a good row without a key") }
                if read.externalID == nil, !derived.insert(key).inserted {
                    finding("line \(read.line): the content key \(key) of a row without an external_id is another row's too")
                }
            }
            trace("csv \(choice.name): \(rows) rows, \(problems) problems")
        } catch {
            // The file refused as a whole (a field too long, rules that do not fit it).
            trace("csv \(choice.name): refused: \(error)")
        }
    }
}

/// An input as a file the import can open: one unlinked temporary file, rewritten for each input.
enum MemoryFile {
    static let fd: Int32 = {
        var template = Array((NSTemporaryDirectory() + "/savings-fuzz-XXXXXX").utf8CString)
        let fd = mkstemp(&template)
        guard fd >= 0 else { fatalError("savings-fuzz: cannot make a temporary file (errno \(errno))") }
        unlink(template)
        return fd
    }()

    /// A descriptor reading `bytes` from their start (the reader closes it).
    static func make(_ bytes: UnsafeRawBufferPointer) -> Int32? {
        guard ftruncate(fd, 0) == 0 else { fatalError("savings-fuzz: ftruncate failed (errno \(errno))") }
        var written = 0
        while written < bytes.count {
            let count = pwrite(fd, bytes.baseAddress! + written, bytes.count - written, off_t(written))
            guard count > 0 else { fatalError("savings-fuzz: writing the temporary file failed (errno \(errno))") }
            written += count
        }
        lseek(fd, 0, SEEK_SET)
        return dup(fd)
    }
}

/// Rules files beside the presets, for what the presets do not use: no header (positions),
/// a tab separator, lines skipped by count, Windows-1252, money in and out with a fee,
/// thousands separators; an asset column with unmapped codes skipped, a header found by a
/// pattern, a UTF-8 byte order mark, `[[when]]` rules setting direction, asset, note and id,
/// a running balance; ISO-8859-1 with semicolons and decimal commas (Tests/ImportSamples).
enum FixedRules {
    static let texts: [(String, String)] = [
        ("positions", #"""
            header = false
            separator = "\t"
            skip = 2
            encoding = "windows-1252"
            decimal_mark = "."
            thousands_separator = ","
            date_format = ["yyyy-MM-dd", "dd/MM/yyyy", "iso8601"]
            timezone = "America/New_York"

            [columns]
            date = 1
            amount_in = 2
            amount_out = 3
            fee = 4
            note = "{5} / {6}"
            external_id = 7
            """#),
        ("routes", #"""
            skip = "^\"?Date\"?[,;]"
            encoding = "utf-8-bom"
            date_format = ["yyyy-MM-dd HH:mm", "dd.MM.yy"]
            unmapped = "skip"

            [columns]
            date = "Date"
            amount = "Amount"
            asset = "Currency"
            balance = "Balance"
            note = "{Type}: {Details}"

            [assets]
            EUR = "Cash"
            BTC = "Cold BTC"

            [[when]]
            column = "Type"
            matches = "(?i)^fee"
            direction = "out"
            note = "fee {Details}"

            [[when]]
            column = "Details"
            matches = "refund|reversal"
            direction = "in"
            external_id = "refund-{Date}-{Amount}"

            [[when]]
            column = "Type"
            matches = "^Transfer$"
            asset = "Savings"

            [[when]]
            column = "State"
            matches = "^(pending|failed)$"
            skip = true
            """#),
        ("soll-haben", #"""
            separator = ";"
            skip = 4
            encoding = "iso-8859-1"
            decimal_mark = ","
            thousands_separator = "."
            date_format = "dd.MM.yyyy"
            timezone = "Europe/Berlin"

            [columns]
            date = "Buchungstag"
            amount_in = "Haben"
            amount_out = "Soll"
            balance = "Saldo"
            note = "{Empfänger/Auftraggeber}: {Verwendungszweck}"
            """#),
    ]
}
