import Foundation
import SavingsDaemon

/// `binance`: an answer of Binance's signed API as a linked account reads it (the first byte
/// picks the account, the deposit history or the withdrawal history; the rest is the answer).
/// What is taken must hold together: a page of at most `maxPage` entries, deposits never
/// negative, withdrawals never positive, ids kept apart by kind.
enum BinanceTarget {
    static let target = FuzzTarget("binance", run: run)

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        let answer = Array(input.dropFirst())
        if first % 3 == 0 {
            _ = try? BinanceAnswers.balancePage(answer, coin: "BTC")
            return
        }
        let withdrawals = first % 3 == 2
        guard let page = try? BinanceAnswers.historyPage(answer, withdrawals: withdrawals) else { return }
        if page.count > BinanceAnswers.maxPage { finding("binance: \(page.count) entries in a page") }
        for entry in page {
            if withdrawals ? entry.net > 0 : entry.net < 0 { finding("binance: a \(withdrawals ? "withdrawal" : "deposit") moved \(entry.net)") }
            if !entry.id.hasPrefix(withdrawals ? "withdrawal:" : "deposit:") { finding("binance: the id \(entry.id) is not of its kind") }
        }
    }
}
