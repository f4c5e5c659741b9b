import SavingsCLI
import SavingsRPC
import Testing

@Suite struct MoneyTests {
    @Test func groupsThousandsAndPadsToTheCurrency() {
        #expect(Money.format("1234567.5", "EUR") == "1,234,567.50 EUR")
        #expect(Money.format("-1000", "EUR") == "-1,000.00 EUR")
        #expect(Money.format("999.99", "USD") == "999.99 USD")
        #expect(Money.format("0.015", "BTC") == "0.01500000 BTC")
        #expect(Money.format("1500", "JPY") == "1,500 JPY")
        #expect(Money.format(.null, "EUR") == "-")
        #expect(Money.grouped("123456789.123456789") == "123,456,789.123456789")
        #expect(Money.grouped("not a number") == "not a number")
        #expect(Money.grouped("12.3.4") == "12.3.4")
    }

    @Test func widthsIgnoreColour() {
        #expect(Style.ansi.green("abc").visibleWidth == 3)
        #expect(Style.plain.green("abc") == "abc")
        #expect(Style.detect(descriptor: 1, environment: ["NO_COLOR": "1"]) == .plain)
        #expect(Style.detect(descriptor: -1, environment: [:]) == .plain)
    }
}
