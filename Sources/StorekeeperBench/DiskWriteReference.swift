import Foundation

#if canImport(Glibc)
    import Glibc
#endif

/// The physical reference for bulk import: how many bytes a second this disk takes when they
/// are written in order and then made durable (`dd bs=1M conv=fdatasync`), in the directory
/// the store lives in, measured in the same run.
///
/// An import of rows carrying Apple's signed payloads (3.4 KB a transaction) is bounded by it
/// long before the CPU: SQLite writes every new page to the WAL and again to the database when
/// it checkpoints, so the import's ceiling is this rate over twice the bytes the database grows
/// by a row.
/// - Note: Stateless; each call blocks its thread while it writes `megabytes`.
enum DiskWriteReference {
    struct Failure: Error, CustomStringConvertible {
        var description: String
    }

    /// Bytes per second of `megabytes` MiB written in 1 MiB blocks to a new file in
    /// `directory`, the time including the final `fdatasync`.
    static func sequential(directory: URL, megabytes: Int = 256) throws -> Double {
        let path = directory.appendingPathComponent("disk-write-reference-\(UUID().uuidString)").path
        let descriptor = open(path, O_WRONLY | O_CREAT | O_TRUNC, 0o600)
        guard descriptor >= 0 else { throw Failure(description: "cannot create \(path): errno \(errno)") }
        defer {
            close(descriptor)
            unlink(path)
        }
        // Not zeros only, in case the file system or the disk below it compresses them.
        let block = [UInt8]((0..<1_048_576).map { UInt8(truncatingIfNeeded: $0 &* 2_654_435_761 >> 13) })
        let clock = ContinuousClock()
        let start = clock.now
        for _ in 0..<megabytes {
            var offset = 0
            while offset < block.count {
                let written = block.withUnsafeBytes { bytes in
                    write(descriptor, bytes.baseAddress! + offset, bytes.count - offset)
                }
                guard written > 0 else { throw Failure(description: "write to \(path): errno \(errno)") }
                offset += written
            }
        }
        guard fdatasync(descriptor) == 0 else { throw Failure(description: "fdatasync \(path): errno \(errno)") }
        return Double(megabytes) * 1_048_576 / StoreBenchmark.seconds(clock.now - start)
    }
}
