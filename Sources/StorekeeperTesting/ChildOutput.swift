import Foundation
import Synchronization

#if canImport(Glibc)
    import Glibc
#endif

/// What a child process writes to a pipe, gathered as it comes by a thread of its own that
/// blocks in `read(2)` until the pipe closes.
///
/// Not `FileHandle.readabilityHandler`: on Linux its dispatch source could outlive the
/// descriptor, and a crash test that starts and kills a child every few milliseconds saw
/// libdispatch's event loop crash on a descriptor reused meanwhile (a bad pointer in
/// `_dispatch_event_loop_drain`).
/// - Note: Thread-safe; the reading thread holds the handle until the pipe closes.
public final class ChildOutput: Sendable {
    private let state = Mutex((bytes: Data(), closed: false))

    /// Starts reading `handle` (the read end of the child's pipe; the parent's write end must
    /// be closed, as `Process.run()` does, or the pipe never closes).
    public init(_ handle: FileHandle) {
        let thread = Thread { [self] in
            let descriptor = handle.fileDescriptor
            var buffer = [UInt8](repeating: 0, count: 65_536)
            while true {
                let count = buffer.withUnsafeMutableBytes { read(descriptor, $0.baseAddress, $0.count) }
                if count < 0, errno == EINTR { continue }
                guard count > 0 else { break }
                state.withLock { $0.bytes.append(contentsOf: buffer[0..<count]) }
            }
            state.withLock { $0.closed = true }
            withExtendedLifetime(handle) {}
        }
        thread.name = "child-output"
        thread.start()
    }

    /// What has come so far.
    public var text: String { state.withLock { String(decoding: $0.bytes, as: UTF8.self) } }

    public func contains(_ part: String) -> Bool { text.contains(part) }

    /// Everything, once the child's end closed the pipe (or what came within `timeout`).
    public func all(timeout: Duration = .seconds(30)) async -> String {
        let deadline = ContinuousClock.now + timeout
        while true {
            let closed = state.withLock { $0.closed }
            if closed || ContinuousClock.now >= deadline { return text }
            try? await Task.sleep(for: .milliseconds(1))
        }
    }
}
