import Foundation

/// One transaction as a provider reports it for the watched set, reduced to what savingsd
/// stores: the net amount (SPEC 10: outputs to the set − inputs from the set, so a send includes
/// its fee), its block time and how deep it is.
public struct ChainTransaction: Sendable, Equatable {
    public var txid: String
    /// Net effect on the watched set in asset units, exact.
    public var amount: Decimal
    /// The block's time; nil while unconfirmed.
    public var blockTime: Date?
    public var confirmations: Int

    public init(txid: String, amount: Decimal, blockTime: Date?, confirmations: Int) {
        self.txid = txid
        self.amount = amount
        self.blockTime = blockTime
        self.confirmations = confirmations
    }

    /// The net amount of smallest-unit values credited to and debited from the set.
    public static func net(credits: [String], debits: [String], decimals: Int) throws -> Decimal {
        // Values that fit a machine integer (every satoshi amount does) add up as integers: one
        // decimal conversion per transaction instead of one per input and output.
        if let units = integerNet(credits: credits, debits: debits) {
            guard units != 0 else { return 0 }
            let magnitude = try SmallestUnit.amount(String(units.magnitude), decimals: decimals)
            return units < 0 ? -magnitude : magnitude
        }
        var total = Decimal(0)
        for (values, sign) in [(credits, Decimal(1)), (debits, Decimal(-1))] {
            for value in values {
                guard let sum = SmallestUnit.exactSum(total, sign * (try SmallestUnit.amount(value, decimals: decimals))) else {
                    throw DomainError(.invalidAmount, "the amounts add up to more digits than can be held exactly")
                }
                total = sum
            }
        }
        return total
    }

    /// The net in smallest units when every value is at most 18 digits and nothing overflows;
    /// nil otherwise (the decimal path then adds them, or says what is wrong with one).
    static func integerNet(credits: [String], debits: [String]) -> Int64? {
        var total: Int64 = 0
        for (values, credit) in [(credits, true), (debits, false)] {
            for value in values {
                let digits = value.utf8
                guard (1...18).contains(digits.count) else { return nil }
                var units: Int64 = 0
                for digit in digits {
                    guard digit >= 48, digit <= 57 else { return nil }
                    units = units * 10 + Int64(digit - 48)
                }
                let (sum, overflow) = credit ? total.addingReportingOverflow(units) : total.subtractingReportingOverflow(units)
                guard !overflow else { return nil }
                total = sum
            }
        }
        return total
    }

    /// Stored once it has `minConfirmations`; before that it is only reported as pending.
    public func counts(minConfirmations: Int) -> Bool { blockTime != nil && confirmations >= minConfirmations }
}

/// A transaction seen on the chain but not (yet) counted: in the mempool or too shallow.
public struct PendingTransaction: Sendable, Equatable {
    public var txid: String
    public var amount: Decimal
    public var confirmations: Int

    public init(txid: String, amount: Decimal, confirmations: Int) {
        self.txid = txid
        self.amount = amount
        self.confirmations = confirmations
    }
}

/// What one sync changes, worked out from what is stored and what the provider lists
/// (SPEC 10): which transactions need their details, which stored ones are gone (a
/// reorganisation, or back in the mempool), and which are to be stored.
public struct ChainSyncPlan: Sendable {
    /// Every txid the provider reports for the set, newest first, mempool included.
    public var listed: [String]
    /// Those of `listed` that are not in a block.
    public var unconfirmed: Set<String>
    /// The txids stored for the asset from the chain.
    public var stored: Set<String>
    /// Txids reported as pending by the previous sync (they may have confirmed since).
    public var pending: Set<String>
    /// Confirmed txids that net to nothing for the set, known from earlier syncs.
    public var ignored: Set<String>

    private let listedSet: Set<String>

    public init(listed: [String], unconfirmed: Set<String>, stored: Set<String>, pending: Set<String>, ignored: Set<String> = []) {
        self.listed = listed
        self.ignored = ignored
        listedSet = Set(listed)
        self.unconfirmed = unconfirmed
        self.stored = stored
        self.pending = pending
    }

    /// Txids whose details the sync needs: new ones, and the pending ones of last time.
    public var wanted: Set<String> {
        var wanted = Set<String>()
        for txid in listed where (!stored.contains(txid) && !ignored.contains(txid)) || unconfirmed.contains(txid) { wanted.insert(txid) }
        for txid in pending where !stored.contains(txid) && listedSet.contains(txid) { wanted.insert(txid) }
        return wanted
    }

    /// Stored transactions the chain no longer has in a block: removed by this sync.
    public var removed: [String] {
        stored.filter { !listedSet.contains($0) || unconfirmed.contains($0) }.sorted()
    }

    /// Splits the transactions found into those to store and those to report as pending.
    public static func split(_ found: [ChainTransaction], minConfirmations: Int) -> (store: [ChainTransaction], pending: [PendingTransaction]) {
        var store: [ChainTransaction] = []
        var pending: [PendingTransaction] = []
        for transaction in found {
            if transaction.counts(minConfirmations: minConfirmations) {
                store.append(transaction)
            } else {
                pending.append(PendingTransaction(txid: transaction.txid, amount: transaction.amount, confirmations: transaction.confirmations))
            }
        }
        return (store, pending)
    }

    /// Whether the stored balance agrees with the provider's confirmed one, given what the
    /// provider already counts as confirmed but savingsd does not yet (below min_confirmations).
    public static func reconciled(stored: Decimal, reported: Decimal, pending: [PendingTransaction]) -> Bool {
        let shallow = pending.filter { $0.confirmations > 0 }.reduce(Decimal(0)) { $0 + $1.amount }
        return stored + shallow == reported
    }
}
