/// Plain-text tables for people.
struct Table {
    var headers: [String]
    var rows: [[String]] = []

    var rendered: String {
        let columns = headers.indices.map { column in
            ([headers[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { index, cell in
                index == cells.count - 1 ? cell : cell + String(repeating: " ", count: columns[index] - cell.count)
            }.joined(separator: "  ")
        }
        return ([line(headers)] + rows.map(line)).joined(separator: "\n")
    }
}

extension Optional where Wrapped == String {
    var orDash: String { self ?? "-" }
}
