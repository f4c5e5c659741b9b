import Foundation

/// The example `data.demo` puts into an empty database: four goals in EUR funded by a bank
/// account, a US-dollar brokerage cash account and two crypto wallets with six months of deposits,
/// five closed months with their plans and contributions, and the current month executing.
/// Everything is dated relative to `now`, so the example always looks current.
public struct DemoData: Sendable {
    public struct Rate: Sendable {
        public var base: CurrencyCode
        public var quote: CurrencyCode
        public var rate: Decimal
    }

    /// After the document: what happens in the executing month (a deposit, then part of it set
    /// aside for goals), so the month shows progress.
    public struct Deposit: Sendable {
        public var asset: String
        public var amount: Decimal
        public var note: String
    }

    public struct Reservation: Sendable {
        public var asset: String
        public var goal: String
        /// The allocation's new total, in the asset's units.
        public var amount: Decimal
    }

    public let document: LegacyDocument
    public let rates: [Rate]
    public let deposits: [Deposit]
    public let reservations: [Reservation]
    /// Months closed in the example.
    public static let closedMonths = 5

    public init(now: Date, timeZone: TimeZone) {
        var calendar = Calendar(identifier: .gregorian)
        calendar.timeZone = timeZone
        let current = MonthLabel(now, in: timeZone)
        func day(_ month: MonthLabel, _ day: Int, hour: Int = 9) -> Date {
            calendar.date(from: DateComponents(year: month.year, month: month.month, day: day, hour: hour))!
        }
        func date(_ month: MonthLabel, _ day: Int) -> CalendarDate { try! CalendarDate(year: month.year, month: month.month, day: day) }
        func amount(_ text: String) -> Decimal { try! Amount.parse(text) }
        func code(_ text: String) -> CurrencyCode { try! CurrencyCode(text) }
        let first = current.adding(-Self.closedMonths)
        let created = day(first, 1, hour: 8)

        var document = LegacyDocument()
        document.exportedAt = now
        // (id, name, currency, target, months to the deadline, monthly plan, what was put aside each closed month)
        let goals: [(String, String, String, String, Int, String, [String])] = [
            ("emergency", "Emergency fund", "EUR", "10000", 11, "450.00", ["450.00", "450.00", "300.00", "450.00", "500.00"]),
            ("japan", "Japan trip", "EUR", "4500", 6, "380.00", ["380.00", "380.00", "380.00", "200.00", "380.00"]),
            ("laptop", "New laptop", "EUR", "2200", 3, "230.00", ["230.00", "230.00", "230.00", "230.00", "0.00"]),
            ("house", "House deposit", "EUR", "60000", 48, "900.00", ["900.00", "600.00", "900.00", "900.00", "900.00"]),
        ]
        for (id, name, currency, target, months, _, _) in goals {
            let deadlineMonth = current.adding(months)
            let lastDay = calendar.range(of: .day, in: .month, for: day(deadlineMonth, 1))!.count
            document.goals.append(.init(id: id, name: name, currency: code(currency), targetAmount: amount(target),
                                        deadline: date(deadlineMonth, lastDay), startDate: date(first, 1), createdAt: created))
        }

        // Opening balances on the first day, then a deposit on the 3rd of every closed month.
        let assets: [(String, String, String, String, String)] = [
            ("bank", "Savings account", "EUR", "2400.00", "1730.00"),
            ("broker", "Brokerage cash", "USD", "600.00", "250.00"),
            ("btc", "Bitcoin cold wallet", "BTC", "0.04200000", "0.00350000"),
            ("eth", "Ethereum wallet", "ETH", "0.80000000", "0.05000000"),
        ]
        for (id, name, currency, opening, monthly) in assets {
            var transactions = [LegacyDocument.Transaction(id: "\(id)-open", amount: amount(opening), date: created, source: "manual")]
            for back in stride(from: Self.closedMonths, through: 1, by: -1) {
                transactions.append(.init(id: "\(id)-\(back)", amount: amount(monthly), date: day(current.adding(-back), 3), source: "manual"))
            }
            document.assets.append(.init(id: id, name: name, currency: code(currency), createdAt: created, balance: nil,
                                         transactions: transactions))
        }
        document.allocations = [
            .init(assetID: "bank", goalID: "emergency", percentage: amount("0.45")),
            .init(assetID: "bank", goalID: "japan", percentage: amount("0.2")),
            .init(assetID: "broker", goalID: "laptop", percentage: amount("1")),
            .init(assetID: "btc", goalID: "house", percentage: amount("0.8")),
            .init(assetID: "eth", goalID: "house", percentage: amount("0.5")),
            .init(assetID: "eth", goalID: "japan", percentage: amount("0.25")),
        ]

        // Plans and contributions for every closed month, a plan for this one.
        let fundedBy = ["emergency": "bank", "japan": "bank", "laptop": "broker", "house": "btc"]
        for back in stride(from: Self.closedMonths, through: 0, by: -1) {
            let month = current.adding(-back)
            let recordID = "month-\(month)"
            for (id, _, currency, _, _, planned, paid) in goals {
                let planID = "\(id)-\(month)"
                document.plans.append(.init(id: planID, goalID: id, month: month, requiredMonthly: amount(planned), customAmount: nil,
                                            isProtected: id == "emergency", isSkipped: false, state: back == 0 ? "draft" : "completed",
                                            createdDate: day(month, 1, hour: 7), lastModified: day(month, 1, hour: 7),
                                            executionRecordID: back == 0 ? nil : recordID, raw: "{}"))
                guard back > 0 else { continue }
                let value = amount(paid[Self.closedMonths - back])
                guard value > 0 else { continue }
                document.contributions.append(.init(id: "\(planID)-paid", goalID: id, assetID: fundedBy[id], amount: value,
                                                    date: day(month, 3, hour: 12), month: month, currency: code(currency),
                                                    sourceType: "manual", planID: planID, raw: "{}"))
            }
            if back > 0 {
                let lastDay = calendar.range(of: .day, in: .month, for: day(month, 1))!.count
                document.executionRecords.append(.init(id: recordID, month: month, status: "closed", startedAt: day(month, 1),
                                                       completedAt: day(month, lastDay, hour: 20)))
            }
        }
        // The current month started at its beginning (or a moment ago on its first morning).
        let startOfMonth = day(current, 1, hour: 0)
        document.executionRecords.append(.init(id: "month-\(current)", month: current, status: "executing",
                                               startedAt: max(startOfMonth, min(day(current, 1), now.addingTimeInterval(-60))),
                                               completedAt: nil))
        self.document = document

        rates = [
            Rate(base: code("BTC"), quote: code("EUR"), rate: amount("81250.00")),
            Rate(base: code("ETH"), quote: code("EUR"), rate: amount("2875.40")),
            Rate(base: code("USD"), quote: code("EUR"), rate: amount("0.9215")),
        ]
        deposits = [
            Deposit(asset: "Savings account", amount: amount("600.00"), note: "monthly transfer"),
            Deposit(asset: "Brokerage cash", amount: amount("250.00"), note: "monthly transfer"),
        ]
        reservations = [
            Reservation(asset: "Savings account", goal: "Emergency fund", amount: amount("5350.00")),
            Reservation(asset: "Savings account", goal: "Japan trip", amount: amount("2420.00")),
        ]
    }
}
