import Synchronization

/// The `[[when]]` patterns' verdicts on a file's rows, worked out by a pass of their own before
/// the import's write transaction and read back, in the same order, by the pass that writes: the
/// patterns never run while other clients' writes wait. One bit per rule and row, and the groups
/// of each second leg.
public final class RuleVerdicts: Sendable {
    private struct State {
        var bits: [UInt64] = []
        var count = 0
        var cursor = 0
        var replaying = false
        /// Steps the patterns took over the whole file.
        var steps = 0
        /// The groups of each second leg's pattern, in order (nil where it did not match).
        var groups: [[String: String]?] = []
        var groupCursor = 0
    }

    private let state = Mutex(State())
    /// Most steps the patterns may take over the whole file.
    let budget: Int

    /// Generous for any real file (a few hundred steps per field), and a bound on what a hostile
    /// pattern and file can cost together.
    public init(fileBytes: Int) {
        budget = 10_000_000 + 1_000 * max(0, fileBytes)
    }

    /// Whether the verdicts are being read back (the second pass).
    public var isReplaying: Bool { state.withLock { $0.replaying } }

    func record(_ matched: Bool) {
        state.withLock { state in
            if state.count % 64 == 0 { state.bits.append(0) }
            if matched { state.bits[state.count / 64] |= 1 << UInt64(state.count % 64) }
            state.count += 1
        }
    }

    /// The next verdict recorded; false past the end (which the same file read twice never reaches).
    func next() -> Bool {
        state.withLock { state in
            guard state.cursor < state.count else { return false }
            defer { state.cursor += 1 }
            return state.bits[state.cursor / 64] & (1 << UInt64(state.cursor % 64)) != 0
        }
    }

    func record(groups: [String: String]?) {
        state.withLock { $0.groups.append(groups) }
    }

    /// The next second leg's groups recorded; nil past the end.
    func nextGroups() -> [String: String]? {
        state.withLock { state in
            guard state.groupCursor < state.groups.count else { return nil }
            defer { state.groupCursor += 1 }
            return state.groups[state.groupCursor]
        }
    }

    /// Adds a match's steps to the file's total; false once the total passes the budget.
    func spend(_ steps: Int) -> Bool {
        state.withLock { state in
            state.steps += steps
            return state.steps <= budget
        }
    }

    /// Switches from recording to reading back from the first verdict.
    public func replay() {
        state.withLock { state in
            state.replaying = true
            state.cursor = 0
            state.groupCursor = 0
        }
    }
}
