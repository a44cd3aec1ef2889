import Synchronization

/// A fixed set of connection workers handed out one caller at a time.
///
/// `withWorker` waits (without blocking a thread) until a worker is free. A waiting task is
/// not cancelled: it keeps its place until a worker is returned or the pool closes.
/// - Note: Thread-safe: the free list and the waiters sit behind a `Mutex`.
final class ConnectionPool: Sendable {
    private struct State {
        var idle: [ConnectionWorker]
        var waiters: [CheckedContinuation<ConnectionWorker?, Never>] = []
        var isClosed = false
    }

    let workers: [ConnectionWorker]
    private let state: Mutex<State>

    init(workers: [ConnectionWorker]) {
        self.workers = workers
        self.state = Mutex(State(idle: workers))
    }

    func withWorker<R: Sendable>(_ body: (ConnectionWorker) async throws -> R) async throws -> R {
        let worker = try await acquire()
        defer { release(worker) }
        return try await body(worker)
    }

    private func acquire() async throws(StoreError) -> ConnectionWorker {
        enum Next {
            case ready(ConnectionWorker)
            case wait
            case closed
        }
        let next: Next = state.withLock { state in
            if state.isClosed { return .closed }
            if let worker = state.idle.popLast() { return .ready(worker) }
            return .wait
        }
        switch next {
        case .ready(let worker): return worker
        case .closed: throw StoreError(.closed, "the store is closed")
        case .wait:
            let worker = await withCheckedContinuation {
                (continuation: CheckedContinuation<ConnectionWorker?, Never>) in
                let closed: Bool = state.withLock { state in
                    if state.isClosed { return true }
                    if let worker = state.idle.popLast() {
                        continuation.resume(returning: worker)
                        return false
                    }
                    state.waiters.append(continuation)
                    return false
                }
                if closed { continuation.resume(returning: nil) }
            }
            guard let worker else { throw StoreError(.closed, "the store is closed") }
            return worker
        }
    }

    private func release(_ worker: ConnectionWorker) {
        let waiter: CheckedContinuation<ConnectionWorker?, Never>? = state.withLock { state in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.idle.append(worker)
            return nil
        }
        waiter?.resume(returning: worker)
    }

    /// Refuses new callers, wakes the waiting ones with `closed`, and closes every connection.
    func close() async {
        let waiters = state.withLock { state in
            state.isClosed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters { waiter.resume(returning: nil) }
        for worker in workers { await worker.close() }
    }
}
