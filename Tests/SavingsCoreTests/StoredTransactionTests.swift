import Foundation
import Testing
@testable import SavingsCore

@Suite struct StoredTransactionTests {
    func read(_ date: String, _ amount: String) -> StoredTransaction? {
        var date = date, amount = amount
        return date.withUTF8 { dateBytes in amount.withUTF8 { StoredTransaction(date: dateBytes, amount: $0) } }
    }

    /// Read from bytes, a stored row gives what the text parsers give, on random instants and
    /// amounts of every scale and sign.
    @Test func bytesReadAsTheTextParsersDo() throws {
        var random = SeededGenerator(state: 11)
        for _ in 0..<20_000 {
            let millis = Int64.random(in: -12_212_553_600_000...253_402_300_799_999, using: &random)
            let date = Timestamp.format(Timestamp.date(milliseconds: millis))
            let decimals = Int.random(in: 0...Amount.maxFractionDigits, using: &random)
            let width = min(18, decimals + Int.random(in: 0...8, using: &random))
            let digits = Int64.random(in: 0..<(0..<width).reduce(Int64(1)) { power, _ in power * 10 }, using: &random)
            var amount = Amount.plainText(Decimal(sign: .plus, exponent: -decimals, significand: Decimal(digits)))
            if Bool.random(using: &random) && digits != 0 { amount = "-" + amount }
            let point = try #require(read(date, amount), "\(date) \(amount)")
            let text = try StoredTransaction(date: date, amount: amount)
            #expect(point == text, "\(date) \(amount)")
            #expect(point.milliseconds == millis)
            #expect(point.date == (try Timestamp.parse(date, field: "date")))
            #expect(point.amount == (try Amount.parse(amount)))
            #expect(point.units == RunningTotal.units(amount))
        }
    }

    /// Anything not in the stored form is left to the text parsers.
    @Test func otherFormsAreLeftToTheTextParsers() throws {
        let date = "2026-11-22T10:00:00.000Z"
        for amount in ["+1", "1e5", "12345678901234567890", "1.", ".5x", "", "0.1234567890123456789"] {
            #expect(read(date, amount) == nil, "\(amount)")
        }
        #expect(read("2026-11-22T10:00:00Z", "1") == nil)
        let text = try StoredTransaction(date: "2026-11-22T10:00:00Z", amount: "12345678901234567890")
        #expect(text.milliseconds == Timestamp.milliseconds(try Timestamp.parse("2026-11-22T10:00:00.000Z", field: "date")))
        #expect(text.amount == Decimal(string: "12345678901234567890"))
        #expect(read(date, "-0.50") == StoredTransaction(milliseconds: text.milliseconds, amount: Decimal(string: "-0.5")!,
                                                         units: -500_000_000_000_000_000))
    }
}
