import Dispatch
import Synchronization

/// A fixed set of connection workers handed out one caller at a time.
///
/// `withWorker` waits (without blocking a thread) until a worker is free. A waiting task is
/// not cancelled: it keeps its place until a worker is returned or the pool closes.
/// - Note: Thread-safe: the free list and the waiters sit behind a `Mutex`.
final class ConnectionPool: Sendable {
    /// A caller waiting for a worker: a task (resumed) or a thread (woken).
    private enum Waiter {
        case task(CheckedContinuation<ConnectionWorker?, Never>)
        case thread(BlockingHandOff)
    }

    private struct State {
        var idle: [ConnectionWorker]
        var waiters: [Waiter] = []
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
                    state.waiters.append(.task(continuation))
                    return false
                }
                if closed { continuation.resume(returning: nil) }
            }
            guard let worker else { throw StoreError(.closed, "the store is closed") }
            return worker
        }
    }

    /// `withWorker` for a thread that may block (an HTTP server thread, never the cooperative
    /// pool): waits on a semaphore for a free worker and runs `body` on the calling thread.
    func withWorkerBlocking<R>(_ body: (ConnectionWorker) throws -> R) throws -> R {
        // An idle worker is taken at once; only a caller that must wait gets a hand-off (a
        // semaphore made, signalled and waited on for every read was 1% of a GET).
        let taken: (idle: ConnectionWorker?, handOff: BlockingHandOff?) = try state.withLock {
            state throws(StoreError) in
            if state.isClosed { throw StoreError(.closed, "the store is closed") }
            if let worker = state.idle.popLast() { return (worker, nil) }
            let handOff = BlockingHandOff()
            state.waiters.append(.thread(handOff))
            return (nil, handOff)
        }
        guard let worker = taken.idle ?? taken.handOff?.take() else {
            throw StoreError(.closed, "the store is closed")
        }
        defer { release(worker) }
        return try body(worker)
    }

    private func release(_ worker: ConnectionWorker) {
        let waiter: Waiter? = state.withLock { state in
            if !state.waiters.isEmpty { return state.waiters.removeFirst() }
            state.idle.append(worker)
            return nil
        }
        switch waiter {
        case .task(let continuation)?: continuation.resume(returning: worker)
        case .thread(let handOff)?: handOff.give(worker)
        case nil: break
        }
    }

    /// Refuses new callers, wakes the waiting ones with `closed`, and closes every connection.
    func close() async {
        let waiters = state.withLock { state in
            state.isClosed = true
            defer { state.waiters = [] }
            return state.waiters
        }
        for waiter in waiters {
            switch waiter {
            case .task(let continuation): continuation.resume(returning: nil)
            case .thread(let handOff): handOff.give(nil)
            }
        }
        for worker in workers { await worker.close() }
    }
}

/// One worker handed from a releasing caller to a blocked thread.
/// - Note: Thread-safe: the worker sits behind a `Mutex`; the semaphore orders give before take.
final class BlockingHandOff: Sendable {
    private let worker: Mutex<ConnectionWorker?>
    private let signal: DispatchSemaphore

    init() {
        worker = Mutex(nil)
        // Created at 0: libdispatch traps when a semaphore is freed below its initial value.
        signal = DispatchSemaphore(value: 0)
    }

    func give(_ worker: ConnectionWorker?) {
        self.worker.withLock { $0 = worker }
        signal.signal()
    }

    /// Blocks until a worker (or `nil`: the pool closed) was given.
    func take() -> ConnectionWorker? {
        signal.wait()
        return worker.withLock { $0 }
    }
}
