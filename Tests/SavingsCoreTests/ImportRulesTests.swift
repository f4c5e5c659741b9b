import Foundation
@testable import SavingsCore
import Testing

@Suite struct ImportRulesTests {
    static let utc = TimeZone(identifier: "UTC")!

    static func calendar(_ zone: TimeZone = utc) -> Calendar {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = zone
        return calendar
    }

    @Test func datePatternsReadTheirFormsAndRefuseOthers() throws {
        let german = try DatePattern(parsing: "dd.MM.yyyy", key: "date_format")
        let berlin = Self.calendar(TimeZone(identifier: "Europe/Berlin")!)
        #expect(german.date("02.01.2026", calendar: berlin).map(Timestamp.format) == "2026-01-01T23:00:00.000Z")
        #expect(german.date("31.02.2026", calendar: berlin) == nil, "a day the month does not have")
        #expect(german.date("2.1.2026", calendar: berlin) == nil)
        let short = try DatePattern(parsing: "d.M.yy", key: "date_format")
        #expect(short.date("2.1.26", calendar: Self.calendar()).map(Timestamp.format) == "2026-01-02T00:00:00.000Z")
        let kraken = try DatePattern(parsing: "yyyy-MM-dd HH:mm:ss.S", key: "date_format")
        #expect(kraken.date("2026-01-05 10:02:11.3382", calendar: Self.calendar()).map(Timestamp.format) == "2026-01-05T10:02:11.338Z")
        let coinbase = try DatePattern(parsing: "yyyy-MM-dd HH:mm:ss 'UTC'", key: "date_format")
        #expect(coinbase.date("2026-02-15 11:00:00 UTC", calendar: Self.calendar()).map(Timestamp.format) == "2026-02-15T11:00:00.000Z")
        #expect(coinbase.date("2026-02-15 11:00:00 CET", calendar: Self.calendar()) == nil)
        #expect(DatePattern.iso8601.date("2026-01-10T14:03:22Z", calendar: Self.calendar()).map(Timestamp.format) == "2026-01-10T14:03:22.000Z")
        for bad in ["dd.MMM.yyyy", "EEE dd.MM.yyyy", "MM/yyyy", "dd.MM.yyy", "dd.MM.yyyy 'h"] {
            #expect(throws: DomainError.self, "\(bad)") { try DatePattern(parsing: bad, key: "date_format") }
        }
    }

    /// A day's midnight from its month's first (where the zone keeps one offset all month) is
    /// the calendar's, in zones with daylight saving at midnight, half-hour offsets, a skipped
    /// day and a changed standard offset, over sixty years.
    @Test func monthMemoMidnightsAreTheCalendars() throws {
        let zones = ["UTC", "Europe/Berlin", "America/Sao_Paulo", "America/Havana", "Pacific/Apia", "Australia/Lord_Howe",
                     "Asia/Kathmandu", "America/Caracas", "Africa/Casablanca"]
        for name in zones {
            let zone = try #require(TimeZone(identifier: name), "\(name)")
            let calendar = Self.calendar(zone)
            var dates = RowDates(formats: [.iso8601], timeZone: zone, now: .distantFuture)
            var mismatches: [String] = []
            for year in 1970...2030 {
                for month in 1...12 {
                    for day in 1...CalendarDate.daysIn(month: month, year: year) {
                        let date = try CalendarDate(year: year, month: month, day: day)
                        let expected = calendar.date(from: DateComponents(year: year, month: month, day: day))!
                        if dates.midnight(date) != expected, mismatches.count < 5 { mismatches.append("\(date)") }
                    }
                }
            }
            #expect(mismatches.isEmpty, "\(name): \(mismatches)")
        }
    }

    /// Dates with a time of day, from the month memo where the zone keeps one offset all month,
    /// are the calendar's, in the same zones, at random times over sixty years (clock changes;
    /// 31.02. refused; a finer fraction rounded to the nearest millisecond, half up).
    @Test func monthMemoTimesAreTheCalendars() throws {
        let pattern = try DatePattern(parsing: "yyyy-MM-dd HH:mm:ss.S", key: "date_format")
        for name in ["UTC", "Europe/Berlin", "America/Sao_Paulo", "America/Havana", "Pacific/Apia", "Australia/Lord_Howe", "Asia/Kathmandu"] {
            let zone = try #require(TimeZone(identifier: name), "\(name)")
            let calendar = Self.calendar(zone)
            var dates = RowDates(formats: [pattern], timeZone: zone, now: .distantFuture)
            var mismatches: [String] = []
            var generator = SeededGenerator(state: 7)
            for year in stride(from: 1970, through: 2030, by: 3) {
                for month in 1...12 {
                    for _ in 0..<40 {
                        let day = Int(generator.next() % 31) + 1, hour = Int(generator.next() % 24), minute = Int(generator.next() % 60)
                        // Whole milliseconds: the calendar's floating instant rounds a half one either way.
                        let fraction = String(format: "%03d", Int(generator.next() % 1_000))
                        let text = String(format: "%04d-%02d-%02d %02d:%02d:07.", year, month, day, hour, minute) + fraction
                        let expected = pattern.date(text, calendar: calendar).map(Timestamp.truncatedToMilliseconds)
                        let found = try dates.date(text) { DomainError.invalidField("date", "future") }
                        if found != expected, mismatches.count < 5 { mismatches.append("\(text): \(String(describing: found)) != \(String(describing: expected))") }
                    }
                }
            }
            #expect(mismatches.isEmpty, "\(name): \(mismatches)")
        }
        var utc = RowDates(formats: [pattern], timeZone: Self.utc, now: .distantFuture)
        #expect(try utc.date("2026-01-05 10:02:11.3385") { DomainError.invalidField("date", "future") }.map(Timestamp.format) == "2026-01-05T10:02:11.339Z")
        #expect(try utc.date("2026-01-05 10:02:11.9996") { DomainError.invalidField("date", "future") }.map(Timestamp.format) == "2026-01-05T10:02:12.000Z")
        #expect(try utc.date("2026-02-31 10:02:11.0") { DomainError.invalidField("date", "future") } == nil)
    }

    @Test func numbersInTheFilesNotation() {
        var german = NumberFormat()
        german.decimalMark = UInt8(ascii: ",")
        german.thousandsSeparator = UInt8(ascii: ".")
        #expect(german.normalized("1.234,56") == "1234.56")
        #expect(german.normalized("-4,35") == "-4.35")
        #expect(german.normalized("12,50-") == "-12.50")
        #expect(german.normalized(" 1\u{00A0}000,00 ") == "1000.00")
        #expect(german.normalized("12,5x") == nil)
        #expect(german.normalized("") == nil)
        #expect(german.normalized("--1") == nil)
        #expect(NumberFormat().normalized("+0.0125000000") == "0.0125000000")
    }

    @Test func windows1252AndLatin1Decode() {
        #expect(ImportRules.Encoding.windows1252.text([0x80, 0x20, 0x4D, 0xFC, 0x6C, 0x6C, 0x65, 0x72, 0x96]) == "€ Müller–")
        #expect(ImportRules.Encoding.latin1.text([0x47, 0x72, 0x6F, 0xDF]) == "Groß")
        #expect(ImportRules.Encoding.utf8.text(Array("Groß".utf8)) == "Groß")
    }

    @Test func templatesReadColumnsAndLiterals() throws {
        let template = try FieldTemplate(parsing: "{refid}-{ 7 }", key: "external_id")
        #expect(template.parts == [.column(.name("refid")), .literal("-"), .column(.position(7))])
        #expect(try FieldTemplate(parsing: "txid", key: "external_id").parts == [.column(.name("txid"))])
        #expect(throws: DomainError.self) { try FieldTemplate(parsing: "{refid", key: "external_id") }
        #expect(throws: DomainError.self) { try FieldTemplate(parsing: "x{}", key: "external_id") }
    }

    @Test func rulesFilesAreCheckedKeyByKey() throws {
        func message(_ text: String) -> String {
            do {
                _ = try ImportRules(toml: text, name: "bank.toml")
                return "accepted"
            } catch let error as DomainError {
                return error.message
            } catch {
                return "\(error)"
            }
        }
        #expect(message("separator = \";\"\nskip = 4\n[columns]\ndate = 1\namount = 2\n") == "accepted")
        #expect(message("[columns]\ndate = \"d\"\n\nsep = 1\n").contains("columns.sep is not a key savingsd knows here"))
        #expect(message("separator = \";;\"\n").contains("separator must be one ASCII character"))
        #expect(message("encoding = \"utf-16\"\n").contains("'utf-16' is not one of utf-8, utf-8-bom, iso-8859-1, windows-1252"))
        #expect(message("decimal_mark = \",\"\nthousands_separator = \",\"\n").contains("must differ from decimal_mark"))
        #expect(message("timezone = \"Mars/Olympus\"\n").contains("timezone 'Mars/Olympus' is not a time zone"))
        #expect(message("[columns]\namount = \"a\"\namount_in = \"b\"\n").contains("give either amount or amount_in and/or amount_out"))
        #expect(message("[columns]\namount_out = \"b\"\n") == "accepted", "amount_out stands alone")
        #expect(message("[columns]\ndate = [\"Date(UTC+0)\", \"Date(UTC)\"]\nnote = \"{a|b} {c?}\"\n") == "accepted")
        #expect(message("[columns]\ndate = []\n").contains("columns.date must be a column's header name, a list of names"))
        #expect(message("number_affixes = [\"€\", \"1\"]\n").contains("number_affixes must be a list"))
        #expect(message("[[when]]\ncolumn = \"t\"\nmatches = \"x\"\n[when.second_leg]\ncolumn = \"n\"\nmatches = \"(\\\\d+)\"\n")
            .contains("when[1].second_leg.matches needs a group (?<amount>…)"))
        #expect(message("[[when]]\ncolumn = \"t\"\nmatches = \"x\"\n[when.second_leg]\ncolumn = \"n\"\nmatches = \"(?<amount>\\\\d+)\"\n")
            .contains("needs a group (?<asset>…)"))
        #expect(message("[[when]]\ncolumn = \"t\"\nmatches = \"x\"\n[when.second_leg]\ncolumn = \"n\"\nmatches = \"(?<amount>\\\\d+) (?<asset>\\\\w+)\"\nsign = 1\n")
            .contains("when[1].second_leg.sign is not a key savingsd knows here"))
        #expect(message("header = false\n[columns]\ndate = \"d\"\n").contains("header is false, so columns must be positions"))
        #expect(message("[[when]]\ncolumn = \"type\"\nmatches = \"trade\"\n").contains("a [[when]] block does nothing"))
        #expect(message("[[when]]\ncolumn = \"type\"\nmatches = \"(\"\nskip = true\n").contains("when[1].matches: '(' is not a regular expression"))
        #expect(message("a = 1\nb = = 2\n").hasPrefix("rules: bank.toml, line 2:"))
    }

    @Test func runningBalancesAreFollowedInEitherOrder() {
        let day = Date(timeIntervalSince1970: 1_767_225_600)
        func check(_ rows: [(Int, Decimal, Decimal)], newestFirst: Bool) -> RunningBalanceCheck {
            var check = RunningBalanceCheck()
            for (index, row) in rows.enumerated() {
                let offset = Double(newestFirst ? rows.count - index : index) * 86_400
                check.add(line: row.0, date: day.addingTimeInterval(offset), amount: row.1, balance: row.2, skipped: false)
            }
            return check
        }
        let oldestFirst = check([(2, -84, 1916), (3, 2350, 4266), (4, Decimal(string: "-12.35")!, Decimal(string: "4253.65")!)], newestFirst: false)
        #expect(oldestFirst.verdict(opening: 2000) == nil)
        #expect(oldestFirst.verdict(opening: 0) == .init(line: 2, expected: -84, found: 1916))
        let newestFirst = check([(2, Decimal(string: "-12.35")!, Decimal(string: "4253.65")!), (3, 2350, 4266), (4, -84, 1916)], newestFirst: true)
        #expect(newestFirst.verdict(opening: 2000) == nil)
        #expect(newestFirst.oldestDate == day.addingTimeInterval(86_400))
        let broken = check([(2, -84, 1916), (3, 2350, 4267), (4, 1, 4268)], newestFirst: false)
        #expect(broken.verdict(opening: 2000) == .init(line: 3, expected: 4266, found: 4267))
    }
}

/// The README's rules file for another bank is one savingsd reads.
@Suite struct ReadmeRulesTests {
    @Test func theReadmesExampleRulesRead() throws {
        let readme = try String(contentsOf: ImportPresetTests.root.appendingPathComponent("README.md"), encoding: .utf8)
        let section = try #require(readme.components(separatedBy: "**Another bank.**").dropFirst().first)
        let block = try #require(section.components(separatedBy: "```toml\n").dropFirst().first?.components(separatedBy: "```").first)
        let rules = try ImportRules(toml: block, name: "README")
        #expect(rules.separator == UInt8(ascii: ";"))
        #expect(rules.amount == .split(in: .name("Haben"), out: .name("Soll")))
        #expect(rules.when.count == 1)
    }
}
