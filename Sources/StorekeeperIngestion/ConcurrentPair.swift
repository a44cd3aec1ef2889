import Dispatch
import Foundation
import Synchronization

/// Two independent computations side by side: one on a thread of our own, the other on the
/// calling thread, which may use what only it may touch (the store's transaction).
///
/// For the store's writer thread, which is not a task: it blocks until the other half is done
/// (no suspension), so the second core works on a long history instead of waiting.
/// - Note: Stateless; `background` may touch shared state only behind a lock.
enum ConcurrentPair {
    /// `background()` and `here()`, both done before it returns (also when `here` throws), on
    /// two threads when `inParallel`, else one after the other on this one.
    static func run<Background: Sendable, Here>(
        inParallel: Bool, on threads: BackgroundThreads = .shared, background: @escaping @Sendable () -> Background,
        here: () throws -> Here
    ) rethrows -> (Background, Here) {
        guard inParallel else {
            let value = try here()
            return (background(), value)
        }
        let result = Mutex<Background?>(nil)
        let done = DispatchSemaphore(value: 0)
        threads.submit {
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

/// Long-lived threads that run nothing but `ConcurrentPair`'s background halves.
///
/// Not Dispatch's shared pool: it runs one thread per core for all its users, so other work
/// queued there could stand between a writer holding the database's write lock and the half it
/// waits for. Not a new queue per call either: that started a fresh thread each time, whose cold
/// memory arena cost more (2 ms of page faults per long evaluation) than the half saved.
/// - Note: Thread-safe: jobs sit behind a `Mutex`, counted by a semaphore.
final class BackgroundThreads: Sendable {
    private let jobs = Mutex<[@Sendable () -> Void]>([])
    private let waiting = DispatchSemaphore(value: 0)

    static let shared = BackgroundThreads(count: max(1, ProcessInfo.processInfo.activeProcessorCount))

    init(count: Int) {
        for index in 0..<count {
            let thread = Thread { [self] in
                while true {
                    waiting.wait()
                    let job = jobs.withLock { $0.removeFirst() }
                    #if canImport(ObjectiveC)
                        // These threads never exit: objects a job autoreleases go with its pool.
                        autoreleasepool { job() }
                    #else
                        job()
                    #endif
                }
            }
            thread.name = "storekeeper.ingestion.background.\(index)"
            // As the writers waiting for it: a semaphore lends no priority to the thread it waits on.
            thread.qualityOfService = .userInitiated
            thread.start()
        }
    }

    func submit(_ job: @escaping @Sendable () -> Void) {
        jobs.withLock { $0.append(job) }
        waiting.signal()
    }
}
