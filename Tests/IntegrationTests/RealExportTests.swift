import Foundation
import SavingsRPC
import Testing

/// Every preset on every layout version its sources name: `Tests/ImportSamples/PRESET/VERSION.csv`,
/// laid out as the provider writes it, imported through savingsctl as a user would, to the rows
/// and balances worked out by hand in `VERSION.expected`; a dry run first (writing nothing), and
/// a second import that adds nothing.
@Suite struct RealExportTests {
    /// What a sample's `.expected` file says.
    struct Expected: Sendable, CustomStringConvertible {
        struct Asset: Sendable {
            var name: String, currency: String, kind: String, codes: [String]
        }

        struct Row: Sendable, Equatable, CustomStringConvertible {
            var line: Int, asset: String, date: String, amount: Decimal, externalID: String?
            var description: String { "\(line) \(asset) \(date) \(amount) \(externalID ?? "-")" }
        }

        var preset: String
        var version: String
        var csv: String
        var assets: [Asset] = []
        var openings: [(asset: String, date: String, amount: String)] = []
        var rows: [Row] = []
        var skipped = 0
        var balances: [String: Decimal] = [:]

        var description: String { "\(preset)/\(version)" }

        init(preset: String, version: String, csv: String, text: String) throws {
            self.preset = preset
            self.version = version
            self.csv = csv
            for raw in text.split(separator: "\n") {
                let line = raw.trimmingCharacters(in: .whitespaces)
                guard !line.isEmpty, !line.hasPrefix("#"), let colon = line.firstIndex(of: ":") else { continue }
                let key = line[..<colon]
                let fields = line[line.index(after: colon)...].split(separator: "|", omittingEmptySubsequences: false)
                    .map { $0.trimmingCharacters(in: .whitespaces) }
                func decimal(_ text: String) throws -> Decimal { try #require(Decimal(string: text), "\(text) in \(csv)") }
                switch key {
                case "preset": continue
                case "asset":
                    let codes = fields[3] == "-" ? [] : fields[3].split(separator: ",").map { $0.trimmingCharacters(in: .whitespaces) }
                    assets.append(Asset(name: fields[0], currency: fields[1], kind: fields[2], codes: codes))
                case "opening": openings.append((fields[0], fields[1], fields[2]))
                case "row":
                    rows.append(Row(line: try #require(Int(fields[0])), asset: fields[1], date: fields[2], amount: try decimal(fields[3]),
                                    externalID: fields[4] == "-" ? nil : fields[4]))
                case "skipped": skipped = try #require(Int(fields[0]))
                case "balance": balances[fields[0]] = try decimal(fields[1])
                default: Issue.record("unknown key \(key) in \(csv)")
                }
            }
        }
    }

    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ImportSamples")

    /// Every sample with its expectations, by preset and version.
    static let all: [Expected] = {
        let manager = FileManager.default
        var found: [Expected] = []
        let presets = ((try? manager.contentsOfDirectory(atPath: samples.path)) ?? []).sorted()
        for preset in presets {
            let folder = samples.appendingPathComponent(preset)
            guard let files = try? manager.contentsOfDirectory(atPath: folder.path) else { continue }
            for file in files.sorted() where file.hasSuffix(".expected") {
                let version = String(file.dropLast(".expected".count))
                let csv = folder.appendingPathComponent(version + ".csv").path
                guard let text = try? String(contentsOfFile: folder.appendingPathComponent(file).path, encoding: .utf8),
                      let expected = try? Expected(preset: preset, version: version, csv: csv, text: text) else { continue }
                found.append(expected)
            }
        }
        return found
    }()

    @Test func everyPresetHasASampleOfEveryLayoutVersion() {
        let versions = Dictionary(grouping: Self.all, by: \.preset).mapValues { Set($0.map(\.version)) }
        #expect(versions["kraken-ledgers"] == ["9-columns", "10-columns", "11-columns", "12-columns"])
        #expect(versions["coinbase"] == ["v4", "v4-addresses", "2023", "2022"])
        #expect(versions["binance-deposits"] == ["current", "old"])
        #expect(versions["binance-withdrawals"] == ["current", "old"])
        #expect((versions["dkb"]?.count ?? 0) >= 1)
        #expect(versions["ing"]?.count == 1)
        #expect(versions["generic-bank-de"]?.count == 1)
        #expect(Set(versions.keys) == Set(["kraken-ledgers", "coinbase", "binance-deposits", "binance-withdrawals", "dkb", "ing", "generic-bank-de"]))
    }

    @Test(arguments: all) func importsToTheRowsAndBalancesWorkedOutByHand(_ sample: Expected) throws {
        let daemon = try DaemonProcess()
        for asset in sample.assets {
            _ = try daemon.call("asset.create", ["name": .string(asset.name), "currency": .string(asset.currency), "kind": .string(asset.kind)])
        }
        for opening in sample.openings {
            _ = try daemon.call("tx.add", ["asset": .string(opening.asset), "amount": .string(opening.amount), "date": .string(opening.date),
                                           "note": "opening balance"])
        }
        let before = try Self.stored(daemon, sample)
        var arguments = ["--socket", daemon.socketPath, "--json", "tx", "import"]
        if sample.assets.count == 1, sample.assets[0].codes.isEmpty { arguments.append(sample.assets[0].name) }
        arguments += [sample.csv, "--rules", sample.preset]
        for asset in sample.assets {
            for code in asset.codes { arguments += ["--map", "\(code)=\(asset.name)"] }
        }

        // The dry run shows every row as it would be stored, with its line, and writes nothing.
        let dry = try runCtl(arguments + ["--dry-run"])
        #expect(dry.status == 0, "\(sample): \(dry.stderr) \(dry.stdout)")
        let preview = try JSONParser.parse(dry.stdout)
        let shown = (preview["preview"]?.arrayValue ?? []).map { row in
            Expected.Row(line: row["line"]?.intValue ?? 0, asset: row["asset"]?.stringValue ?? "", date: row["date"]?.stringValue ?? "",
                         amount: Decimal(string: row["amount"]?.stringValue ?? "") ?? -1, externalID: row["external_id"]?.stringValue)
        }
        // Rows without an id of their own get a content key the preview shows instead.
        let comparable = shown.map { row in
            var row = row
            if !(sample.rows.contains { $0.line == row.line && $0.asset == row.asset && $0.externalID != nil }) { row.externalID = nil }
            return row
        }
        let order = { (a: Expected.Row, b: Expected.Row) in (a.line, a.asset) < (b.line, b.asset) }
        #expect(comparable.sorted(by: order) == sample.rows.sorted(by: order), "\(sample)")
        #expect(preview["skipped"]?.intValue == sample.skipped, "\(sample): \(dry.stdout)")
        #expect(try Self.stored(daemon, sample) == before, "\(sample): the dry run wrote")

        let imported = try JSONParser.parse(try ok([], arguments))
        #expect(imported["imported"]?.intValue == sample.rows.count, "\(sample)")
        #expect(imported["skipped"]?.intValue == sample.skipped, "\(sample)")
        for (asset, balance) in sample.balances {
            let found = Decimal(string: try daemon.call("asset.get", ["asset": .string(asset)])["balance"]?.stringValue ?? "")
            #expect(found == balance, "\(sample): \(asset)")
        }
        let stored = try Self.stored(daemon, sample)
        for asset in sample.assets {
            let wanted = sample.rows.filter { $0.asset == asset.name }.map { "\($0.date) \($0.amount) \($0.externalID ?? "-")" }
            let got = (stored[asset.name] ?? []).filter { !$0.contains("opening") }.map { $0.components(separatedBy: " note:")[0] }
            #expect(got.sorted() == wanted.sorted(), "\(sample): \(asset.name)")
        }
        if sample.preset == "kraken-ledgers" || sample.preset == "ing" {
            #expect((imported["assets"]?.arrayValue ?? []).allSatisfy { $0["balance_checked"] == true }, "\(sample)")
        }

        let again = try JSONParser.parse(try ok([], arguments))
        #expect(again["imported"]?.intValue == 0, "\(sample)")
        #expect(again["already_present"]?.intValue == sample.rows.count, "\(sample)")
        #expect(try Self.stored(daemon, sample) == stored)
    }

    /// Found by trying real files: in a statement listed newest first, a mismatch named the
    /// row below (older than) the one that is wrong. ING's line 16 books −7.80 where its Saldo
    /// says −6.80: line 16 is named, with what it would hold.
    @Test func aNewestFirstMismatchNamesTheLineThatIsWrong() throws {
        let daemon = try DaemonProcess()
        _ = try daemon.call("asset.create", ["name": "ING Giro", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("tx.add", ["asset": "ING Giro", "amount": "1200", "date": "2026-02-01T12:00:00Z"])
        var bytes = try Data(contentsOf: Self.samples.appendingPathComponent("ing/umsatzanzeige.csv"))
        let range = try #require(bytes.range(of: Data(";-6,80;EUR".utf8)))
        bytes.replaceSubrange(range, with: Data(";-7,80;EUR".utf8))
        let directory = try makeScratchDirectory()
        try bytes.write(to: URL(fileURLWithPath: directory + "/ing.csv"))
        let refused = try runCtl(["--socket", daemon.socketPath, "tx", "import", "ING Giro", directory + "/ing.csv", "--rules", "ing"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("line 16: balance: the file says 2249.85 after this row, but ING Giro would hold 2248.85"), "\(refused.stderr)")
        #expect(try daemon.call("tx.list", ["asset": "ING Giro"])["transactions"]?.arrayValue?.count == 1)
    }

    /// Each asset's transactions as "date amount external_id note:…".
    static func stored(_ daemon: DaemonProcess, _ sample: Expected) throws -> [String: [String]] {
        var stored: [String: [String]] = [:]
        for asset in sample.assets {
            let list = try daemon.call("tx.list", ["asset": .string(asset.name)])["transactions"]?.arrayValue ?? []
            stored[asset.name] = list.map { tx in
                let amount = Decimal(string: tx["amount"]?.stringValue ?? "") ?? -1
                // A row without an id of its own is kept by its content key.
                let id = tx["external_id"]?.stringValue.flatMap { $0.hasPrefix("csv-") ? nil : $0 } ?? "-"
                return "\(tx["date"]?.stringValue ?? "") \(amount) \(id) note:\(tx["note"]?.stringValue ?? "")"
            }
        }
        return stored
    }
}
