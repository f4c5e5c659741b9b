import Foundation
import SavingsCore
import Testing
@testable import SavingsDaemon

@Suite struct ProgressTotalsTests {
    /// Totals are the lines converted into the asked currency; a currency without a rate is
    /// reported missing and left out, never counted at a guessed rate.
    @Test func linesAreConvertedOncePerCurrency() throws {
        let eur = try CurrencyCode("EUR"), usd = try CurrencyCode("USD"), gbp = try CurrencyCode("GBP")
        let at = Date(timeIntervalSince1970: 1_795_000_000)
        let rates = RateTable(rates: [ExchangeRate(base: usd, quote: eur, rate: Decimal(string: "0.9137")!, asOf: at, provider: "manual", fetchedAt: at)],
                              pivot: eur)
        func line(_ currency: CurrencyCode, _ planned: String, _ contributed: String) -> ExecutionProgress.Line {
            ExecutionProgress.Line(goalID: UUID(), goalName: "g", currency: currency,
                                   planned: Decimal(string: planned)!, contributed: Decimal(string: contributed)!)
        }
        let lines = [line(eur, "10.50", "4.25"), line(usd, "3", "1.10"), line(eur, "0.01", "0"), line(usd, "7.77", "2"), line(gbp, "5", "5")]
        let totals = ExecutionProgress.totals(lines, in: eur, rates: rates)
        // 10.51 + 10.77 × 0.9137 = 10.51 + 9.840549; 4.25 + 3.10 × 0.9137 = 4.25 + 2.83247
        #expect(totals.planned == Decimal(string: "20.350549")!)
        #expect(totals.contributed == Decimal(string: "7.08247")!)
        #expect(totals.missing == [RateTable.missingPair(gbp, eur)])
        #expect(ExecutionProgress.totals([], in: eur, rates: rates) == (0, 0, []))
    }
}
