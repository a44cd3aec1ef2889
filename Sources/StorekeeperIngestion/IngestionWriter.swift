import Storage
import Synchronization

/// Commits `FactBatch`es: the only place ingestion writes facts. Each batch is all or nothing,
/// and its caller hears back only after the transaction holding it is durable.
///
/// Group commit: batches that arrive while a commit is in flight wait in a queue; the next
/// transaction takes all of them (up to `maximumGroupSize`), so many ingestions share one
/// durable `COMMIT` (one fsync on SQLite), while a batch that fails is undone alone and
/// answered with its own error: its neighbours commit. A group is first written without
/// savepoints; only when one of its batches fails is that transaction rolled back and the
/// group written again with each batch in its own savepoint. (A savepoint makes SQLite keep a
/// copy of every page its batch changes, ~25 pages a notification, which it wrote to a
/// temporary file on the single writer's thread; PostgreSQL pays two statements a batch.)
/// Batches of one customer keep their arrival order within a group. On PostgreSQL a few
/// groups may be in flight at once (`concurrentGroups`); their customers' row locks serialize
/// what they share.
/// - Note: Thread-safe: the queue sits behind a `Mutex`; any number of tasks commit concurrently.
public final class IngestionWriter: Sendable {
    /// How batches are grouped.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable, Hashable {
        /// The most batches one transaction holds.
        public var maximumGroupSize: Int
        /// Transactions in flight at once (1 on SQLite: it has one writer anyway).
        public var concurrentGroups: Int
        /// A batch that failed with a retryable store error (deadlock, lost connection) joins a
        /// later group at most this many times before its caller hears the error.
        public var retries: Int

        public init(maximumGroupSize: Int = 64, concurrentGroups: Int = 1, retries: Int = 2) {
            self.maximumGroupSize = max(1, maximumGroupSize)
            self.concurrentGroups = max(1, concurrentGroups)
            self.retries = max(0, retries)
        }

        /// Defaults for the store's engine.
        public static func `default`(for engine: StoreEngine) -> Settings {
            switch engine {
            case .sqlite: Settings(concurrentGroups: 1)
            // Deadlocks between concurrent groups are retried: with several instances taking
            // the same notification at once, two or three in a row happen under load.
            case .postgres: Settings(concurrentGroups: 4, retries: 4)
            }
        }
    }

    /// Counters since start: how well grouping works (`batches / groups`).
    /// - Note: Immutable value; `Sendable`.
    public struct Statistics: Sendable, Hashable {
        /// Distinct ingestions taken into a group: a retried one counts once, here.
        public var batches = 0
        /// Ingestions taken again after a retryable failure (a conflict with a concurrent
        /// group on PostgreSQL): in their savepoint, or as the only batch of their group.
        public var retries = 0
        public var groups = 0
        public var largestGroup = 0
        /// Groups written a second time, each batch in a savepoint, after one of their batches
        /// failed in the first transaction (retryable failures included: in the second, the
        /// batch that conflicts is queued again alone).
        public var isolatedGroups = 0
    }

    /// What one batch's savepoint ended in.
    private enum Attempt: Sendable {
        case committed(FactCommit)
        case failed(IngestionError, retryable: Bool)
    }

    /// Thrown out of a group's first transaction when one of its batches fails, so that the
    /// transaction rolls back (never retried as such) and the group is written again in
    /// savepoints, where that batch's own error is found and answered; a group of one batch
    /// is answered with `error` at once.
    private struct BatchFailed: Error {
        var error: any Error
    }

    private struct Pending: Sendable {
        var batch: FactBatch
        var operation: String
        var attempts: Int
        /// Called once, with the batch's answer.
        var complete: @Sendable (Result<FactCommit, IngestionError>) -> Void
    }

    private struct State {
        var queue: [Pending] = []
        var running = 0
        var statistics = Statistics()
    }

    public let store: any Store
    let metrics: any IngestionMetrics
    public let settings: Settings
    private let state = Mutex(State())

    public init(
        store: any Store, metrics: any IngestionMetrics = DiscardingIngestionMetrics(), settings: Settings? = nil
    ) {
        self.store = store
        self.metrics = metrics
        self.settings = settings ?? .default(for: store.engine)
    }

    public var statistics: Statistics { state.withLock { $0.statistics } }

    /// Commits `batch` with whatever else is waiting and returns what it did, once durable.
    /// `operation` names the store latency metric.
    public func commit(_ batch: FactBatch, operation: String) async throws(IngestionError) -> FactCommit {
        let result = await withCheckedContinuation { continuation in
            enqueue([
                Pending(batch: batch, operation: operation, attempts: 0) { continuation.resume(returning: $0) }
            ])
        }
        return try result.get()
    }

    /// Commits `batches` together (queued at once, so they share a transaction when the group
    /// size allows), each all or nothing: the answer for each, in order. For sources that
    /// hold many facts at once, such as a page of notification history.
    public func commit(_ batches: [FactBatch], operation: String) async -> [Result<FactCommit, IngestionError>] {
        guard !batches.isEmpty else { return [] }
        return await withCheckedContinuation { continuation in
            let collector = ResultCollector(count: batches.count) { continuation.resume(returning: $0) }
            enqueue(
                batches.enumerated().map { index, batch in
                    Pending(batch: batch, operation: operation, attempts: 0) { collector.set(index, $0) }
                })
        }
    }

    // MARK: The queue

    private func enqueue(_ pending: [Pending]) {
        let start = state.withLock { state -> Bool in
            state.queue += pending
            guard state.running < settings.concurrentGroups else { return false }
            state.running += 1
            return true
        }
        if start { Task { await self.drain() } }
    }

    /// Takes groups off the queue until it is empty.
    private func drain() async {
        while true {
            let group = state.withLock { state -> [Pending]? in
                guard !state.queue.isEmpty else {
                    state.running -= 1
                    return nil
                }
                let count = min(state.queue.count, settings.maximumGroupSize)
                let group = Array(state.queue.prefix(count))
                state.queue.removeFirst(count)
                let retried = group.count { $0.attempts > 0 }
                state.statistics.batches += count - retried
                state.statistics.retries += retried
                state.statistics.groups += 1
                state.statistics.largestGroup = max(state.statistics.largestGroup, count)
                return group
            }
            guard let group else { return }
            await run(group)
        }
    }

    /// One transaction for `group`; then every caller is answered (or requeued to retry).
    private func run(_ group: [Pending]) async {
        let batches = group.map(\.batch)
        let started = ContinuousClock.now
        let attempts: [Attempt]
        do {
            do {
                attempts = try await store.write(retries: Self.transactionRetries) { transaction in
                    try Self.applyTogether(batches, in: transaction)
                }
            } catch let failed as BatchFailed {
                if batches.count == 1 {
                    attempts = [Self.failure(failed.error)]
                } else {
                    state.withLock { $0.statistics.isolatedGroups += 1 }
                    attempts = try await store.write(retries: Self.transactionRetries) { transaction in
                        try Self.apply(batches, in: transaction)
                    }
                }
            }
        } catch {
            let failure = IngestionError.store(error)
            record(group, since: started)
            for pending in group { pending.complete(.failure(failure)) }
            return
        }
        record(group, since: started)
        var again: [Pending] = []
        for (pending, attempt) in zip(group, attempts) {
            switch attempt {
            case .committed(let commit):
                pending.complete(.success(commit))
            case .failed(let error, let retryable):
                if retryable && pending.attempts < settings.retries {
                    var retry = pending
                    retry.attempts += 1
                    again.append(retry)
                } else {
                    pending.complete(.failure(error))
                }
            }
        }
        if !again.isEmpty {
            // A retryable failure is a conflict with a concurrent transaction (a deadlock between
            // groups on PostgreSQL, where duplicate deliveries through several instances wait on
            // each other's rows): joining the next group at once tends to meet the same partner
            // again. A short random wait spreads the retries apart.
            let wait = Self.retryWait(attempt: again.map(\.attempts).max() ?? 1)
            Task {
                try? await Task.sleep(for: wait)
                self.enqueue(again)
            }
        }
    }

    /// How many times a group's transaction is run again at once after a retryable failure of
    /// the transaction itself (a lost connection): a batch's own conflicts are retried through
    /// the queue instead (`Settings.retries`), after a wait.
    static let transactionRetries = 2

    /// Before the `attempt`th retry: 5–25 ms times the attempt, at random.
    static func retryWait(attempt: Int) -> Duration {
        .milliseconds(Int.random(in: 5...25) * max(1, attempt))
    }

    /// Every batch in the transaction itself: the group's first try, which commits when none
    /// fails (nearly always). The first failure throws `BatchFailed`.
    private static func applyTogether(_ batches: [FactBatch], in transaction: any StoreTransaction) throws
        -> [Attempt]
    {
        try batches.map { batch in
            do {
                return .committed(try FactCommitter.commit(batch, in: transaction))
            } catch {
                throw BatchFailed(error: error)
            }
        }
    }

    private static func failure(_ error: any Error) -> Attempt {
        .failed(IngestionError.store(error), retryable: (error as? StoreError)?.isRetryable ?? false)
    }

    /// Each batch in its own savepoint. After a failed one, the transaction must still be open:
    /// if the savepoint could not be restored (PostgreSQL would then turn `COMMIT` into a
    /// rollback) or the database rolled everything back on its own (SQLite, after some I/O and
    /// memory errors; its connection then refuses the next batch's statements), the whole group
    /// fails at once instead of being acknowledged.
    private static func apply(_ batches: [FactBatch], in transaction: any StoreTransaction) throws -> [Attempt] {
        var attempts: [Attempt] = []
        attempts.reserveCapacity(batches.count)
        for batch in batches {
            do {
                let commit = try transaction.withSavepoint { try FactCommitter.commit(batch, in: transaction) }
                attempts.append(.committed(commit))
            } catch {
                attempts.append(failure(error))
                try transaction.requireOpen()
            }
        }
        return attempts
    }

    private func record(_ group: [Pending], since started: ContinuousClock.Instant) {
        for pending in group { metrics.recordDatabase(operation: pending.operation, since: started) }
    }
}

/// Gathers the answers of a multi-batch commit and hands them over once all are in.
/// - Note: Thread-safe: the answers sit behind a `Mutex`.
private final class ResultCollector: Sendable {
    private let results: Mutex<(answers: [Result<FactCommit, IngestionError>?], missing: Int)>
    private let done: @Sendable ([Result<FactCommit, IngestionError>]) -> Void

    init(count: Int, done: @escaping @Sendable ([Result<FactCommit, IngestionError>]) -> Void) {
        results = Mutex((Array(repeating: nil, count: count), count))
        self.done = done
    }

    func set(_ index: Int, _ result: Result<FactCommit, IngestionError>) {
        let finished = results.withLock { state -> [Result<FactCommit, IngestionError>]? in
            state.answers[index] = result
            state.missing -= 1
            return state.missing == 0 ? state.answers.map { $0! } : nil
        }
        if let finished { done(finished) }
    }
}
