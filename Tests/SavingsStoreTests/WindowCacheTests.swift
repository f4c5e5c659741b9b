import Foundation
import SavingsCore
import Synchronization
import Testing
@testable import SavingsStore

/// Execution-window timelines come back "unchanged since stamp" only when they are: checked
/// against a fresh reader of the same file after every kind of write and as the clock moves.
@Suite struct WindowCacheTests {
    let utc = TimeZone(identifier: "UTC")!
    let start = Date(timeIntervalSince1970: 1_795_000_000)
    let assets = ["Bank", "Wallet", "Broker"]
    func d(_ text: String) -> Decimal { try! Amount.parse(text) }

    /// A caller that holds the readings it was given and the walks over them, as the daemon
    /// does, and resolves every "unchanged" and "extended" answer from them.
    struct Holder {
        var held: [UUID: (stamp: UInt64, timeline: AssetTimeline, walk: DerivedContributionWalk)] = [:]
        var reused = 0, extended = 0

        mutating func read(_ db: SavingsDatabase, start: Date, end: Date) async throws -> [(AssetTimeline, [DerivedEvent])] {
            let readings = try await db.timelines(start: start, end: end, known: held.mapValues(\.stamp))
            var next: [UUID: (stamp: UInt64, timeline: AssetTimeline, walk: DerivedContributionWalk)] = [:]
            for reading in readings {
                switch reading.reading {
                case .full(let timeline):
                    next[reading.assetID] = (reading.stamp, timeline, DerivedContributionWalk(timeline))
                case .unchanged:
                    let known = try #require(held[reading.assetID], "unchanged, but never handed out")
                    #expect(known.stamp == reading.stamp)
                    next[reading.assetID] = known
                    reused += 1
                case .extended(let since, let later):
                    var known = try #require(held[reading.assetID], "extended, but never handed out")
                    #expect(known.stamp == since)
                    #expect(later.allSatisfy { point in known.timeline.changes.allSatisfy { $0.at < point.at } }, "later points come later")
                    known.timeline.changes += later
                    known.walk.walk(later)
                    next[reading.assetID] = (reading.stamp, known.timeline, known.walk)
                    extended += 1
                }
            }
            held = next
            return readings.map { (next[$0.assetID]!.timeline, next[$0.assetID]!.walk.events) }
        }
    }

    /// The same timeline, whatever order its points were read in, and the same events.
    static func same(_ seen: [(AssetTimeline, [DerivedEvent])], _ truth: [AssetTimeline]) -> Bool {
        func points(_ timeline: AssetTimeline) -> [String] { timeline.changes.map { "\($0)" }.sorted() }
        return seen.count == truth.count && zip(seen, truth).allSatisfy { seen, truth in
            seen.0.assetID == truth.assetID && seen.0.balanceAtStart == truth.balanceAtStart
                && seen.0.targetsAtStart == truth.targetsAtStart && points(seen.0) == points(truth)
                && seen.1 == DerivedContributionCalculator.events(for: truth)
        }
    }

    func open(_ path: String) async throws -> SavingsDatabase {
        let db = try SavingsDatabase.open(path: path)
        let today = try CalendarDate(parsing: "2026-11-18", field: "t")
        if try await db.counts()["goals"] == 0 {
            for name in ["A", "B"] {
                _ = try await db.createGoal(try NewGoal(name: name, currency: "EUR", targetAmount: "1000", deadline: "2030-01-01",
                                                        startDate: nil, notes: nil, today: today), now: start)
            }
            for name in assets {
                _ = try await db.createAsset(try NewAsset(name: name, currency: "EUR", kind: "fiat", address: nil, notes: nil), now: start)
            }
        }
        return db
    }

    /// What a reader with nothing cached sees.
    func truth(_ path: String, end: Date) async throws -> [AssetTimeline] {
        let fresh = try SavingsDatabase.open(path: path)
        defer { try? fresh.close() }
        return try await fresh.timelines(start: start, end: end).map { reading in
            guard case .full(let timeline) = reading.reading else { throw CancellationError() }
            return timeline
        }
    }

    /// A database file in a fresh directory, removed afterwards.
    func withDatabase(_ body: (SavingsDatabase, _ directory: URL, _ path: String) async throws -> Void) async throws {
        let directory = FileManager.default.temporaryDirectory.appendingPathComponent("window-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: directory, withIntermediateDirectories: true)
        defer { try? FileManager.default.removeItem(at: directory) }
        let path = directory.appendingPathComponent("s.db").path
        try await body(try await open(path), directory, path)
    }

    @Test func aWriteToOneAccountLeavesTheOthersUnread() async throws {
        try await withDatabase { db, _, _ in
            let end = start.addingTimeInterval(3_600)
            for name in assets {
                _ = try await db.addTransaction(asset: name, amount: d("10"), date: start.addingTimeInterval(60), note: nil, externalID: nil,
                                                now: end, timeZone: utc)
            }
            var holder = Holder()
            _ = try await holder.read(db, start: start, end: end)
            #expect(holder.reused == 0)
            _ = try await db.addTransaction(asset: "Wallet", amount: d("5"), date: start.addingTimeInterval(120), note: nil, externalID: nil,
                                            now: end, timeZone: utc)
            let readings = try await db.timelines(start: start, end: end, known: holder.held.mapValues(\.stamp))
            #expect(readings.filter { if case .unchanged = $0.reading { true } else { false } }.count == 2, "Bank and Broker unchanged")
            // Backdated into the window: Wallet read whole again.
            #expect(readings.compactMap { if case .full(let timeline) = $0.reading { timeline.changes.count } else { nil } } == [2])
            _ = try await holder.read(db, start: start, end: end)
            // Made now, after every point read: Wallet's reading goes on with that deposit alone.
            let later = end.addingTimeInterval(60)
            _ = try await db.addTransaction(asset: "Bank", amount: d("7"), date: later, note: nil, externalID: nil, now: later, timeZone: utc)
            let next = try await db.timelines(start: start, end: later, known: holder.held.mapValues(\.stamp))
            #expect(next.compactMap { if case .extended(_, let points) = $0.reading { points.count } else { nil } } == [1])
        }
    }

    /// Amounts whose texts are not in the stored form (written by hand or by an older version)
    /// are read through the text parser, in a whole reading and in one that goes on.
    @Test func rowsNotInTheStoredFormAreReadAsText() async throws {
        try await withDatabase { db, _, _ in
            let end = start.addingTimeInterval(3_600)
            _ = try await db.addTransaction(asset: "Bank", amount: d("10"), date: start.addingTimeInterval(60), note: nil, externalID: nil,
                                            now: end, timeZone: utc)
            try await db.writer.write { db in
                try db.execute(sql: "UPDATE asset_transaction SET amount = '12345678901234567890', date = ?",
                               arguments: [Timestamp.milliseconds(start.addingTimeInterval(120))])
            }
            var holder = Holder()
            let whole = try await holder.read(db, start: start, end: end)
            let bank = try #require(whole.first { $0.0.changes.count == 1 }?.0)
            #expect(bank.changes == [.transaction(at: start.addingTimeInterval(120), amount: d("12345678901234567890"),
                                                  units: RunningTotal.units("12345678901234567890"))])
            let later = end.addingTimeInterval(60)
            _ = try await db.addTransaction(asset: "Bank", amount: d("1"), date: later, note: nil, externalID: nil, now: later, timeZone: utc)
            try await db.writer.write { db in
                try db.execute(sql: "UPDATE asset_transaction SET amount = '+1' WHERE amount = '1'")
            }
            let next = try await db.timelines(start: start, end: later, known: holder.held.mapValues(\.stamp))
            let points = next.compactMap { if case .extended(_, let points) = $0.reading { points } else { nil } }
            #expect(points == [[.transaction(at: later, amount: 1, units: RunningTotal.units("1"))]])
        }
    }

    /// A look at a past window that is not remembered leaves the cache as it was.
    @Test func aReadingNotRememberedIsNotKept() async throws {
        try await withDatabase { db, _, _ in
            let end = start.addingTimeInterval(3_600)
            _ = try await db.addTransaction(asset: "Bank", amount: d("10"), date: start.addingTimeInterval(60), note: nil, externalID: nil,
                                            now: end, timeZone: utc)
            func full(_ readings: [WindowTimeline]) -> Int {
                readings.filter { if case .full = $0.reading { true } else { false } }.count
            }
            let once = try await db.timelines(start: start, end: end, remember: false)
            #expect(full(once) == 1)
            let known = Dictionary(uniqueKeysWithValues: once.map { ($0.assetID, $0.stamp) })
            let again = try await db.timelines(start: start, end: end, known: known)
            #expect(full(again) == 1, "nothing was kept, so it is read whole")
            let kept = Dictionary(uniqueKeysWithValues: again.map { ($0.assetID, $0.stamp) })
            #expect(full(try await db.timelines(start: start, end: end, known: kept)) == 0)
        }
    }

    @Test func readingsNeverDifferFromAFreshReader() async throws {
        try await withDatabase { db, directory, path in
            var random = SeededGenerator(state: 2611)
            var end = start.addingTimeInterval(600)
            var holder = Holder()
            var transactions: [String] = []
            func pick<T>(_ items: [T]) -> T { items[Int(random.next() % UInt64(items.count))] }

            for step in 0..<160 {
                // Writes dated before the window, inside it, and ahead of its end (which the clock
                // later reaches); allocations set now, whatever the balance allows.
                let kind = random.next() % 7
                switch kind {
                case 0, 1:
                    // Half of them made now or a little ahead (the common case), half anywhere.
                    let date = random.next() % 2 == 0 ? end.addingTimeInterval(Double(random.next() % 300))
                        : start.addingTimeInterval(Double(Int(random.next() % 3_000)) - 600)
                    let amount = Decimal(Int(random.next() % 200)) - 50
                    let recorded = try await db.addTransaction(asset: pick(assets), amount: amount == 0 ? 1 : amount, date: date, note: nil,
                                                               externalID: nil, now: end, timeZone: utc)
                    transactions.append(recorded.transaction.id.uuidString)
                case 2:
                    guard !transactions.isEmpty else { continue }
                    _ = try await db.deleteTransaction(transactions.remove(at: Int(random.next() % UInt64(transactions.count))))
                case 3:
                    // Refused when the balance does not cover it: a rolled-back write.
                    _ = try? await db.setAllocation(asset: pick(assets), goal: pick(["A", "B"]), amount: Decimal(Int(random.next() % 80)),
                                                    now: end, timeZone: utc)
                case 4:
                    let rows = (0..<3).map { _ in
                        "\(Timestamp.format(start.addingTimeInterval(Double(Int(random.next() % 2_400))))),\(random.next() % 90 + 1)\n"
                    }
                    let file = directory.appendingPathComponent("import-\(step).csv")
                    try ("date,amount\n" + rows.joined()).write(to: file, atomically: true, encoding: .utf8)
                    _ = try await db.importTransactions(asset: pick(assets), path: file.path, partial: false, now: end, timeZone: utc)
                default:
                    end = end.addingTimeInterval(Double(random.next() % 400))
                }
                let seen = try await holder.read(db, start: start, end: end)
                #expect(try await Self.same(seen, truth(path, end: end)), "step \(step), write \(kind)")
            }
            #expect(holder.reused > 50, "unchanged readings were reused (\(holder.reused))")
            #expect(holder.extended > 10, "readings went on with later points (\(holder.extended))")
        }
    }

    /// A reading whose snapshot was taken before a write committed is answered from that
    /// snapshot but not kept: the next reading sees the write.
    @Test func aReadingThatOverlapsACommitIsNotKept() async throws {
        try await withDatabase { db, _, path in
            let end = start.addingTimeInterval(3_600), later = end.addingTimeInterval(60)
            _ = try await db.addTransaction(asset: "Bank", amount: d("10"), date: start.addingTimeInterval(60), note: nil, externalID: nil,
                                            now: end, timeZone: utc)
            var holder = Holder()
            _ = try await holder.read(db, start: start, end: end)
            let paused = Mutex(false)
            let resume = DispatchSemaphore(value: 0)
            db.windows.afterSnapshot.withLock { hook in
                hook = {
                    paused.withLock { $0 = true }
                    resume.wait()
                }
            }
            let reader = Task { [holder, start] in
                var holder = holder
                _ = try await holder.read(db, start: start, end: later)
                return holder
            }
            while !paused.withLock({ $0 }) { try await Task.sleep(for: .milliseconds(5)) }
            db.windows.afterSnapshot.withLock { $0 = nil }
            // Backdated before the reading's end, committed while the reading holds its snapshot.
            _ = try await db.addTransaction(asset: "Bank", amount: d("5"), date: start.addingTimeInterval(30), note: nil, externalID: nil,
                                            now: later, timeZone: utc)
            resume.signal()
            var afterwards = try await reader.value
            let seen = try await afterwards.read(db, start: start, end: later)
            #expect(Self.same(seen, try await truth(path, end: later)), "the backdated deposit is seen")
        }
    }
}
