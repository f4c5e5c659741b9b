/// A currency or asset code: 2-10 characters of A-Z and 0-9 (EUR, USD, BTC, USDC).
public struct CurrencyCode: Sendable, Hashable, Comparable, CustomStringConvertible {
    public let code: String

    /// Validates and upper-cases `text`.
    public init(_ text: String, field: String = "currency") throws {
        let upper = text.uppercased()
        let valid = (2...10).contains(upper.utf8.count) && upper.utf8.allSatisfy {
            ($0 >= 65 && $0 <= 90) || ($0 >= 48 && $0 <= 57)
        }
        guard valid else {
            throw DomainError.invalidField(field, "'\(text)' is not a currency code (2-10 letters or digits, e.g. EUR, BTC)")
        }
        self.code = upper
    }

    public var description: String { code }
    public static func < (a: CurrencyCode, b: CurrencyCode) -> Bool { a.code < b.code }

    /// Whether this is an ISO 4217 fiat currency; anything else is treated as a crypto asset.
    public var isFiat: Bool { Self.isoMinorUnits[code] != nil }

    /// Decimal places figures in this currency are rounded to: ISO 4217 minor units for fiat,
    /// 8 for crypto.
    public var minorUnits: Int { Self.isoMinorUnits[code] ?? 8 }

    private static let isoMinorUnits: [String: Int] = {
        var table: [String: Int] = [:]
        let twoDecimals = """
            AED AFN ALL AMD ANG AOA ARS AUD AWG AZN BAM BBD BDT BGN BMD BND BOB BRL BSD BTN BWP BYN \
            BZD CAD CDF CHF CNY COP CRC CUP CVE CZK DKK DOP DZD EGP ERN ETB EUR FJD FKP GBP GEL GHS \
            GIP GMD GTQ GYD HKD HNL HTG HUF IDR ILS INR IRR JMD KES KGS KHR KPW KYD KZT LAK LBP LKR \
            LRD LSL MAD MDL MGA MKD MMK MNT MOP MRU MUR MVR MWK MXN MYR MZN NAD NGN NIO NOK NPR NZD \
            PAB PEN PGK PHP PKR PLN QAR RON RSD RUB SAR SBD SCR SDG SEK SGD SHP SLE SOS SRD SSP STN \
            SVC SYP SZL THB TJS TMT TOP TRY TTD TWD TZS UAH USD UYU UZS VES WST XCD YER ZAR ZMW ZWL
            """
        for code in twoDecimals.split(separator: " ") { table[String(code)] = 2 }
        for code in "BIF CLP DJF GNF ISK JPY KMF KRW PYG RWF UGX VND VUV XAF XOF XPF".split(separator: " ") {
            table[String(code)] = 0
        }
        for code in "BHD IQD JOD KWD LYD OMR TND".split(separator: " ") { table[String(code)] = 3 }
        return table
    }()
}
