import Foundation
import StorekeeperTesting

#if canImport(Glibc)
    import Glibc
#endif

/// A real `storekeeper serve` child process (the binary beside the test bundle), configured by
/// `STOREKEEPER_…` variables only (the test's own are not inherited), its output in a log file
/// of its own; the many-instances tests SIGKILL it mid-run.
/// - Note: Not thread-safe; one test drives it.
final class ServeProcess {
    static let binary = URL(fileURLWithPath: CommandLine.arguments[0]).deletingLastPathComponent()
        .appendingPathComponent("storekeeper")
    static var binaryExists: Bool { FileManager.default.isExecutableFile(atPath: binary.path) }

    let process = Process()
    let log = FileManager.default.temporaryDirectory.appendingPathComponent("storekeeper-serve-\(UUID()).log")

    /// Starts `storekeeper serve` with `settings` as its whole `STOREKEEPER_` environment.
    init(_ settings: [String: String]) throws {
        _ = FileManager.default.createFile(atPath: log.path, contents: nil)
        // Kept until the process ends, whether or not the test reaches `close()`.
        ScratchDirectories.removeAtExit(log)
        process.executableURL = Self.binary
        process.arguments = ["serve"]
        var environment = ProcessInfo.processInfo.environment.filter { !$0.key.hasPrefix("STOREKEEPER_") }
        for (key, value) in settings { environment[key] = value }
        process.environment = environment
        let output = try FileHandle(forWritingTo: log)
        process.standardOutput = output
        process.standardError = output
        try process.run()
    }

    /// What the process wrote so far.
    var output: String { (try? String(contentsOf: log, encoding: .utf8)) ?? "" }

    /// SIGKILL, and wait for the process to end.
    func kill() {
        if process.isRunning {
            Glibc.kill(process.processIdentifier, SIGKILL)
        }
        process.waitUntilExit()
    }

    /// SIGSTOP: the process is frozen where it is (a test reads the database while nothing of
    /// the process moves, then kills or resumes it).
    func pause() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGSTOP) }
    }

    /// SIGCONT after `pause()`.
    func resume() {
        if process.isRunning { Glibc.kill(process.processIdentifier, SIGCONT) }
    }

    /// Kills the process if it still runs and removes its log.
    func close() {
        kill()
        try? FileManager.default.removeItem(at: log)
    }
}
