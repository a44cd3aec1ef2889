import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// The `storekeeper` binary run in the background, so a test can interrupt it: standard output
/// to a file, standard error to a file or to a pseudo-terminal.
final class ChildProcess {
    let process: Process
    let stdoutURL: URL
    let stderrURL: URL?
    let terminal: PseudoTerminal?

    init(
        _ arguments: [String], in directory: URL, terminal: PseudoTerminal? = nil, environment: [String: String] = [:]
    ) throws {
        let process = Process()
        process.executableURL = CLITests.binary
        process.arguments = arguments
        if !environment.isEmpty {
            process.environment = ProcessInfo.processInfo.environment.merging(environment) { $1 }
        }
        let name = UUID().uuidString
        stdoutURL = directory.appendingPathComponent("\(name).out")
        _ = FileManager.default.createFile(atPath: stdoutURL.path, contents: nil)
        process.standardOutput = try FileHandle(forWritingTo: stdoutURL)
        process.standardInput = FileHandle.nullDevice
        if let terminal {
            process.standardError = FileHandle(fileDescriptor: terminal.replica, closeOnDealloc: false)
            stderrURL = nil
        } else {
            let url = directory.appendingPathComponent("\(name).err")
            _ = FileManager.default.createFile(atPath: url.path, contents: nil)
            process.standardError = try FileHandle(forWritingTo: url)
            stderrURL = url
        }
        self.terminal = terminal
        self.process = process
        try process.run()
        terminal?.childStarted()
    }

    func signal(_ number: Int32) { kill(process.processIdentifier, number) }

    /// Waits (polling, so no cooperative thread blocks) at most `timeout`; a child still
    /// running then is killed, so a hung run fails the test instead of hanging it.
    func exit(timeout: Duration = .seconds(120)) async throws -> (status: Int32, signalled: Bool) {
        let deadline = ContinuousClock.now + timeout
        while process.isRunning {
            if ContinuousClock.now > deadline { signal(SIGKILL) }
            try await Task.sleep(for: .milliseconds(20))
        }
        return (process.terminationStatus, process.terminationReason == .uncaughtSignal)
    }

    var stdout: String { (try? String(contentsOf: stdoutURL, encoding: .utf8)) ?? "" }

    /// Standard error as written (through a terminal: as the terminal shows it).
    var stderr: String {
        if let terminal { return terminal.output() }
        return stderrURL.flatMap { try? String(contentsOf: $0, encoding: .utf8) } ?? ""
    }
}

/// A pseudo-terminal (openpty): the child writes to the replica side, for which isatty
/// is true; a thread drains the primary side until the child closes it.
final class PseudoTerminal: Sendable {
    let primary: Int32
    let replica: Int32
    private let received = Mutex(Data())
    private let done = DispatchSemaphore(value: 0)

    struct Failure: Error { var step: String }

    /// glibc's `openpty` (in libc since 2.34), looked up at run time: `<pty.h>` is not part of
    /// the Glibc module Swift imports.
    private typealias OpenPTY =
        @convention(c) (
            UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<Int32>?, UnsafeMutablePointer<CChar>?,
            UnsafeRawPointer?, UnsafeRawPointer?
        ) -> Int32

    init() throws {
        guard let symbol = dlsym(dlopen(nil, RTLD_NOW), "openpty") ?? dlsym(dlopen("libutil.so.1", RTLD_NOW), "openpty")
        else { throw Failure(step: "dlsym openpty") }
        let openpty = unsafeBitCast(symbol, to: OpenPTY.self)
        var descriptors: (primary: Int32, replica: Int32) = (-1, -1)
        guard openpty(&descriptors.primary, &descriptors.replica, nil, nil, nil) == 0 else {
            throw Failure(step: "openpty")
        }
        (primary, replica) = descriptors
        let primary = primary
        Thread.detachNewThread { [self] in
            var buffer = [UInt8](repeating: 0, count: 4096)
            while true {
                let count = read(primary, &buffer, buffer.count)
                // EIO once every replica descriptor is closed (the child exited).
                if count <= 0 { break }
                received.withLock { $0.append(contentsOf: buffer[0..<count]) }
            }
            done.signal()
        }
    }

    /// The parent's copy of the replica is closed once the child holds its own, so the primary
    /// side sees the end when the child exits.
    func childStarted() { close(replica) }

    /// Everything the child wrote, once it has exited (waits for the drain, at most 30 s).
    func output() -> String {
        _ = done.wait(timeout: .now() + 30)
        done.signal()
        return String(decoding: received.withLock { $0 }, as: UTF8.self)
    }

    deinit { close(primary) }
}
