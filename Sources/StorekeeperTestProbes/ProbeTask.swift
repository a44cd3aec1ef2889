import Dispatch
import Synchronization

/// The probes' one bridge from their synchronous entry point into async work: `body` runs on
/// the cooperative pool while the calling (main) thread waits for its result.
enum ProbeTask {
    static func wait<T: Sendable>(_ body: @escaping @Sendable () async throws -> T) -> Result<T, any Error> {
        let result = Mutex<Result<T, any Error>?>(nil)
        let done = DispatchSemaphore(value: 0)
        Task {
            let outcome: Result<T, any Error>
            do { outcome = .success(try await body()) } catch { outcome = .failure(error) }
            result.withLock { $0 = outcome }
            done.signal()
        }
        done.wait()
        // Set before the signal the wait returned on.
        return result.withLock { $0! }
    }
}
