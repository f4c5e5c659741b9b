import Foundation
import SavingsRPC
import Testing
#if canImport(Glibc)
import Glibc
#endif

/// `tx.import` through rules: every preset's sample file as savingsctl sends it, a German
/// statement's own rules file, `[[when]]`, the running balance check, dry runs, bad rules.
@Suite struct ImportRulesTests {
    static let samples = URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
        .appendingPathComponent("ImportSamples").path

    static func sample(_ name: String) -> String { samples + "/" + name }

    static func makeAssets(_ daemon: DaemonProcess, _ assets: [(String, String, String)]) throws {
        for (name, currency, kind) in assets {
            _ = try daemon.call("asset.create", ["name": .string(name), "currency": .string(currency), "kind": .string(kind)])
        }
    }

    static func balance(_ daemon: DaemonProcess, _ asset: String) throws -> Decimal {
        Decimal(string: try daemon.call("asset.get", ["asset": .string(asset)])["balance"]?.stringValue ?? "") ?? -1
    }

    static func transactions(_ daemon: DaemonProcess, _ asset: String) throws -> [JSONValue] {
        try daemon.call("tx.list", ["asset": .string(asset)])["transactions"]?.arrayValue ?? []
    }

    static func importJSON(_ daemon: DaemonProcess, _ arguments: [String]) throws -> JSONValue {
        try JSONParser.parse(try ok(["--socket", daemon.socketPath, "--json"], ["tx", "import"] + arguments))
    }

    @Test func krakenLedgersImportEveryAssetWithItsRunningBalanceChecked() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Kraken BTC", "BTC", "crypto"), ("Kraken EUR", "EUR", "fiat"), ("Kraken BTC staked", "BTC", "crypto")])
        let maps = ["--map", "XXBT=Kraken BTC", "--map", "ZEUR=Kraken EUR"]
        // XXBT.F has no asset yet: the file is refused, naming its line, and nothing is written.
        let refused = try runCtl(["--socket", daemon.socketPath, "tx", "import", Self.sample("kraken-ledgers.csv"), "--rules", "kraken-ledgers"] + maps)
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("line 7: the file's asset 'XXBT.F' is not mapped"), "\(refused.stderr)")
        #expect(try Self.transactions(daemon, "Kraken EUR").isEmpty)

        let all = maps + ["--map", "XXBT.F=Kraken BTC staked"]
        let result = try Self.importJSON(daemon, [Self.sample("kraken-ledgers.csv"), "--rules", "kraken-ledgers"] + all)
        #expect(result["imported"] == 6)
        let assets = result["assets"]?.arrayValue ?? []
        #expect(assets.map { $0["name"] } == ["Kraken EUR", "Kraken BTC", "Kraken BTC staked"])
        #expect(assets.allSatisfy { $0["balance_checked"] == true })
        #expect(try Self.balance(daemon, "Kraken EUR") == Decimal(string: "499.2"))
        #expect(try Self.balance(daemon, "Kraken BTC") == Decimal(string: "0.01745"))
        #expect(try Self.balance(daemon, "Kraken BTC staked") == Decimal(string: "0.000021"))
        // amount less fee; the note and the id from their templates.
        let withdrawal = try #require(try Self.transactions(daemon, "Kraken BTC").first)
        #expect(withdrawal["amount"].flatMap { $0.stringValue.flatMap { Decimal(string: $0) } } == Decimal(string: "-0.00505"))
        #expect(withdrawal["note"] == "Kraken withdrawal")
        #expect(withdrawal["external_id"] == "LB5D3W-QNXHF-RJZD7Q")

        let again = try Self.importJSON(daemon, [Self.sample("kraken-ledgers.csv"), "--rules", "kraken-ledgers"] + all)
        #expect(again["imported"] == 0)
        #expect(again["already_present"] == 6)
    }

    @Test func coinbaseBinanceAndGermanBankPresetsImportTheirSamples() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Coinbase BTC", "BTC", "crypto"), ("Coinbase ETH", "ETH", "crypto"), ("Binance BTC", "BTC", "crypto"),
                                     ("Binance USDT", "USDT", "crypto"), ("Girokonto", "EUR", "fiat")])
        // Coinbase: the lines before the header skipped; sends negative by type; both date forms.
        let coinbase = try Self.importJSON(daemon, [Self.sample("coinbase.csv"), "--rules", "coinbase", "--map", "BTC=Coinbase BTC", "--map", "ETH=Coinbase ETH"])
        #expect(coinbase["imported"] == 4)
        #expect(try Self.balance(daemon, "Coinbase BTC") == Decimal(string: "0.004"))
        #expect(try Self.balance(daemon, "Coinbase ETH") == Decimal(string: "0.0012"))
        #expect(try Self.transactions(daemon, "Coinbase BTC").map(\.["note"]).contains("Coinbase Send: Sent 0.002 BTC to an external wallet"))

        // Binance: a deposit still processing is skipped by the preset's [[when]].
        let binance = try Self.importJSON(daemon, [Self.sample("binance-deposits.csv"), "--rules", "binance-deposits", "--map", "BTC=Binance BTC",
                                                   "--map", "USDT=Binance USDT"])
        #expect(binance["imported"] == 2)
        #expect(binance["skipped"] == 1)
        #expect(try Self.balance(daemon, "Binance BTC") == Decimal(string: "0.015"))
        #expect(try Self.balance(daemon, "Binance USDT") == 250)

        // A Sparkasse CSV-CAMT file: Windows-1252, semicolons, decimal commas, newest first.
        let bank = try Self.importJSON(daemon, ["Girokonto", Self.sample("generic-bank-de.csv"), "--rules", "generic-bank-de"])
        #expect(bank["imported"] == 2)
        #expect(bank["skipped"] == 1)
        #expect(try Self.balance(daemon, "Girokonto") == 1650)
        let notes = try Self.transactions(daemon, "Girokonto").map(\.["note"])
        #expect(notes == ["Hausverwaltung Müller: Miete März", "Muster GmbH: Gehalt Februar"])
    }

    @Test func aStatementWithPreambleDebitCreditAndRunningBalance() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Konto", "EUR", "fiat"), ("Neu", "EUR", "fiat")])
        _ = try daemon.call("tx.add", ["asset": "Konto", "amount": "2000", "date": "2025-12-31T12:00:00Z", "note": "opening balance"])
        let rules = Self.sample("bank-soll-haben.toml")
        let result = try Self.importJSON(daemon, ["Konto", Self.sample("bank-soll-haben.csv"), "--rules", rules])
        #expect(result["imported"] == 4)
        #expect(try Self.balance(daemon, "Konto") == Decimal(string: "1712.65"))
        #expect(try Self.transactions(daemon, "Konto").map(\.["note"]).contains("Bäckerei Groß: Frühstück"))

        // Without the opening balance the file's first row disagrees with the asset's history.
        let refused = try runCtl(["--socket", daemon.socketPath, "tx", "import", "Neu", Self.sample("bank-soll-haben.csv"), "--rules", rules])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("line 6: balance: the file says 1916 after this row, but Neu would hold -84"), "\(refused.stderr)")
        #expect(try Self.transactions(daemon, "Neu").isEmpty)
        let unchecked = try Self.importJSON(daemon, ["Neu", Self.sample("bank-soll-haben.csv"), "--rules", rules, "--no-balance-check"])
        #expect(unchecked["imported"] == 4)
    }

    @Test func aRunningBalanceThatDisagreesRefusesTheFileAtItsLine() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Konto", "EUR", "fiat")])
        _ = try daemon.call("tx.add", ["asset": "Konto", "amount": "2000", "date": "2025-12-31T12:00:00Z"])
        let directory = try makeScratchDirectory()
        var bytes = try Data(contentsOf: URL(fileURLWithPath: Self.sample("bank-soll-haben.csv")))
        // Line 8's balance 4.253,65 becomes 4.253,66.
        let range = try #require(bytes.range(of: Data("4.253,65".utf8)))
        bytes.replaceSubrange(range, with: Data("4.253,66".utf8))
        try bytes.write(to: URL(fileURLWithPath: directory + "/bad.csv"))
        let failure = try daemon.failure("tx.import", ["asset": "Konto", "path": .string(directory + "/bad.csv"),
                                                       "rules": .string(Self.sample("bank-soll-haben.toml"))])
        #expect(failure.code == -32602)
        #expect(failure.message.contains("line 8: balance: the file says 4253.66 after this row, but Konto would hold 4253.65"), "\(failure.message)")
        #expect(try Self.transactions(daemon, "Konto").count == 1)
    }

    @Test func whenBlocksSkipRowsAndTheBalanceCheckCountsWhatTheyMoved() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Kraken BTC", "BTC", "crypto"), ("Kraken EUR", "EUR", "fiat")])
        let preset = try String(contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/import/kraken-ledgers.toml").path, encoding: .utf8)
        // Trades are skipped, and so is the staking row, whose code has no asset.
        let rules = preset.replacingOccurrences(of: "unmapped = \"error\"", with: "unmapped = \"skip\"") + """

            [[when]]
            column = "type"
            matches = "^TRADE$"
            skip = true
            """
        let result = try daemon.call("tx.import", ["path": .string(Self.sample("kraken-ledgers.csv")), "rules_text": .string(rules),
                                                   "assets": ["XXBT": "Kraken BTC", "ZEUR": "Kraken EUR"]])
        let text = JSONSerializer.serialize(result)
        #expect(result["imported"] == 3, "\(text)")
        #expect(result["skipped"] == 3, "\(text)")
        #expect(result["unmapped"] == ["XXBT.F": 1], "\(text)")
        let assets = result["assets"]?.arrayValue ?? []
        #expect(assets.first { $0["name"] == "Kraken EUR" }?["skipped_amount"] == "-500.8", "\(text)")
        #expect(try Self.balance(daemon, "Kraken EUR") == 1000)
        #expect(try Self.balance(daemon, "Kraken BTC") == Decimal(string: "0.00495"))
    }

    /// Found in review: a one-asset file's skipped rows were not fed to its balance check.
    @Test func aOneAssetFilesSkippedRowsCountInItsRunningBalance() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Konto", "EUR", "fiat")])
        _ = try daemon.call("tx.add", ["asset": "Konto", "amount": "2000", "date": "2025-12-31T12:00:00Z"])
        let rules = try String(contentsOfFile: Self.sample("bank-soll-haben.toml"), encoding: .utf8)
            + "\n[[when]]\ncolumn = \"Empfänger/Auftraggeber\"\nmatches = \"^Bäckerei\"\nskip = true\n"
        let result = try daemon.call("tx.import", ["asset": "Konto", "path": .string(Self.sample("bank-soll-haben.csv")), "rules_text": .string(rules)])
        #expect(result["imported"] == 3, "\(JSONSerializer.serialize(result))")
        #expect(result["skipped"] == 1)
        #expect(result["unmapped"] == [:])
        #expect(result["assets"]?.arrayValue?.first?["skipped_amount"] == "-12.35")
        #expect(try Self.balance(daemon, "Konto") == Decimal(string: "1725"))
    }

    @Test func aDryRunShowsTheRowsAndWritesNothing() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Kraken BTC", "BTC", "crypto"), ("Kraken EUR", "EUR", "fiat")])
        let arguments = ["--socket", daemon.socketPath, "tx", "import", Self.sample("kraken-ledgers.csv"), "--rules", "kraken-ledgers",
                         "--map", "XXBT=Kraken BTC", "--map", "ZEUR=Kraken EUR", "--dry-run"]
        let shown = try runCtl(arguments)
        // XXBT.F is unmapped: the dry run says the file would be refused, and why.
        #expect(shown.status == 1)
        #expect(shown.stdout.contains("L4UESK-KG3EQ-UFO4T5"), "\(shown.stdout)")
        #expect(shown.stdout.contains("Kraken BTC  XXBT"), "\(shown.stdout)")
        #expect(shown.stdout.contains("line 7: the file's asset 'XXBT.F' is not mapped"), "\(shown.stdout)")
        #expect(shown.stdout.contains("Dry run: nothing was written"))
        let result = try daemon.call("tx.import", ["path": .string(Self.sample("kraken-ledgers.csv")), "rules": "kraken-ledgers", "dry_run": true,
                                                   "balance_check": false,
                                                   "assets": ["XXBT": "Kraken BTC", "ZEUR": "Kraken EUR", "XXBT.F": "Kraken BTC"]])
        #expect(result["dry_run"] == true)
        #expect(result["refused"] == false)
        #expect(result["imported"] == 6)
        #expect(result["preview"]?.arrayValue?.map(\.["line"]) == [2, 3, 4, 5, 6, 7])
        #expect(try Self.transactions(daemon, "Kraken BTC").isEmpty)
        #expect(try Self.transactions(daemon, "Kraken EUR").isEmpty)
    }

    @Test func badRulesAreRefusedNamingTheKeyOrLineAndTheDaemonKeepsServing() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Konto", "EUR", "fiat")])
        let file = Self.sample("bank-soll-haben.csv")
        let base = try String(contentsOfFile: Self.sample("bank-soll-haben.toml"), encoding: .utf8)
        func refusal(_ rules: String) throws -> String {
            let failure = try daemon.failure("tx.import", ["asset": "Konto", "path": .string(file), "rules_text": .string(rules)])
            #expect(failure.code == -32602, "invalid_field is an invalid-params error")
            #expect(failure.kind == "invalid_field", "as docs/protocol.md says: \(failure)")
            #expect(failure.data?["param"] == "rules", "\(failure)")
            return failure.message
        }
        #expect(try refusal(base + "\nseperator = \";\"\n").contains("seperator is not a key savingsd knows here"))
        #expect(try refusal(base.replacingOccurrences(of: "[columns]", with: "[columns]\nnotes = \"x\"")).contains("columns.notes is not a key"))
        #expect(try refusal(base + "\n[[when]]\ncolumn = \"Soll\"\nmatches = \"([a\"\nskip = true\n").contains("when[1].matches: '([a' is not a regular expression"))
        #expect(try refusal(base.replacingOccurrences(of: "dd.MM.yyyy", with: "yyyy-MM-dd"))
            .contains("date_format \"yyyy-MM-dd\" does not match line 6, the first row's date '02.01.2026'"))
        #expect(try refusal(base.replacingOccurrences(of: "\"Saldo\"", with: "\"Kontostand\"")).contains("columns.balance names 'Kontostand', which the header (line 5) does not have"))
        #expect(try refusal("separator = \n").contains("line 1"))
        #expect(try daemon.failure("tx.import", ["asset": "Konto", "path": .string(file), "rules": "no-such-bank"]).message
            .contains("neither a preset (binance-deposits, binance-withdrawals, coinbase, dkb, generic-bank-de, ing, kraken-ledgers)"))
        #expect(try daemon.call("daemon.status")["version"] != nil)
        #expect(try Self.transactions(daemon, "Konto").isEmpty)
    }

    /// Found by trying real files: an ISO-8859-1 statement read as UTF-8 was stored with U+FFFD
    /// in its notes. Bytes that are not text in the file's encoding refuse the file, naming the
    /// line and the key that fixes it; with the right encoding it imports.
    @Test func textInAnotherEncodingIsRefusedNeverStoredReplaced() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Konto", "EUR", "fiat")])
        let directory = try makeScratchDirectory()
        let latin1 = Data("Buchungstag;Betrag;Verwendungszweck\n02.01.2026;-4,90;Kontof".utf8) + Data([0xFC]) + Data("hrungsentgelt\n".utf8)
        try latin1.write(to: URL(fileURLWithPath: directory + "/latin1.csv"))
        let rules = "separator = \";\"\ndecimal_mark = \",\"\ndate_format = \"dd.MM.yyyy\"\n[columns]\ndate = \"Buchungstag\"\namount = \"Betrag\"\nnote = \"Verwendungszweck\"\n"
        try rules.write(toFile: directory + "/bank.toml", atomically: true, encoding: .utf8)
        let refused = try runCtl(["--socket", daemon.socketPath, "tx", "import", "Konto", directory + "/latin1.csv", "--rules", directory + "/bank.toml"])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("line 2: bytes that are not UTF-8 text"), "\(refused.stderr)")
        #expect(refused.stderr.contains("encoding = \"windows-1252\""), "\(refused.stderr)")
        #expect(try Self.transactions(daemon, "Konto").isEmpty)
        // The plain format too.
        let plain = Data("date,amount,note\n2026-01-02T10:00:00Z,5,Kontof".utf8) + Data([0xFC]) + Data("hrung\n".utf8)
        try plain.write(to: URL(fileURLWithPath: directory + "/plain.csv"))
        let failure = try daemon.failure("tx.import", ["asset": "Konto", "path": .string(directory + "/plain.csv")])
        #expect(failure.message.contains("line 2: bytes that are not UTF-8 text"), "\(failure.message)")
        #expect(try Self.transactions(daemon, "Konto").isEmpty)

        try ("encoding = \"iso-8859-1\"\n" + rules).write(toFile: directory + "/bank.toml", atomically: true, encoding: .utf8)
        let result = try Self.importJSON(daemon, ["Konto", directory + "/latin1.csv", "--rules", directory + "/bank.toml"])
        #expect(result["imported"] == 1)
        #expect(try Self.transactions(daemon, "Konto").map(\.["note"]) == ["Kontoführungsentgelt"])
    }

    /// Found in review: an asset a [[when]] block or a second leg names that does not exist was
    /// a not_found error that named no key; it is the rules' mistake.
    @Test func anAssetTheRulesNameThatDoesNotExistIsTheRulesMistake() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Coinbase BTC", "BTC", "crypto")])
        let preset = try String(contentsOfFile: URL(fileURLWithPath: #filePath).deletingLastPathComponent().deletingLastPathComponent()
            .deletingLastPathComponent().appendingPathComponent("config/import/coinbase.toml").path, encoding: .utf8)
        let rules = preset.replacingOccurrences(of: " (?<asset>\\S+)'", with: "'\nasset = \"ETH\"")
        #expect(rules != preset)
        let failure = try daemon.failure("tx.import", ["path": .string(Self.samples + "/coinbase/v4.csv"), "rules_text": .string(rules),
                                                       "assets": ["BTC": "Coinbase BTC"]])
        #expect(failure.code == -32602)
        #expect(failure.kind == "invalid_field")
        #expect(failure.message.contains("when[2].second_leg.asset names 'ETH', which is no asset of yours"), "\(failure.message)")
        #expect(try Self.transactions(daemon, "Coinbase BTC").isEmpty)
    }

    /// Found in review: a statement in UTF-8 read with a Windows-1252 preset was stored as
    /// "Hausverwaltung MÃ¼ller"; it is refused, naming the line and the fix.
    @Test func aUTF8StatementReadAsWindows1252IsRefused() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Girokonto", "EUR", "fiat")])
        let original = try Data(contentsOf: URL(fileURLWithPath: Self.sample("generic-bank-de.csv")))
        let text = try #require(String(data: original, encoding: .windowsCP1252))
        let directory = try makeScratchDirectory()
        try Data(text.utf8).write(to: URL(fileURLWithPath: directory + "/utf8.csv"))
        let failure = try daemon.failure("tx.import", ["asset": "Girokonto", "path": .string(directory + "/utf8.csv"), "rules": "generic-bank-de"])
        #expect(failure.message.contains("line 2: text that is not windows-1252, which generic-bank-de reads the file as: it is UTF-8"), "\(failure.message)")
        #expect(try Self.transactions(daemon, "Girokonto").isEmpty)
    }

    /// Patterns run as the rows are written, on a budget of the order of reading the file; a
    /// pattern costing more than that on every row (here 2,000-character fields against a
    /// ten-way alternation) outgrows it, and the import is made again in two passes, the
    /// patterns deciding first: the same rows, verdicts and second legs come out.
    @Test func costlyPatternsImportInTwoPassesWithTheSameResult() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Konto", "EUR", "fiat"), ("Depot", "EUR", "fiat")])
        let directory = try makeScratchDirectory()
        var csv = "date,amount,text\n"
        for row in 0..<300 {
            let filler = String(repeating: "a", count: 2_000)
            csv += "2026-01-\(String(format: "%02d", row % 28 + 1)),\(row + 1),\(row % 3 == 0 ? "skip " : "")\(filler) moved \(row) EUR\n"
        }
        try csv.write(toFile: directory + "/costly.csv", atomically: true, encoding: .utf8)
        let rules = #"""
            [columns]
            date = "date"
            amount = "amount"
            [[when]]
            column = "text"
            matches = "^skip"
            skip = true
            [[when]]
            column = "text"
            matches = "(a|b|c|d|e|f|g|h|i|j)*z?moved"
            [when.second_leg]
            column = "text"
            matches = 'moved (?<amount>\d+)'
            asset = "Depot"
            """#
        let result = try daemon.call("tx.import", ["asset": "Konto", "path": .string(directory + "/costly.csv"), "rules_text": .string(rules)])
        #expect(result["imported"] == 400, "\(JSONSerializer.serialize(result))")
        #expect(result["skipped"] == 100)
        // Rows 2, 3, 5, 6, ... (not every third): 1 + 2 + ... + 300 less 1 + 4 + ... + 298.
        let kept = (0..<300).filter { $0 % 3 != 0 }
        #expect(try Self.balance(daemon, "Konto") == Decimal(kept.map { $0 + 1 }.reduce(0, +)))
        #expect(try Self.balance(daemon, "Depot") == Decimal(kept.reduce(0, +)))
    }

    /// A provider's export sent without rules is told which preset reads it.
    @Test func aFileWithoutRulesIsToldWhichPresetReadsIt() throws {
        let daemon = try DaemonProcess()
        try Self.makeAssets(daemon, [("Kraken BTC", "BTC", "crypto")])
        let refused = try runCtl(["--socket", daemon.socketPath, "tx", "import", Self.sample("kraken-ledgers.csv")])
        #expect(refused.status != 0)
        #expect(refused.stderr.contains("it is laid out as the preset kraken-ledgers reads (Kraken's ledger export): import it with --rules kraken-ledgers"), "\(refused.stderr)")
        // Found in review: a withdrawal history has every column of the deposit history and a
        // fee; the preset reading more of it comes first, and each says what it reads.
        let withdrawals = try runCtl(["--socket", daemon.socketPath, "tx", "import", "Kraken BTC",
                                      Self.samples + "/binance-withdrawals/current.csv"])
        #expect(withdrawals.stderr.contains("presets that read its header: binance-withdrawals (Binance's withdrawal history), binance-deposits (Binance's deposit history)"),
                "\(withdrawals.stderr)")
        let coinbase = try runCtl(["--socket", daemon.socketPath, "tx", "import", "Kraken BTC", Self.sample("coinbase.csv")])
        #expect(coinbase.stderr.contains("--rules coinbase"), "\(coinbase.stderr)")
        // savingsd's own format is imported as before.
        let directory = try makeScratchDirectory()
        try "date,amount\n2026-01-02T10:00:00Z,0.5\n".write(toFile: directory + "/own.csv", atomically: true, encoding: .utf8)
        #expect(try Self.importJSON(daemon, ["Kraken BTC", directory + "/own.csv"])["imported"] == 1)
    }

    /// `tx add --date 2026-03-01`: a date alone is the start of that day in the daemon's zone.
    @Test func aTransactionTakesADateAlone() throws {
        let daemon = try DaemonProcess(environment: ["SAVINGSD_TIMEZONE": "Europe/Berlin"])
        try Self.makeAssets(daemon, [("Konto", "EUR", "fiat")])
        _ = try ok(["--socket", daemon.socketPath], ["tx", "add", "Konto", "10", "--date", "2026-03-01"])
        #expect(try Self.transactions(daemon, "Konto").first?["date"] == "2026-02-28T23:00:00.000Z")
        let bad = try runCtl(["--socket", daemon.socketPath, "tx", "add", "Konto", "10", "--date", "2026-02-30"])
        #expect(bad.status != 0)
    }

    /// The system service's shape: the daemon (as nobody) cannot read the user's rules file
    /// or statement; savingsctl sends both.
    @Test(.enabled(if: FileTransferTests.canRunAsNobody)) func aRulesFileTravelsWithTheStatement() throws {
        let daemon = try DaemonProcess.asNobody()
        _ = try daemon.call("asset.create", ["name": "Konto", "currency": "EUR", "kind": "fiat"])
        _ = try daemon.call("tx.add", ["asset": "Konto", "amount": "2000", "date": "2025-12-31T12:00:00Z"])
        let mine = try FileTransferTests.clientDirectory()
        for name in ["bank-soll-haben.csv", "bank-soll-haben.toml"] {
            try FileManager.default.copyItem(atPath: Self.sample(name), toPath: mine + "/" + name)
        }
        let refused = try daemon.failure("tx.import", ["asset": "Konto", "path": .string(mine + "/bank-soll-haben.csv"),
                                                       "rules": .string(mine + "/bank-soll-haben.toml")])
        #expect(refused.message.contains("cannot read"))
        let result = try Self.importJSON(daemon, ["Konto", mine + "/bank-soll-haben.csv", "--rules", mine + "/bank-soll-haben.toml"])
        #expect(result["imported"] == 4)
        #expect(try Self.balance(daemon, "Konto") == Decimal(string: "1712.65"))
    }
}
