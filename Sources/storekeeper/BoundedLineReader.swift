import Foundation

/// Reads a file line by line in chunks, never holding more than one line of at most
/// `maximumBytes`: a longer line is reported as `tooLong` (its bytes skipped up to the next
/// line break), so an export of any size is read in bounded memory.
/// - Note: Not thread-safe; one reader per loop.
struct BoundedLineReader {
    enum Line {
        case line([UInt8])
        case tooLong
    }

    private let handle: FileHandle
    private let maximumBytes: Int
    private var buffer: [UInt8] = []
    private var start = 0
    private var skipping = false
    private var atEnd = false
    private static let chunk = 1 << 20

    init(path: String, maximumBytes: Int) throws {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        self.handle = handle
        self.maximumBytes = maximumBytes
    }

    /// The next line without its `\n`; `nil` at the end of the file.
    mutating func next() throws -> Line? {
        while true {
            if let newline = buffer[start...].firstIndex(of: UInt8(ascii: "\n")) {
                let line = Array(buffer[start..<newline])
                start = newline + 1
                if skipping {
                    skipping = false
                    return .tooLong
                }
                return line.count > maximumBytes ? .tooLong : .line(line)
            }
            if buffer.count - start > maximumBytes {
                // Too long already: drop what is held and skip to the line break.
                skipping = true
                buffer.removeAll(keepingCapacity: true)
                start = 0
            }
            if atEnd {
                guard start < buffer.count || skipping else { return nil }
                let line = Array(buffer[start...])
                buffer.removeAll()
                start = 0
                if skipping {
                    skipping = false
                    return .tooLong
                }
                return line.isEmpty ? nil : .line(line)
            }
            let data = try handle.read(upToCount: Self.chunk) ?? Data()
            if data.isEmpty { atEnd = true }
            if start > 0 {
                buffer.removeFirst(start)
                start = 0
            }
            buffer.append(contentsOf: data)
        }
    }

    func close() { try? handle.close() }

    /// The number of lines of the file (a last line without a line break counts), for progress.
    static func countLines(path: String) throws -> Int {
        guard let handle = FileHandle(forReadingAtPath: path) else {
            throw CocoaError(.fileReadNoSuchFile, userInfo: [NSFilePathErrorKey: path])
        }
        defer { try? handle.close() }
        var lines = 0
        var last: UInt8 = UInt8(ascii: "\n")
        while let data = try handle.read(upToCount: chunk), !data.isEmpty {
            for byte in data where byte == UInt8(ascii: "\n") { lines += 1 }
            last = data.last!
        }
        return last == UInt8(ascii: "\n") ? lines : lines + 1
    }
}
