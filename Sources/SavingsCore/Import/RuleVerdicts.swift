import Synchronization

/// The `[[when]]` patterns' verdicts on a file's rows, and what they may cost.
///
/// An import first runs the patterns as it writes (`direct`), on a budget of steps in
/// proportion to the file, of the order of reading the file itself: real rules on real files
/// stay far inside it. A file and rules that spend it stop that write (`OverBudget`, rolled
/// back), and the import starts again in two passes: the patterns' verdicts worked out by a
/// pass of their own off the serving pool (`recording`), on the generous budget a hostile file
/// may take, then read back in the same order by the pass that writes (`replaying`): so however
/// long they take, no other client's write waits for them. One bit per rule and row, and the
/// groups of each second leg.
public final class RuleVerdicts: Sendable {
    public enum Mode: Sendable {
        case direct, recording
    }

    /// The direct write's budget ran out: the import is to be made in two passes.
    public struct OverBudget: Error, Sendable {}
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
    public let mode: Mode

    /// `recording`: generous for any real file (a few hundred steps per field), and a bound on
    /// what a hostile pattern and file can cost together. `direct`: 20 steps a byte (a field of
    /// 20 characters against a pattern of a few dozen instructions, on a row of 100 bytes, takes
    /// a tenth of it).
    public init(fileBytes: Int, mode: Mode = .recording) {
        self.mode = mode
        switch mode {
        case .recording: budget = 10_000_000 + 1_000 * max(0, fileBytes)
        case .direct: budget = 1_000_000 + 20 * max(0, fileBytes)
        }
    }

    /// Whether the verdicts are being read back (the second pass).
    public var isReplaying: Bool { state.withLock { $0.replaying } }

    func record(_ matched: Bool) {
        guard mode == .recording else { return }
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
        guard mode == .recording else { return }
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
