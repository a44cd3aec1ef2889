import Foundation

/// What the durable commits now in an SQLite write-ahead log wrote: the frames (one page each)
/// of every commit since the log last started over, read from the frame headers (SQLite's
/// documented WAL format: a 32-byte header, then per frame a 24-byte header and the page; a
/// frame whose "database size" field is not zero ends a commit; frames left from before the
/// log started over carry other salts and are not counted).
///
/// Why the worst case prints it: a commit's time beyond the disk's flush is the bytes it hands
/// the disk, and a long history's commit rewrites its large stored texts whole.
/// - Note: Immutable value; `Sendable`.
struct WriteAheadLogCommits: Sendable {
    var pageSize: Int
    /// Frames per commit, oldest first.
    var frames: [Int]

    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Reads the log at `path` (the database's path with `-wal`).
    init(path: String) throws {
        guard let data = FileManager.default.contents(atPath: path) else {
            throw Failure(description: "cannot read \(path)")
        }
        try self.init(bytes: [UInt8](data))
    }

    init(bytes: [UInt8]) throws {
        func word(_ offset: Int) -> UInt32 {
            bytes[offset..<offset + 4].reduce(0) { $0 << 8 | UInt32($1) }
        }
        guard bytes.count >= 32, word(0) & 0xFFFF_FFFE == 0x377F_0682 else {
            throw Failure(description: "not an SQLite write-ahead log")
        }
        pageSize = Int(word(8) == 1 ? 65_536 : word(8))
        let salts = (word(16), word(20))
        frames = []
        var pending = 0
        var offset = 32
        while offset + 24 + pageSize <= bytes.count, (word(offset + 8), word(offset + 12)) == salts {
            pending += 1
            if word(offset + 4) != 0 {
                frames.append(pending)
                pending = 0
            }
            offset += 24 + pageSize
        }
    }

    /// The median of the last `count` commits, in frames.
    func medianFrames(ofLast count: Int) -> Int? {
        let recent = frames.suffix(count).sorted()
        return recent.isEmpty ? nil : recent[recent.count / 2]
    }
}
