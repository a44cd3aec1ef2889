import Foundation

/// A plain-text table for a terminal: a header row, then one row per item, columns padded to
/// their widest cell and separated by two spaces; the last column is not padded, so lines
/// carry no trailing blanks. No row prints `(none)` under the header.
struct TextTable {
    var headers: [String]
    var rows: [[String]] = []

    mutating func add(_ cells: [String]) { rows.append(cells) }

    var text: String {
        let widths = headers.indices.map { column in
            ([headers[column]] + rows.map { column < $0.count ? $0[column] : "" }).map(\.count).max() ?? 0
        }
        func line(_ cells: [String]) -> String {
            cells.enumerated().map { column, cell in
                column == cells.count - 1 ? cell : cell.padding(toLength: widths[column], withPad: " ", startingAt: 0)
            }.joined(separator: "  ")
        }
        return ([line(headers)] + (rows.isEmpty ? ["(none)"] : rows.map(line))).joined(separator: "\n")
    }

    /// An instant the server sends as milliseconds since 1970, in ISO 8601 UTC; `-` for none.
    static func instant(_ milliseconds: Int64?) -> String {
        guard let milliseconds else { return "-" }
        let formatter = ISO8601DateFormatter()
        formatter.timeZone = TimeZone(identifier: "UTC")
        return formatter.string(from: Date(timeIntervalSince1970: Double(milliseconds) / 1000))
    }
}
