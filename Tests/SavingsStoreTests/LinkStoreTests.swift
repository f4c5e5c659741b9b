import Foundation
import SavingsCore
import Testing
@testable import SavingsStore

/// Linked accounts in the store (issue 50): a sync writes only for the link it began with.
@Suite struct LinkStoreTests {
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    let utc = TimeZone(identifier: "UTC")!

    func rows(_ db: SavingsDatabase, _ asset: String) async throws -> [AssetTransaction] {
        try await db.transactions(TransactionFilter(asset: asset))
    }

    /// Found by an outside check: relinking while a sync of the link before still ran let
    /// that sync store the old account's rows (and its cursor, balance and "synced") as the
    /// new link's.
    @Test func aSyncOfTheLinkBeforeStoresNothingOnceTheLinkChanged() async throws {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createAsset(try NewAsset(name: "K", currency: "BTC", kind: "crypto", address: nil, notes: nil), now: start)
        let (_, old, _) = try await db.link(asset: "K", service: .kraken, account: "XXBT", credential: "first-key", now: start)
        let row = LinkedRow(id: "L1", date: start.addingTimeInterval(-60), amount: 1, note: "Kraken deposit")
        #expect(try await db.storeLinkedRows(old, [row], cursor: nil, now: start, timeZone: utc) == 1)

        // Another key of the same account code: a new link; the old sync's writes are refused.
        let (_, new, _) = try await db.link(asset: "K", service: .kraken, account: "XXBT", credential: "second-key", now: start.addingTimeInterval(1))
        #expect(new.createdAt != old.createdAt && new.lastSyncAt == nil)
        let late = LinkedRow(id: "L2", date: start, amount: 2, note: "Kraken deposit")
        await #expect(throws: DomainError.self) { try await db.storeLinkedRows(old, [late], cursor: "ofs=50", now: start, timeZone: utc) }
        await #expect(throws: DomainError.self) { try await db.finishLinkSync(old, removing: ["L1"], reported: 3, notice: nil, now: start) }
        await #expect(throws: DomainError.self) { try await db.recordLinkSyncFailure(old, error: "late") }
        let (_, current) = try await db.link(asset: "K")
        #expect(current?.cursor == nil && current?.lastError == nil && current?.lastSyncAt == nil && current?.reportedBalance == nil)
        #expect(try await rows(db, "K").map(\.externalID) == ["L1"])

        // The new link's own sync writes.
        #expect(try await db.storeLinkedRows(new, [late], cursor: nil, now: start, timeZone: utc) == 1)
        let finished = try await db.finishLinkSync(new, removing: [], reported: 3, notice: "SimpleFIN: You must reauthenticate.", now: start)
        #expect(finished.reconciled && finished.balance == 3)
        #expect(try await db.link(asset: "K").1?.lastError == "SimpleFIN: You must reauthenticate.")

        // Unlinked: nothing of the link before is written either.
        _ = try await db.unlinkAccount(asset: "K")
        await #expect(throws: DomainError.self) { try await db.storeLinkedRows(new, [late], cursor: nil, now: start, timeZone: utc) }
    }

    /// The same link again (same account and key) keeps its state: its next sync is incremental.
    @Test func theSameLinkAgainKeepsWhereItWas() async throws {
        let db = try SavingsDatabase.inMemory()
        _ = try await db.createAsset(try NewAsset(name: "K", currency: "BTC", kind: "crypto", address: nil, notes: nil), now: start)
        let (_, link, _) = try await db.link(asset: "K", service: .kraken, account: "XXBT", credential: "key", now: start)
        _ = try await db.finishLinkSync(link, removing: [], reported: 0, notice: nil, now: start)
        let (_, again, _) = try await db.link(asset: "K", service: .kraken, account: "XXBT", credential: "key", now: start.addingTimeInterval(60))
        #expect(again.createdAt == link.createdAt && again.lastSyncAt != nil)
        let window = try await db.linkedWindow(again)
        #expect(window.since == Date(timeIntervalSince1970: (start.timeIntervalSince1970 - LinkSyncPlan.overlap).rounded(.down)))
    }
}
