import Foundation
import SavingsDaemon

/// `simplefin`: a SimpleFIN server's `GET /accounts` answer (an Account Set) as a linked
/// account reads it. What is taken must hold together: at most `maxAccounts` accounts and
/// `maxTransactions` rows each, notes without control characters and at most 200 characters.
enum SimpleFINTarget {
    static let target = FuzzTarget("simplefin", run: run)

    static func run(_ input: UnsafeRawBufferPointer) {
        guard let accounts = try? SimpleFINAnswers.accountSetPage(Array(input)) else { return }
        if accounts.count > SimpleFINAnswers.maxAccounts { finding("simplefin: \(accounts.count) accounts") }
        for account in accounts {
            if account.rows.count > SimpleFINAnswers.maxTransactions { finding("simplefin: \(account.rows.count) rows in \(account.id)") }
            for row in account.rows {
                guard let note = row.note else { continue }
                if note.count > 200 { finding("simplefin: a note of \(note.count) characters") }
                if note.unicodeScalars.contains(where: { $0.properties.generalCategory == .control }) { finding("simplefin: a control character in a note") }
            }
        }
    }
}
