import Foundation
import Testing
@testable import SavingsCore

@Suite struct StoredTransactionTests {
    func read(_ millis: Int64, _ amount: String) -> StoredTransaction? {
        var amount = amount
        return amount.withUTF8 { StoredTransaction(milliseconds: millis, amount: $0) }
    }

    /// Read from bytes, a stored row gives what the text parsers give, on random instants and
    /// amounts of every scale and sign.
    @Test func bytesReadAsTheTextParsersDo() throws {
        var random = SeededGenerator(state: 11)
        for _ in 0..<20_000 {
            let millis = Int64.random(in: -12_212_553_600_000...253_402_300_799_999, using: &random)
            let decimals = Int.random(in: 0...Amount.maxFractionDigits, using: &random)
            let width = min(18, decimals + Int.random(in: 0...8, using: &random))
            let digits = Int64.random(in: 0..<(0..<width).reduce(Int64(1)) { power, _ in power * 10 }, using: &random)
            var amount = Amount.plainText(Decimal(sign: .plus, exponent: -decimals, significand: Decimal(digits)))
            if Bool.random(using: &random) && digits != 0 { amount = "-" + amount }
            let point = try #require(read(millis, amount), "\(millis) \(amount)")
            let text = try StoredTransaction(milliseconds: millis, amount: amount)
            #expect(point == text, "\(millis) \(amount)")
            #expect(point.date == Timestamp.date(milliseconds: millis))
            #expect(point.amount == (try Amount.parse(amount)))
            #expect(point.units == RunningTotal.units(amount))
        }
    }

    /// Anything not in the stored form is left to the text parser.
    @Test func otherFormsAreLeftToTheTextParser() throws {
        let millis = Timestamp.milliseconds(try Timestamp.parse("2026-11-22T10:00:00.000Z", field: "date"))
        for amount in ["+1", "1e5", "12345678901234567890", "1.", ".5x", "", "0.1234567890123456789"] {
            #expect(read(millis, amount) == nil, "\(amount)")
        }
        let text = try StoredTransaction(milliseconds: millis, amount: "12345678901234567890")
        #expect(text.amount == Decimal(string: "12345678901234567890"))
        #expect(read(millis, "-0.50") == StoredTransaction(milliseconds: millis, amount: Decimal(string: "-0.5")!,
                                                          units: -500_000_000_000_000_000))
    }
}
