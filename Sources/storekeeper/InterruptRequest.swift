import Foundation
import HTTPServer
import Synchronization

/// Ctrl-C (SIGINT) or SIGTERM during long work: the first asks the work to stop after the
/// items in progress (it polls `isRequested`); a second ends the process at once with 130,
/// which loses nothing committed (every item is its own transaction).
/// - Note: Thread-safe: the count is an `Atomic`.
final class InterruptRequest: Sendable {
    private let count = Atomic<Int>(0)
    private let handler = Mutex<ShutdownSignalHandler?>(nil)

    init(onFirst: @escaping @Sendable () -> Void = {}) {
        handler.withLock {
            $0 = ShutdownSignalHandler { [weak self] _ in
                guard let self else { return }
                let seen = self.count.add(1, ordering: .relaxed).newValue
                if seen == 1 {
                    onFirst()
                } else {
                    exit(130)
                }
            }
        }
    }

    var isRequested: Bool { count.load(ordering: .relaxed) > 0 }

    /// Stops listening (the signals are then ignored).
    func cancel() {
        handler.withLock {
            $0?.cancel()
            $0 = nil
        }
    }
}
