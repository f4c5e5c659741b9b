/// Plain-text tables for people: columns as wide as their widest cell, numbers right-aligned,
/// headers in bold on a colour terminal. Widths ignore colour sequences.
public struct Table {
    public var headers: [String]
    public var rows: [[String]] = []
    /// Columns whose cells line up on the right (amounts, counts).
    public var rightAligned: Set<Int> = []

    public init(headers: [String], rows: [[String]] = [], rightAligned: Set<Int> = []) {
        self.headers = headers
        self.rows = rows
        self.rightAligned = rightAligned
    }

    public var rendered: String { rendered(style: .plain) }

    public func rendered(style: Style) -> String {
        let columns = headers.indices.map { column in
            ([headers[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.visibleWidth).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            var text = cells.enumerated().map { index, cell in
                if rightAligned.contains(index) { return cell.leftPadded(to: columns[index]) }
                return index == cells.count - 1 ? cell : cell.rightPadded(to: columns[index])
            }.joined(separator: "  ")
            while text.hasSuffix(" ") { text.removeLast() }
            return text
        }
        return ([style.bold(line(headers))] + rows.map(line)).joined(separator: "\n")
    }
}

