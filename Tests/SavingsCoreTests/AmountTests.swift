import Foundation
import Testing
@testable import SavingsCore

@Suite struct AmountTests {
    @Test(arguments: [
        ("0.1", "0.1"), ("5000", "5000"), ("-12.50", "-12.5"), ("1e3", "1000"), ("1.5E-2", "0.015"),
        ("0.000000000000000001", "0.000000000000000001"), ("+7", "7"), ("007.10", "7.1"),
    ])
    func parsesExactly(input: String, plain: String) throws {
        #expect(Amount.plainText(try Amount.parse(input)) == plain)
    }

    /// Text written from a 64-bit significand is Foundation's own `description`, for values
    /// of every size and scale, sums and products (whose significands Decimal keeps compact),
    /// and values past 64 bits (which go to `description`).
    @Test func plainTextIsDescription() {
        var random = SeededGenerator(state: 20261125)
        var fast = 0
        for round in 0..<60_000 {
            let bits = UInt64.random(in: 0...63, using: &random)
            var value = Decimal(sign: Bool.random(using: &random) ? .minus : .plus, exponent: Int.random(in: -30...12, using: &random),
                                significand: Decimal(UInt64.random(in: 0...UInt64.max, using: &random) >> bits))
            switch round % 5 {
            case 1: value += Decimal(sign: .plus, exponent: Int.random(in: -20...5, using: &random), significand: Decimal(UInt64.random(in: 0...1_000_000_000_000, using: &random)))
            case 2: value *= Decimal(string: "1.5")!
            case 3: value = Decimal(string: "\(Int.random(in: -10_000...10_000, using: &random)).\(Int.random(in: 1...99_999_999, using: &random))")!
            case 4: value *= Decimal(string: "18446744073709551616")!
            default: break
            }
            if Amount.plainTextFromSignificand(value) != nil { fast += 1 }
            #expect(Amount.plainText(value) == value.description, "\(value.exponent) \(value.significand)")
        }
        #expect(fast > 30_000, "the significand's way is taken for most values")
        for text in ["0", "1", "-1", "1000", "0.001", "-0.000000000000000001", "18446744073709551615", "18446744073709551616", "-18446744073709551615.5"] {
            #expect(Amount.plainText(Decimal(string: text)!) == Decimal(string: text)!.description, "\(text)")
        }
    }

    @Test(arguments: ["", "abc", "NaN", "1,5", " 1", "1 ", "1.", ".5e", "--1", "1e400", "0.0000000000000000001", "1e", "Infinity",
                      "123456789012345678901234567890123456789"])
    func refusesSloppyInput(input: String) {
        #expect(throws: DomainError.self) { try Amount.parse(input) }
        do {
            _ = try Amount.parse(input)
        } catch let error as DomainError {
            #expect(error.kind == .invalidAmount)
        } catch {
            Issue.record("unexpected error \(error)")
        }
    }

    @Test func tenthsAddUpExactly() throws {
        let sum = try Amount.parse("0.1") + Amount.parse("0.2")
        #expect(Amount.format(sum, scale: 2) == "0.30")
        #expect(sum == (try Amount.parse("0.3")))
    }

    @Test(arguments: [
        ("2.345", 2, "2.34"), ("2.355", 2, "2.36"), ("-0.001", 2, "0.00"), ("5000", 2, "5000.00"),
        ("1234.5", 0, "1234"), ("1235.5", 0, "1236"), ("0.00012345", 8, "0.00012345"), ("1.2", 3, "1.200"),
    ])
    func formatsHalfEvenToScale(input: String, scale: Int, expected: String) throws {
        #expect(Amount.format(try Amount.parse(input), scale: scale) == expected)
    }

    /// Printing without rounding what needs none gives what rounding first gives, for values of
    /// every size, sign and scale, and so does an asset's own format.
    @Test func formatsLikeRoundingFirst() throws {
        func roundingFirst(_ value: Decimal, scale: Int) -> String {
            var input = value, rounded = Decimal()
            NSDecimalRound(&rounded, &input, scale, .bankers)
            return Amount.padded(Amount.plainText(rounded), scale: scale)
        }
        let asset = Asset(id: UUID(), name: "Wallet", currency: try CurrencyCode("BTC"), kind: .crypto, address: nil, notes: nil,
                          createdAt: Date(timeIntervalSince1970: 0), updatedAt: Date(timeIntervalSince1970: 0))
        var random = SeededGenerator(state: 2_026)
        for _ in 0..<20_000 {
            let significand = Decimal(UInt64.random(in: 0...UInt64.max, using: &random) >> UInt64.random(in: 0...63, using: &random))
            let value = Decimal(sign: Bool.random(using: &random) ? .minus : .plus, exponent: Int.random(in: -24...6, using: &random),
                                significand: significand)
            let scale = Int.random(in: 0...18, using: &random)
            #expect(Amount.format(value, scale: scale) == roundingFirst(value, scale: scale), "\(value) at \(scale)")
            let assetScale = max(8, min(Amount.fractionDigits(of: value), Amount.maxFractionDigits))
            #expect(asset.format(value) == roundingFirst(value, scale: assetScale), "\(value)")
        }
    }

    @Test func countsFractionDigits() throws {
        #expect(Amount.fractionDigits(of: try Amount.parse("10.50")) == 1)
        #expect(Amount.fractionDigits(of: try Amount.parse("10")) == 0)
        #expect(Amount.fractionDigits(of: try Amount.parse("0.001")) == 3)
    }
}

@Suite struct CurrencyAndDateTests {
    @Test func currencyCodesAreValidatedAndUppercased() throws {
        #expect(try CurrencyCode("eur").code == "EUR")
        #expect(try CurrencyCode("USDC").code == "USDC")
        for bad in ["E", "EURO-1", "€UR", "ABCDEFGHIJK", ""] {
            #expect(throws: DomainError.self) { try CurrencyCode(bad) }
        }
    }

    @Test func minorUnitsFollowISO4217AndCryptoUsesEight() throws {
        #expect(try CurrencyCode("EUR").minorUnits == 2)
        #expect(try CurrencyCode("JPY").minorUnits == 0)
        #expect(try CurrencyCode("KWD").minorUnits == 3)
        #expect(try CurrencyCode("BTC").minorUnits == 8)
        #expect(try CurrencyCode("BTC").isFiat == false)
    }

    @Test func datesAreStrict() throws {
        #expect(try CalendarDate(parsing: "2028-02-29", field: "d").description == "2028-02-29")
        for bad in ["2027-02-29", "2027-13-01", "2027-1-01", "27-01-01", "2027-01-01T00:00", "2027/01/01", "1900-02-29"] {
            #expect(throws: DomainError.self) { try CalendarDate(parsing: bad, field: "d") }
        }
        #expect(try CalendarDate(parsing: "2026-12-31", field: "d") < CalendarDate(parsing: "2027-01-01", field: "d"))
        for bad in ["20270-1-01", "2027-01--1", "+027-01-01", "2027-01-1a", "0000-01-01", "2027-01-01\n", "٢٠٢٧-01-01", "2027-00-10"] {
            #expect(throws: DomainError.self) { try CalendarDate(parsing: bad, field: "d") }
        }
    }

    /// The byte reader accepts exactly what splitting at '-' and reading each part accepts.
    @Test func datesReadAsSplittingWould() {
        func reference(_ text: String) -> CalendarDate? {
            let parts = text.split(separator: "-", omittingEmptySubsequences: false)
            guard parts.count == 3, parts[0].count == 4, parts[1].count == 2, parts[2].count == 2,
                  parts.allSatisfy({ $0.utf8.allSatisfy { $0 >= 48 && $0 <= 57 } }),
                  let y = Int(parts[0]), let m = Int(parts[1]), let d = Int(parts[2]) else { return nil }
            return try? CalendarDate(year: y, month: m, day: d)
        }
        var random = SeededGenerator(state: 1_010)
        let alphabet = Array("0123456789-0123-01-31x")
        for _ in 0..<20_000 {
            var text = random.next() % 2 == 0 ? "2027-02-28" : ""
            if text.isEmpty {
                for _ in 0..<(8 + Int(random.next() % 4)) { text.append(alphabet[Int(random.next() % UInt64(alphabet.count))]) }
            } else {
                var bytes = Array(text)
                bytes[Int(random.next() % 10)] = alphabet[Int(random.next() % UInt64(alphabet.count))]
                text = String(bytes)
            }
            #expect((try? CalendarDate(parsing: text, field: "d")) == reference(text), "\(text)")
        }
    }

    @Test func todayDependsOnTheTimeZone() throws {
        let instant = try Timestamp.parse("2026-11-30T23:30:00Z", field: "t")
        #expect(CalendarDate(instant, in: TimeZone(identifier: "UTC")!).description == "2026-11-30")
        #expect(CalendarDate(instant, in: TimeZone(identifier: "Europe/Berlin")!).description == "2026-12-01")
    }

    @Test func timestampsRoundTripWithMilliseconds() throws {
        let date = try Timestamp.parse("2026-11-22T10:11:12.345Z", field: "t")
        #expect(Timestamp.format(date) == "2026-11-22T10:11:12.345Z")
        #expect(Timestamp.format(try Timestamp.parse("2026-11-22T10:11:12Z", field: "t")) == "2026-11-22T10:11:12.000Z")
        #expect(throws: DomainError.self) { try Timestamp.parse("yesterday", field: "t") }
    }
}

@Suite struct TimestampTests {
    @Test func millisecondsSurviveRoundTripsExactly() throws {
        // 1795000000.122 is not representable in binary; formatting once printed .121.
        for seconds in [1_795_000_000.122, 1_795_000_000.123, 0.001, 1_700_000_000.999] {
            let date = Timestamp.truncatedToMilliseconds(Date(timeIntervalSince1970: seconds))
            let text = Timestamp.format(date)
            #expect(text.hasSuffix(String(format: ".%03dZ", Int((seconds * 1000).rounded()) % 1000)))
            #expect(Timestamp.format(try Timestamp.parse(text, field: "t")) == text)
            #expect(try Timestamp.parse(text, field: "t") == date)
        }
        #expect(Timestamp.format(Date(timeIntervalSince1970: -0.5)) == "1969-12-31T23:59:59.500Z")
    }

    /// The bytes an import hashes are the text `format` gives, in the fixed form and in the
    /// years Foundation formats (before 1583, after 9999).
    @Test func formattedBytesAreTheText() {
        var random = SeededGenerator(state: 7)
        var instants: [Int64] = [0, -1, 1, -62_135_596_800_000, -12_219_292_800_001, 253_402_300_799_999, 253_402_300_800_000]
        for _ in 0..<1_000 { instants.append(Int64(bitPattern: random.next()) % 300_000_000_000_000) }
        for millis in instants {
            let bytes = Timestamp.withFormatted(milliseconds: millis) { Array($0) }
            #expect(String(decoding: bytes, as: UTF8.self) == Timestamp.format(milliseconds: millis), "\(millis)")
        }
    }

    /// Values up to 19 digits are built from an integer; they must equal the text route.
    @Test func theIntegerRouteGivesTheSameValuesAsText() throws {
        let posix = Locale(identifier: "en_US_POSIX")
        var random = SeededGenerator(state: 42)
        var cases = ["0", "-0", "0.00", "-0.000", "1", "-1", "0.1", "123.456", "9999999999999999999", "-9999999999999999999",
                     "0.000000000000000001", "1844674407370955161.5", "18446744073709551615", "12345678901234567890.12",
                     "00012.3400", "+7"]
        for _ in 0..<2_000 {
            let digits = String(random.next() % 10_000_000_000_000, radix: 10)
            let scale = Int(random.next() % 12)
            var text = digits
            if scale > 0 {
                if text.count <= scale { text = String(repeating: "0", count: scale - text.count + 1) + text }
                text.insert(".", at: text.index(text.endIndex, offsetBy: -scale))
            }
            cases.append(random.next() % 2 == 0 ? "-" + text : text)
        }
        for text in cases {
            let parsed = try Amount.parse(text)
            let expanded = text.hasPrefix("+") ? String(text.dropFirst()) : text
            let expected = Decimal(string: expanded, locale: posix)!
            #expect(parsed == expected, "\(text)")
            #expect(Amount.plainText(parsed) == Amount.plainText(expected), "\(text)")
        }
        #expect(try Amount.parse("1e3") == 1000)
        #expect(try Amount.plainText(Amount.parse("-1.5E-4")) == "-0.00015")
        #expect(try Amount.plainText(Amount.parse("-0.00")) == "0")
    }
}

/// The allocation-free path for plain amounts gives what the general parser gives, digit for
/// digit, and leaves every other shape to it.
@Suite struct AmountFastPathTests {
    @Test func sameValueAndTextAsTheGeneralParser() throws {
        var random = SeededGenerator(state: 7)
        let alphabet = Array("0123456789.-+e")
        for _ in 0..<20_000 {
            let length = Int(random.next() % 24)
            let text = String((0..<length).map { _ in random.next() % 4 == 0 ? alphabet[Int(random.next() % 14)] : alphabet[Int(random.next() % 10)] })
            let general = try? Amount.parseGeneral(text, field: "amount")
            if let fast = Amount.plainFastPath(text) {
                let expected = try #require(general, "the fast path accepted \(text), the general parser refuses it")
                #expect(fast == expected && Amount.plainText(fast) == Amount.plainText(expected), "\(text)")
            }
            #expect(Amount.plainText((try? Amount.parse(text)) ?? -1) == Amount.plainText(general ?? -1), "\(text)")
            if let canonical = Amount.plainText(parsing: text) {
                let expected = try #require(general, "plainText(parsing:) accepted \(text), the general parser refuses it")
                #expect(canonical == Amount.plainText(expected), "\(text)")
            }
        }
        #expect(try Amount.parse(".0") == 0 && Amount.parse("-.00") == 0)
        for text in ["-0", "0.50", "12", "-12.340", ".5", "1234567890123456789", "0.000000000000000001"] {
            #expect(Amount.plainFastPath(text) != nil, "\(text)")
        }
        for text in ["5.", "1e3", "+1", "12345678901234567890", "0.0000000000000000001", "1..2", "--1"] {
            #expect(Amount.plainFastPath(text) == nil, "\(text)")
        }
        #expect(Amount.plainText(parsing: "123456789012345678901234567890.5") == "123456789012345678901234567890.5")
        #expect(Amount.plainText(parsing: "-0.000") == "0" && Amount.plainText(parsing: "0.10") == "0.1")
    }

    /// decimal_add's digit path gives the `Decimal` sum's text, minus signs stacked or not, and
    /// leaves sums past 128 bits to `Decimal`.
    @Test func plainSumIsTheDecimalSum() throws {
        var random = SeededGenerator(state: 11)
        func amount() -> String {
            let digits = String((0..<(1 + Int(random.next() % 30))).map { _ in Character(String(random.next() % 10)) })
            let scale = Int(random.next() % 19)
            var text = digits
            if scale > 0 {
                if text.count <= scale { text = String(repeating: "0", count: scale - text.count + 1) + text }
                text.insert(".", at: text.index(text.endIndex, offsetBy: -scale))
            }
            return String(repeating: "-", count: Int(random.next() % 3)) + text
        }
        func signed(_ text: String) throws -> Decimal {
            let minuses = text.prefix { $0 == "-" }.count
            let value = try Amount.parse(String(text.dropFirst(minuses)))
            return minuses % 2 == 1 ? -value : value
        }
        var summed = 0
        for _ in 0..<20_000 {
            let a = amount(), b = amount()
            guard let fast = Amount.plainSum(a, b) else { continue }
            summed += 1
            #expect(fast == Amount.plainText(try signed(a) + signed(b)), "\(a) + \(b)")
        }
        #expect(summed > 15_000)
        #expect(Amount.plainSum("--5", "-5.00") == "0")
        #expect(Amount.plainSum("99999999999999999999999999999999999999", "99999999999999999999999999999999999999") == nil)
        #expect(Amount.plainSum("1e3", "1") == nil)
    }
}
