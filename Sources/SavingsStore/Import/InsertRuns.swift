/// How a run of rows is cut into multi-row INSERTs: the largest statement, or for the rest the
/// largest power of two that fits, so a table's INSERTs come in a few sizes whose statements
/// stay prepared (an INSERT of an odd size was prepared for each import's last rows).
enum InsertRuns {
    /// The rows of the next statement when `remaining` rows are left (at least 1), at most `largest`.
    static func rows(_ remaining: Int, largest: Int) -> Int {
        remaining >= largest ? largest : 1 << (Int.bitWidth - 1 - max(1, remaining).leadingZeroBitCount)
    }

    /// The sizes `rows` gives, up to `largest` (a power of two): 1, 2, 4, ... `largest`.
    static func sizes(upTo largest: Int) -> [Int] {
        Array(sequence(first: 1) { $0 < largest ? $0 * 2 : nil })
    }
}
