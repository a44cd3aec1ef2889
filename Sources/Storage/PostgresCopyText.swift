import Glibc

/// Rows in the text format of PostgreSQL's `COPY … FROM STDIN`: columns separated by a tab,
/// each row ended by a newline, NULL written `\N`. In a text value the four bytes the format
/// gives a meaning (backslash, tab, newline, carriage return) are escaped (`\\`, `\t`, `\n`,
/// `\r`); every other byte, UTF-8 included, goes as it is, and PostgreSQL reads the value back
/// unchanged. A text holding a NUL is refused, as a bound argument is.
/// - Note: Not thread-safe; built by one transaction.
struct PostgresCopyText {
    private(set) var bytes: [UInt8] = []
    private(set) var rows = 0
    /// The columns of every row, fixed by the first.
    private var width: Int?

    init(reservingCapacity capacity: Int = 0) { bytes.reserveCapacity(capacity) }

    mutating func append(row: [SQLValue]) throws(StoreError) {
        precondition(width == nil || width == row.count, "a COPY row has the wrong number of columns")
        width = row.count
        for (index, value) in row.enumerated() {
            if index > 0 { bytes.append(0x09) }
            switch value {
            case .null:
                bytes.append(0x5C)
                bytes.append(0x4E)
            case .integer(let integer): bytes.append(contentsOf: String(integer).utf8)
            case .text(let text): try append(text: text)
            }
        }
        bytes.append(0x0A)
        rows += 1
    }

    private mutating func append(text: String) throws(StoreError) {
        try SQLValue.withStorableUTF8(text) { utf8 in
            // Runs without a byte to escape (a JWS has none; JSON seldom) are copied whole.
            var mark = 0
            for index in 0..<utf8.count {
                let escaped: UInt8
                switch utf8[index] {
                case 0x5C: escaped = 0x5C
                case 0x09: escaped = 0x74
                case 0x0A: escaped = 0x6E
                case 0x0D: escaped = 0x72
                default: continue
                }
                bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark..<index]))
                bytes.append(0x5C)
                bytes.append(escaped)
                mark = index + 1
            }
            bytes.append(contentsOf: UnsafeBufferPointer(rebasing: utf8[mark...]))
        }
    }
}
