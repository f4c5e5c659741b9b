import ArgumentParser
import Foundation
import SavingsCLI
import SavingsRPC

/// Paths go to the daemon, which does not share our working directory: make them absolute.
func absolute(_ path: String) -> String {
    path.hasPrefix("/") ? path : FileManager.default.currentDirectoryPath + "/" + path
}

struct BackupCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "backup", abstract: "Write a consistent copy of the database to PATH.",
        discussion: "The copy travels over the connection and is written by savingsctl with your permissions (mode 0600, renamed into place when complete).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The new file (must not exist unless --overwrite).") var path: String
    @Flag(help: "Replace an existing file.") var overwrite = false

    func run() throws {
        let session = try ClientSession(global)
        let target = absolute(path)
        session.output(try session.download("db.backup", [:], to: target, overwrite: overwrite, unit: "pages")) {
            "backup written to \(target) (\(Render.text($0["bytes"])) bytes)"
        }
    }
}

struct CheckCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "check", abstract: "Check the database file and the domain invariants.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let session = try ClientSession(global)
        let report = try session.call("db.check")
        session.output(report) { report in
            var lines = ["integrity      \(report["integrity"]?.arrayValue?.map(Render.text).joined(separator: "; ") ?? "-")",
                         "foreign keys   \(report["foreign_keys"]?.arrayValue?.isEmpty == true ? "ok" : "VIOLATED")"]
            lines += (report["foreign_keys"]?.arrayValue ?? []).map { "  " + Render.text($0) }
            for invariant in report["invariants"]?.arrayValue ?? [] {
                lines.append("\(invariant["ok"] == true ? "ok  " : "FAIL") \(Render.text(invariant["name"]))")
                lines += (invariant["problems"]?.arrayValue ?? []).map { "       " + Render.text($0) }
            }
            lines.append(report["ok"] == true ? "the database is sound" : "problems found: restore a backup (savingsctl import) or report them")
            return lines.joined(separator: "\n")
        }
        if report["ok"] != true { throw ExitCode(1) }
    }
}

struct ExportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "export", abstract: "Export everything as JSON, to PATH or standard output.")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "Write the document here (mode 0600).") var path: String?
    @Flag(help: "Replace an existing file.") var overwrite = false

    func run() throws {
        let session = try ClientSession(global)
        guard let path else {
            _ = try session.download("data.export", [:], to: nil, overwrite: false, unit: "rows")
            return
        }
        let target = absolute(path)
        session.output(try session.download("data.export", [:], to: target, overwrite: overwrite, unit: "rows")) {
            "exported to \(target) (\(Render.text($0["bytes"])) bytes)"
        }
    }
}

struct ImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(commandName: "import", abstract: "Restore an export into an empty database (or --replace).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The export document (- reads standard input).") var path: String
    @Flag(help: "Replace the current data (a backup is made first).") var replace = false

    func run() throws {
        let session = try ClientSession(global)
        session.output(try session.upload("data.import", ["replace": .bool(replace)], file: path, unit: "rows")) { result in
            let counts = result["counts"]?.objectValue?.sorted { $0.key < $1.key }.map { "\($0.key) \(Render.text($0.value))" } ?? []
            return "imported: " + counts.joined(separator: ", ") + (result["backup"].map { "\nprevious data backed up to \(Render.text($0))" } ?? "")
        }
    }
}

extension TxCommand {
    struct Import: ParsableCommand {
        static let configuration = CommandConfiguration(
            commandName: "import", abstract: "Import transactions from a CSV file: date,amount[,note,external_id], or any export through rules.",
            discussion: """
                Importing the same file again inserts nothing. A bad row refuses the file unless --partial.
                A bank's or exchange's own export is read through rules: a preset (kraken-ledgers, coinbase, \
                binance-deposits, binance-withdrawals, dkb, ing, generic-bank-de) or a rules file (TOML). \
                A file sent without --rules that a preset reads is refused naming it. Try it with --dry-run first.
                  savingsctl tx import ledgers.csv --rules kraken-ledgers --map XXBT="Kraken BTC" --dry-run
                  savingsctl tx import Girokonto umsaetze.csv --rules generic-bank-de
                """)
        @OptionGroup var global: GlobalOptions
        @Argument(help: ArgumentHelp("[ASSET] FILE: the asset's name or id (unless the rules name each row's asset), then the CSV file (- reads standard input).",
                                     valueName: "asset-and-file"))
        var arguments: [String]
        @Option(help: ArgumentHelp("A preset's name, or a rules file: one here is sent with the file; an absolute path savingsctl cannot read is the daemon's.",
                                   valueName: "name-or-path"))
        var rules: String?
        @Option(name: .customLong("map"), help: ArgumentHelp("The file's asset code and the asset it is (repeatable).", valueName: "CODE=ASSET"))
        var mappings: [String] = []
        @Flag(help: "Read and check the file, show the first rows as they would be stored and the totals per asset; write nothing.")
        var dryRun = false
        @Flag(help: "Do not check the rules' running balance column.") var noBalanceCheck = false
        @Flag(help: "Import the good rows and report the bad ones.") var partial = false

        func validate() throws {
            guard (1...2).contains(arguments.count) else { throw ValidationError("give the file, after the asset's name when the rules do not name one") }
            for mapping in mappings where !mapping.contains("=") { throw ValidationError("--map takes CODE=ASSET, got '\(mapping)'") }
        }

        func run() throws {
            let session = try ClientSession(global)
            let file = arguments.last!
            var params: [String: JSONValue] = ["partial": .bool(partial), "dry_run": .bool(dryRun)]
            if arguments.count == 2 { params["asset"] = .string(arguments[0]) }
            if noBalanceCheck { params["balance_check"] = false }
            if let rules {
                // A rules file savingsctl can read travels with the call: the daemon may not see it.
                if FileManager.default.isReadableFile(atPath: rules), let text = try? String(contentsOfFile: rules, encoding: .utf8) {
                    params["rules_text"] = .string(text)
                } else {
                    params["rules"] = .string(rules)
                }
            }
            if !mappings.isEmpty {
                params["assets"] = .object(Dictionary(mappings.map { mapping in
                    let parts = mapping.split(separator: "=", maxSplits: 1)
                    return (String(parts[0]), JSONValue.string(parts.count > 1 ? String(parts[1]) : ""))
                }) { _, last in last })
            }
            // On a terminal, a progress bar on standard error (the file's lines give the total).
            let lines = isatty(STDERR_FILENO) == 1 && file != "-" ? Self.lineCount(file).map { max(0, $0 - 1) } : nil
            let result = try session.upload("tx.import", params, file: file, unit: "rows", total: lines)
            session.output(result) { Views.importResult($0, style: .standardOutput) }
            // A dry run that finds the file would be refused says so in its exit status too.
            if result["refused"] == true { throw ClientFailure(message: "the dry run found problems: the file would be refused", exitCode: 1) }
        }

        /// Newlines in the file, read in chunks; nil when unreadable (the bar then counts only).
        static func lineCount(_ path: String) -> Int? {
            guard let handle = FileHandle(forReadingAtPath: path) else { return nil }
            defer { try? handle.close() }
            var count = 0
            while let chunk = try? handle.read(upToCount: 1 << 20), !chunk.isEmpty {
                count += chunk.reduce(0) { $0 + ($1 == 0x0A ? 1 : 0) }
            }
            return count
        }
    }
}

/// A one-line progress display on standard error, redrawn in place.
final class ProgressLine {
    let total: Int?
    let unit: String

    init(total: Int?, unit: String) {
        self.total = total
        self.unit = unit
    }

    func show(phase: String, done: Int, total reported: Int? = nil, unit shown: String? = nil) {
        let unit = shown ?? unit
        var line = "\(phase) \(done) \(unit)"
        if let total = reported ?? (shown == nil ? total : nil), total > 0 {
            let width = 30, filled = min(width, done * width / total)
            line = phase.rightPadded(to: 12) + " [" + String(repeating: "#", count: filled)
                + String(repeating: "-", count: width - filled) + "] \(done)/\(total) \(unit)"
        }
        FileHandle.standardError.write(Data(("\r" + line + "\u{1B}[K").utf8))
    }

    func finish() { FileHandle.standardError.write(Data("\r\u{1B}[K".utf8)) }
}

struct LegacyImportCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "legacy-import", abstract: "Import the earlier app's JSON export (backup first; all or nothing).")
    @OptionGroup var global: GlobalOptions
    @Argument(help: "The export file (- reads standard input).") var path: String
    @Flag(name: .customLong("dry-run"), help: "Report what would happen without writing.") var dryRun = false

    func run() throws {
        let session = try ClientSession(global)
        session.output(try session.upload("data.legacy_import", ["dry_run": .bool(dryRun)], file: path, unit: "rows")) { report in
            if report["already_imported"] == true { return "this document was imported before; nothing changed" }
            var lines = [report["dry_run"] == true ? "dry run: nothing was written" : "imported"]
            for step in report["steps"]?.arrayValue ?? [] {
                let counts = step["counts"]?.objectValue?.sorted { $0.key < $1.key }.map { "\($0.key) \(Render.text($0.value))" } ?? []
                lines.append("  \(Render.text(step["name"])): \(counts.joined(separator: ", "))")
            }
            lines += (report["warnings"]?.arrayValue ?? []).map { "warning: " + Render.text($0) }
            if let backup = report["backup"] { lines.append("previous data backed up to \(Render.text(backup))") }
            return lines.joined(separator: "\n")
        }
    }
}

struct DemoCommand: ParsableCommand {
    static let configuration = CommandConfiguration(
        commandName: "demo", abstract: "Fill an empty database with a realistic example to explore.",
        discussion: "Four goals, a bank account, brokerage cash and two crypto wallets, five closed months and this month executing. A database that holds anything is refused.")
    @OptionGroup var global: GlobalOptions

    func run() throws {
        let session = try ClientSession(global)
        session.output(try session.call("data.demo")) { result in
            """
            demo loaded: \(Render.text(result["goals"])) goals, \(Render.text(result["assets"])) assets, \
            \(Render.text(result["transactions"])) transactions, \(Render.text(result["closed_months"])) closed months, \
            \(Render.text(result["executing_month"])) executing
            try: savingsctl            (this month at a glance)
                 savingsctl dashboard
                 savingsctl month status
                 savingsctl report --html report.html
            """
        }
    }
}
