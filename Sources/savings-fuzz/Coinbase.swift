import Foundation
import SavingsDaemon

/// `coinbase`: an answer of the Coinbase App API as a linked account reads it (the first byte
/// picks the account list or an account's transactions; the rest is the answer). What is taken
/// must hold together: a page of at most `maxPage` entries, and a next page that is a path of
/// Coinbase's own.
enum CoinbaseTarget {
    static let target = FuzzTarget("coinbase", run: run)

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        let answer = Array(input.dropFirst())
        let next: String?
        if first % 2 == 0 {
            guard let page = try? CoinbaseAnswers.accountPage(answer) else { return }
            if page.accounts.count > CoinbaseAnswers.maxPage { finding("coinbase: \(page.accounts.count) accounts in a page") }
            next = page.next
        } else {
            guard let page = try? CoinbaseAnswers.transactionPage(answer) else { return }
            if page.rows.count > CoinbaseAnswers.maxPage { finding("coinbase: \(page.rows.count) transactions in a page") }
            next = page.next
        }
        if let next, !next.hasPrefix("/v2/accounts") || next.contains("..") || next.contains("//") {
            finding("coinbase: the next page \(next) is not Coinbase's")
        }
    }
}
