import Dispatch
import Synchronization

/// Two independent computations side by side: one on a Dispatch worker, the other on the
/// calling thread, which may use what only it may touch (the store's transaction).
///
/// For the store's writer thread, which is not a task: it blocks until the worker is done (no
/// suspension), so the second core works on a long history instead of waiting.
/// - Note: Stateless; `background` must not touch shared mutable state.
enum ConcurrentPair {
    /// A queue of our own rather than a global one: it is served by threads of its own, so a
    /// busy task pool can never keep the blocked writer waiting for its worker.
    private static let queue = DispatchQueue(
        label: "storekeeper.ingestion.background", qos: .userInitiated, attributes: .concurrent)

    /// `background()` and `here()`, both done before it returns (also when `here` throws), on
    /// two threads when `inParallel`, else one after the other on this one.
    static func run<Background: Sendable, Here>(
        inParallel: Bool, background: @escaping @Sendable () -> Background, here: () throws -> Here
    ) rethrows -> (Background, Here) {
        guard inParallel else {
            let value = try here()
            return (background(), value)
        }
        let result = Mutex<Background?>(nil)
        let done = DispatchSemaphore(value: 0)
        queue.async {
            let value = background()
            result.withLock { $0 = value }
            done.signal()
        }
        let value: Here
        do {
            value = try here()
        } catch {
            done.wait()
            throw error
        }
        done.wait()
        return (result.withLock { $0! }, value)
    }
}
