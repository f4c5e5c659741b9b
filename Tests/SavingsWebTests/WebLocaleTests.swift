import Foundation
import Testing
@testable import SavingsWeb

/// Amounts and dates as the browser's locale writes them, and amounts typed its way read back
/// exactly, never guessed.
@Suite struct WebLocaleTests {
    func within<T>(_ header: String?, _ body: () -> T) -> T {
        WebLocale.$current.withValue(WebLocale.preferred(header), operation: body)
    }

    @Test func theHeaderChoosesByPreference() {
        #expect(WebLocale.preferred("de-DE,de;q=0.9,en;q=0.8")?.identifier == "de-DE")
        #expect(WebLocale.preferred("xx;q=1, fr-FR;q=0.7, de;q=0.8")?.identifier == "de", "an unknown language is passed over")
        #expect(WebLocale.preferred("en;q=0, fr")?.identifier == "fr", "q=0 is refused")
        #expect(WebLocale.preferred("*") == nil)
        #expect(WebLocale.preferred("") == nil && WebLocale.preferred(nil) == nil)
        #expect(WebLocale.preferred("<script>") == nil)
        #expect(WebLocale.preferred(String(repeating: "de,", count: 400)) == nil, "a header past 512 bytes is not read")
    }

    @Test func amountsKeepEveryDigit() {
        #expect(within(nil) { WebLocale.amount("-1234567.891") } == "-1234567.891", "no header: as the daemon writes")
        #expect(within("de-DE") { WebLocale.amount("-1234567.891") } == "-1.234.567,891")
        #expect(within("en-US") { WebLocale.amount("1234.50") } == "1,234.50")
        #expect(within("en-US") { WebLocale.amount("999") } == "999")
        #expect(within("de-CH") { WebLocale.amount("1234.5") } == "1’234.5")
        #expect(within("de-DE") { WebLocale.amount("0.00000001") } == "0,00000001")
        #expect(within("de-DE") { WebLocale.amount("n/a") } == "n/a", "text that is no plain decimal stays")
    }

    @Test func typedAmountsAreReadOnlyWhereUnambiguous() {
        #expect(within("de-DE") { WebLocale.input("12,50") } == "12.50")
        #expect(within("de-DE") { WebLocale.input("1.234,56") } == "1234.56")
        #expect(within("de-DE") { WebLocale.input("-1.234.567,8") } == "-1234567.8")
        #expect(within("de-DE") { WebLocale.input("1.5") } == "1.5", "a lone point is a decimal point, never a thousand")
        #expect(within("de-DE") { WebLocale.input("1.23,4") } == "1.23,4", "broken groups are left for the daemon to refuse")
        #expect(within("fr-FR") { WebLocale.input("1 234,5") } == "1234.5")
        #expect(within("en-US") { WebLocale.input("1,234.56") } == "1234.56")
        #expect(within("en-US") { WebLocale.input("12,5") } == "12,5", "in English a comma is no decimal sign: refused, not 125")
        #expect(within(nil) { WebLocale.input(" 12.5 ") } == "12.5")
        // Found in review: a lone grouping sign without a decimal sign was taken as grouping, so a
        // pasted 0.125 BTC became 125 and a rate of 1.085 became 1085.
        #expect(within("de-DE") { WebLocale.input("0.125") } == "0.125")
        #expect(within("de-DE") { WebLocale.input("1.085") } == "1.085")
        #expect(within("de-DE") { WebLocale.input("0.125,5") } == "0.125,5", "a first group with a leading zero is no group")
        #expect(within("de-DE") { WebLocale.input("1.234.567") } == "1234567", "two grouping signs cannot be a decimal")
        #expect(within("en-US") { WebLocale.input("0,125") } == "0,125")
        #expect(within("en-US") { WebLocale.input("1,234") } == "1,234", "one group without a point: refused by the daemon, not guessed")
        // What a form's field is given, read back, is what the daemon wrote (whatever its digits).
        for locale in ["de-DE", "en-US", "fr-FR", "de-CH"] {
            for amount in ["1.234", "-0.5", "1234567.12345678", "7", "1234", "0.125", "1085"] {
                #expect(within(locale) { WebLocale.input(WebLocale.field(amount)) } == amount, "\(locale) \(amount)")
            }
        }
        #expect(within("de-DE") { WebLocale.field("1234.5") } == "1234,5")
    }

    @Test func datesAndMonthsAreTheLocales() {
        let date = Date(timeIntervalSince1970: 1_795_687_200) // 2026-11-26T10:00:00Z
        let utc = TimeZone(identifier: "UTC")!
        #expect(within("de-DE") { HumanTime.describe("2026-11-26T10:00:00.000Z", now: date.addingTimeInterval(3 * 86_400), timeZone: utc) }
            == "26. Nov. 2026, 10:00")
        #expect(within(nil) { HumanTime.describe("2026-11-26T10:00:00.000Z", now: date.addingTimeInterval(3 * 86_400), timeZone: utc) }
            == "26 Nov 2026, 10:00")
        #expect(within("fr-FR") { HumanTime.month("2026-11") } == "nov. 2026")
        #expect(within(nil) { HumanTime.month("2026-11") } == "Nov 2026")
    }
}
