import AppStoreModels
import Foundation
import Storage

/// The `analytics_rebuild` job: recomputes an app's analytics aggregates after a change of its
/// commission terms (docs/analytics.md), queued by the analytics-settings `PUT` instead of
/// running inside the request.
///
/// One transaction per batch of customers (ascending ids, `batchSize` each), as
/// `AnalyticsAggregation.rebuild` does, so ingestion waits at most a batch. Each begins by
/// renewing the job's lease (the job row is locked until it commits, on PostgreSQL) and then
/// records how far the rebuild got in the same commit. So:
/// - a run whose instance died leaves a consistent position; once its lease runs out another
///   instance's worker claims the job and goes on from there;
/// - a later change of the terms supersedes the rebuild and finishes its job in the `PUT`'s
///   transaction: the run finds its lease gone at its next batch and stops, and the new rebuild,
///   reading the new terms, recomputes every customer. A batch that had renewed the lease first
///   holds the job row, so the `PUT` waits for that batch, which used the terms committed before.
/// The last transaction reconciles the rows with the stored contributions and completes the
/// rebuild and its job together.
/// - Note: Immutable and `Sendable`; runs concurrently for different apps (one unfinished
///   rebuild per app exists at a time).
public struct AnalyticsRebuildJob: JobHandler {
    public var kind: String { AnalyticsRebuildRecord.jobKind }

    let store: any Store
    let clock: ServerClock
    let leaseMilliseconds: Int64
    let batchSize: Int
    /// Called after each committed batch and at the end, with the rebuild as stored then.
    let afterBatch: @Sendable (AnalyticsRebuildRecord) async -> Void

    /// - Parameters:
    ///   - leaseMilliseconds: the job worker's lease; each batch renews it for this long.
    ///   - afterBatch: progress (tests use it to stop a run between two batches).
    public init(
        store: any Store, clock: ServerClock, leaseMilliseconds: Int64,
        batchSize: Int = AnalyticsAggregation.rebuildBatchSize,
        afterBatch: @escaping @Sendable (AnalyticsRebuildRecord) async -> Void = { _ in }
    ) {
        self.store = store
        self.clock = clock
        self.leaseMilliseconds = max(1000, leaseMilliseconds)
        self.batchSize = max(1, batchSize)
        self.afterBatch = afterBatch
    }

    /// What one transaction of a run did.
    private enum Step: Sendable {
        case batch(AnalyticsRebuildRecord)
        case completed(AnalyticsRebuildRecord)
        /// A later rebuild superseded this one (its job is finished).
        case superseded
        /// The lease ran out and another worker holds the job now.
        case leaseLost
    }

    public func run(_ job: JobRecord, lease: JobLease) async -> JobOutcome {
        guard
            let payload = try? AppStoreJSON.decode(AnalyticsRebuildJobPayload.self, from: Data(job.payload.utf8)),
            payload.appId == job.appId
        else { return .failed("unreadable analytics rebuild payload") }
        var first = true
        while true {
            // A worker stopping mid-run keeps the lease; the next claim goes on from the position.
            if Task.isCancelled { return .retry("stopped") }
            let now = clock.now()
            let (starts, size, until) = (first, batchSize, now.adding(milliseconds: leaseMilliseconds))
            let step: Step
            do {
                // Retried: on PostgreSQL a group commit holding one of these customers while it
                // waits for a daily row this batch changed is a deadlock, either side may be aborted.
                step = try await store.write(retries: 3) { transaction in
                    try Self.step(
                        payload, lease: lease, starts: starts, batchSize: size, leaseUntil: until, now: now,
                        in: transaction)
                }
            } catch let error as StoreError {
                return .retry("store: \(error.code.rawValue)")
            } catch {
                return .retry("analytics rebuild failed")
            }
            first = false
            switch step {
            case .batch(let record):
                await afterBatch(record)
            case .completed(let record):
                await afterBatch(record)
                return .completed
            case .superseded:
                return .completed
            case .leaseLost:
                return .retry("lease lost")
            }
        }
    }

    private static func step(
        _ payload: AnalyticsRebuildJobPayload, lease: JobLease, starts: Bool, batchSize: Int, leaseUntil: Timestamp,
        now: Timestamp, in transaction: any StoreTransaction
    ) throws -> Step {
        let (appId, id) = (payload.appId, payload.rebuildId)
        // First, and before the terms are read: a supersede that committed is seen here.
        guard try transaction.renewJobLease(id: lease.jobId, owner: lease.owner, until: leaseUntil) else {
            let rebuild = try transaction.analyticsRebuild(appId: appId, id: id)
            return rebuild?.status == .superseded ? .superseded : .leaseLost
        }
        // A run's first transaction marks it running and counts what is left to do.
        let current =
            try starts
            ? transaction.startAnalyticsRebuildRun(id: id, at: now) : transaction.analyticsRebuild(appId: appId, id: id)
        guard let rebuild = current, rebuild.status == .running else {
            // Finished without its job (never by this code): finish the job too.
            _ = try transaction.completeJob(id: lease.jobId, owner: lease.owner, at: now)
            return .superseded
        }
        let customers = try transaction.customerIds(appId: appId, after: rebuild.afterCustomerId, limit: batchSize)
        guard let last = customers.last else {
            let repaired =
                try transaction.reconcileAnalyticsDaily(appId: appId)
                + transaction.reconcileAnalyticsCohorts(appId: appId)
            try transaction.completeAnalyticsRebuild(id: id, rowsRepaired: repaired, at: now)
            _ = try transaction.completeJob(id: lease.jobId, owner: lease.owner, at: now)
            return .completed(try transaction.analyticsRebuild(appId: appId, id: id) ?? rebuild)
        }
        let changed = try AnalyticsAggregation.recompute(customers: customers, appId: appId, in: transaction, now: now)
        try transaction.advanceAnalyticsRebuild(
            id: id, afterCustomerId: last, customers: customers.count, changed: changed)
        return .batch(try transaction.analyticsRebuild(appId: appId, id: id) ?? rebuild)
    }
}
