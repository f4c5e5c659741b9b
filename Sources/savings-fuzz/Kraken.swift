import Foundation
import SavingsDaemon

/// `kraken`: an answer of Kraken's private API as a linked account reads it (the first byte
/// picks `Ledgers` or `Balance`, the rest is the answer). What is taken must hold together: a
/// page of at most `maxPage` entries, ids listed once, newest first.
enum KrakenTarget {
    static let target = FuzzTarget("kraken", run: run)

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let first = input.first else { return }
        let answer = Array(input.dropFirst())
        if first % 2 == 0 {
            _ = try? KrakenAnswers.balancePage(answer)
            return
        }
        guard let page = try? KrakenAnswers.ledgerPage(answer) else { return }
        if page.entries.count > KrakenAnswers.maxPage { fatalError("kraken: \(page.entries.count) entries in a page") }
        if Set(page.entries.map(\.id)).count != page.entries.count { fatalError("kraken: an id listed twice") }
        for (older, newer) in zip(page.entries.dropFirst(), page.entries) where older.date > newer.date {
            fatalError("kraken: the page is not newest first")
        }
    }
}
