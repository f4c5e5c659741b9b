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
    /// The only goal a deposit can grow (`AutoAllocation.soleGoal`) and its allocation as it
    /// grows; nil when the asset has no such goal, and then nothing is counted per row.
    private var sole: (goal: UUID, amount: RunningTotal)?
    /// The asset's balance at `now` as rows go in (kept only while there is a sole goal).
    private var balance: RunningTotal
    private var grown: [(at: Date, delta: Decimal)] = []
    private var targetRead = false
    private(set) var allocated = 0

    init(asset: AssetRecord, now: Date, _ db: Database) throws {
        assetID = try StoreKey.uuid(asset.id)
        self.now = now
        sole = AutoAllocation.soleGoal(try SavingsDatabase.allocations(assetID: asset.id, db)).map { ($0.goal, RunningTotal($0.amount)) }
        // Without a goal to grow, the running balance is not needed.
        balance = RunningTotal(sole == nil ? 0 : try SavingsDatabase.balance(assetID: asset.id, at: now, db))
    }

    /// Counts a row that went in (`units`: its amount's `RunningTotal.units`).
    mutating func inserted(amount: Decimal, units: Int128?, date: Date, _ db: Database) throws {
        guard var sole else { return }
        if amount > 0, !balance.exceeds(sole.amount) {
            if !targetRead {
                sole.amount = RunningTotal(try SavingsDatabase.newestTarget(assetID: assetID, goalID: sole.goal, db))
                targetRead = true
            }
            grown.append((date, amount))
            sole.amount.add(amount, units: units)
            self.sole = sole
            allocated += 1
        }
        if date <= now { balance.add(amount, units: units) }
    }

    /// Writes the allocation history of every deposit counted.
    func apply(timeZone: TimeZone, _ db: Database) throws {
        guard let sole, !grown.isEmpty else { return }
        _ = try SavingsDatabase.applyAllocationDeltas(assetID: assetID, goalID: sole.goal, grown, now: now, timeZone: timeZone, db)
    }
}
