import Foundation
import GRDB
import SavingsCore

/// Automatic allocation (SPEC 5.1) for rows written in bulk (an import file, a page of chain
/// transactions): each inserted deposit grows the goal `tx.add` would grow, and the history
/// rows are written together at the end, since one at a time each backdated deposit rewrote
/// every later history row of the pair. The target grows by the deposit either way.
struct DepositAllocator {
    let assetID: UUID
    let now: Date
    private var allocations: [UUID: Decimal]
    private var balance: Decimal
    private var grown: [UUID: [(at: Date, delta: Decimal)]] = [:]
    private(set) var allocated = 0

    init(asset: AssetRecord, now: Date, _ db: Database) throws {
        assetID = try StoreKey.uuid(asset.id)
        self.now = now
        allocations = try SavingsDatabase.allocations(assetID: asset.id, db)
        // An account without allocations allocates nothing (and gets none during the write):
        // its running balance is not needed.
        balance = allocations.isEmpty ? 0 : try SavingsDatabase.balance(assetID: asset.id, at: now, db)
    }

    /// Counts a row that went in.
    mutating func inserted(amount: Decimal, date: Date, _ db: Database) throws {
        guard !allocations.isEmpty else { return }
        if amount > 0, let goal = AutoAllocation.goalToGrow(allocations: allocations, balanceBefore: balance, deposit: amount) {
            if grown[goal] == nil { allocations[goal] = try SavingsDatabase.newestTarget(assetID: assetID, goalID: goal, db) }
            grown[goal, default: []].append((date, amount))
            allocations[goal, default: 0] += amount
            allocated += 1
        }
        if date <= now { balance += amount }
    }

    /// Writes the allocation history of every deposit counted.
    func apply(timeZone: TimeZone, _ db: Database) throws {
        for (goal, deltas) in grown.sorted(by: { $0.key.uuidString < $1.key.uuidString }) {
            _ = try SavingsDatabase.applyAllocationDeltas(assetID: assetID, goalID: goal, deltas, now: now, timeZone: timeZone, db)
        }
    }
}
