/// The table an `OccurrenceCounter` keeps its keys and counts in: slots of a key (0: empty)
/// and how many times it came before. In memory while small; a store may give one that lives
/// in a file, so a file of millions of rows is counted in flat memory.
public protocol OccurrenceSlots: AnyObject {
    /// How many slots the table has.
    var count: Int { get }
    /// The key in slot `index` (0: empty).
    func key(_ index: Int) throws -> UInt64
    /// How many times the key in slot `index` came before.
    func count(_ index: Int) throws -> UInt64
    func write(_ index: Int, key: UInt64, count: UInt64) throws
    /// Every used slot (for growing into a larger table).
    func forEachUsed(_ body: (UInt64, UInt64) throws -> Void) throws
}

/// Slots in memory: an array of keys (8 bytes a slot), and a count only for the keys seen more
/// than once.
public final class MemorySlots: OccurrenceSlots {
    private var keys: [UInt64]
    private var repeats: [UInt64: UInt64] = [:]

    public init(count: Int) { keys = [UInt64](repeating: 0, count: count) }

    public var count: Int { keys.count }

    public func key(_ index: Int) throws -> UInt64 { keys[index] }

    public func count(_ index: Int) throws -> UInt64 { repeats[keys[index]] ?? 0 }

    public func write(_ index: Int, key: UInt64, count: UInt64) throws {
        keys[index] = key
        if count > 0 { repeats[key] = count }
    }

    public func forEachUsed(_ body: (UInt64, UInt64) throws -> Void) throws {
        for key in keys where key != 0 { try body(key, repeats[key] ?? 0) }
    }
}

/// Counts how many times each 64-bit key has come before, in one open-addressed table of
/// slots (a key and its count). An import numbers the identical rows of a file with it; the
/// table comes from `makeSlots`, which may put a large one in a file, so memory stays flat
/// whatever the file's size.
public struct OccurrenceCounter {
    private var slots: any OccurrenceSlots
    private var stored = 0
    /// Occurrences of the key 0, which marks an empty slot.
    private var zeroSeen: UInt64 = 0
    private let makeSlots: (Int) throws -> any OccurrenceSlots
    /// Most keys a table holds before it grows: three quarters of its slots.
    private static func isFull(_ keys: Int, _ slots: Int) -> Bool { keys * 4 > slots * 3 }

    /// `expected`: how many keys are likely (a guess from the file's size); the table grows
    /// by half when it is passed. `makeSlots` gives an empty table of the size asked.
    public init(expected: Int = 1024, makeSlots: @escaping (Int) throws -> any OccurrenceSlots = { MemorySlots(count: $0) }) throws {
        self.makeSlots = makeSlots
        slots = try makeSlots(Self.capacity(for: expected))
    }

    private static func capacity(for keys: Int) -> Int { max(16, max(keys, 1) * 4 / 3 + 1) }

    /// How many times `key` came before this call (0 the first time), and counts this one.
    public mutating func next(_ key: UInt64) throws -> UInt32 {
        guard key != 0 else {
            defer { zeroSeen += 1 }
            return UInt32(truncatingIfNeeded: zeroSeen)
        }
        var index = Self.home(key, slots.count)
        while true {
            let found = try slots.key(index)
            if found == 0 { break }
            if found == key {
                let before = try slots.count(index) + 1
                try slots.write(index, key: key, count: before)
                return UInt32(truncatingIfNeeded: before)
            }
            index += 1
            if index == slots.count { index = 0 }
        }
        try slots.write(index, key: key, count: 0)
        stored += 1
        if Self.isFull(stored, slots.count) { try grow() }
        return 0
    }

    /// Where a key's probe starts: its hash scaled to the table (keys are hashes already).
    private static func home(_ key: UInt64, _ count: Int) -> Int {
        Int(key.multipliedFullWidth(by: UInt64(count)).high)
    }

    private mutating func grow() throws {
        let old = slots
        let new = try makeSlots(old.count + old.count / 2)
        try old.forEachUsed { key, count in
            var index = Self.home(key, new.count)
            while try new.key(index) != 0 {
                index += 1
                if index == new.count { index = 0 }
            }
            try new.write(index, key: key, count: count)
        }
        slots = new
    }
}
