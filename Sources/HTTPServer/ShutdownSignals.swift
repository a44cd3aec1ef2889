import Dispatch
import Foundation

/// Signals whose disposition this module has already set.
private let signalsPrepared = Locked<Set<Int32>>([])

/// Turns SIGTERM/SIGINT (or any signals given) into a call of a shutdown closure.
///
/// A `DispatchSource` per signal calls `action` on a private serial queue, outside
/// signal-handler context, so `action` may do anything (start a `Task` that awaits
/// `HTTPServer.stop()`, log, …). Every delivery calls `action`; keep the object alive as long
/// as handling is wanted, and `cancel()` to stop. The first time a signal is handled in the
/// process its disposition is set to `SIG_IGN` (so the default action cannot kill the process
/// before the source is registered); after that, libdispatch's own handler, installed when
/// the source registers, forwards it to the source. Registration completes asynchronously, so
/// a signal arriving within microseconds of `init` may be ignored, like any signal sent before
/// a handler exists.
/// - Note: Thread-safe; `action` runs serially on one private queue.
public final class ShutdownSignalHandler: Sendable {
    // @unchecked Sendable is safe: `sources` is a `let` array set once in init; the only
    // operation performed on the sources afterwards is `cancel()`, which libdispatch documents
    // as thread-safe.
    private struct Sources: @unchecked Sendable {
        let sources: [any DispatchSourceSignal]
    }

    private let sources: Sources

    public init(
        signals: [Int32] = [SIGTERM, SIGINT],
        action: @escaping @Sendable (Int32) -> Void
    ) {
        let queue = DispatchQueue(label: "HTTPServer.ShutdownSignalHandler")
        var sources: [any DispatchSourceSignal] = []
        for signalNumber in signals {
            // Only once per signal: setting SIG_IGN again would replace libdispatch's handler
            // (which it installs only for the first source of a signal) and lose the signal.
            let first = signalsPrepared.withLock { $0.insert(signalNumber).inserted }
            if first { signal(signalNumber, SIG_IGN) }
            let source = DispatchSource.makeSignalSource(signal: signalNumber, queue: queue)
            source.setEventHandler { action(signalNumber) }
            source.resume()
            sources.append(source)
        }
        self.sources = Sources(sources: sources)
    }

    /// Stops calling `action`.
    public func cancel() {
        for source in sources.sources { source.cancel() }
    }

    deinit {
        cancel()
    }
}
