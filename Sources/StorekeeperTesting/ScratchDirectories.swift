import Foundation
import Synchronization

/// Directories tests write into, each removed when the test process exits, whether or not the
/// test that made it removed it (one that fails half-way, or keeps a child's files for its
/// message, would otherwise leave them: a day of runs had left hundreds in the temporary folder).
/// - Note: Thread-safe: the list sits behind a `Mutex`; removal runs once, at `exit`.
public enum ScratchDirectories {
    private static let made = Mutex<[String]>([])
    private static let removalAtExit: Void = {
        atexit {
            for path in ScratchDirectories.made.withLock({ $0 }) {
                try? FileManager.default.removeItem(atPath: path)
            }
        }
    }()

    /// A new empty directory `<temporary folder>/<prefix>-<UUID>`, removed at exit.
    public static func make(prefix: String) throws -> URL {
        let url = FileManager.default.temporaryDirectory.appendingPathComponent("\(prefix)-\(UUID().uuidString)")
        try FileManager.default.createDirectory(at: url, withIntermediateDirectories: true)
        removeAtExit(url)
        return url
    }

    /// Removes `url` (a file or a directory) when the process exits.
    public static func removeAtExit(_ url: URL) {
        _ = removalAtExit
        made.withLock { $0.append(url.path) }
    }

    /// What is listed for removal (for the test of this type).
    public static var listed: [String] { made.withLock { $0 } }
}
