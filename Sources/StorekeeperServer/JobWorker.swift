import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion

/// Runs the durable `jobs` queue: claims due jobs of every kind it has a handler for (leased,
/// so several workers and several server instances share the work, `FOR UPDATE SKIP LOCKED` on
/// PostgreSQL), runs each through its `JobHandler`, and reschedules what did not complete.
///
/// Rescheduling: exponential backoff from `initialBackoffMilliseconds`, doubling to
/// `maxBackoffMilliseconds`, ± `jitter`. A job that is `retry` (Apple unavailable, a lost race)
/// is tried up to `maxAttempts` times (about three days with the defaults); one that is
/// `refused` (Apple answered 4xx, its data failed verification) up to `maxRefusedAttempts`
/// times, in case Apple had not caught up yet; one that `failed` is not tried again. A job given
/// up on keeps its last error in its row and is recorded in the audit log as
/// `<kind>.failed`. A worker that dies mid-job loses nothing: the lease expires and the job is
/// claimed again.
/// - Note: Thread-safe (immutable; the store and handlers are `Sendable`). Run one `run()` loop
///   per process (rounds back to back while jobs are due, else one every `pollInterval`);
///   `runDue()` is one round, for tests.
public final class JobWorker: PeriodicWorker {
    /// Tunables of the job loop.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        /// Jobs of one kind claimed per round.
        public var batchSize: Int
        /// Longer than a job may run (a completion makes a few App Store calls, each retried).
        public var leaseMilliseconds: Int64
        public var pollInterval: Duration
        public var initialBackoffMilliseconds: Int64
        public var maxBackoffMilliseconds: Int64
        public var maxAttempts: Int
        public var maxRefusedAttempts: Int
        /// ±fraction of each backoff, drawn from `random`.
        public var jitter: Double
        public var random: @Sendable () -> Double

        public init(
            batchSize: Int = 8, leaseMilliseconds: Int64 = 300_000, pollInterval: Duration = .seconds(1),
            initialBackoffMilliseconds: Int64 = 30_000, maxBackoffMilliseconds: Int64 = 3_600_000,
            maxAttempts: Int = 80, maxRefusedAttempts: Int = 3, jitter: Double = 0.2,
            random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
        ) {
            self.batchSize = max(1, batchSize)
            self.leaseMilliseconds = max(1000, leaseMilliseconds)
            self.pollInterval = pollInterval
            self.initialBackoffMilliseconds = max(1, initialBackoffMilliseconds)
            self.maxBackoffMilliseconds = max(1, maxBackoffMilliseconds)
            self.maxAttempts = max(1, maxAttempts)
            self.maxRefusedAttempts = max(1, maxRefusedAttempts)
            self.jitter = min(max(jitter, 0), 1)
            self.random = random
        }
    }

    /// The audit action recorded when a job of `kind` is given up on.
    public static func failedAction(kind: String) -> String { "\(kind).failed" }

    let store: any Store
    let clock: ServerClock
    let metrics: ServerMetrics
    let settings: Settings
    let handlers: [any JobHandler]
    /// The lease owner this worker claims jobs as.
    public let owner: String
    public let loop: WorkerLoop
    /// When a job that did not complete is tried again.
    let retryBackoff: RetryBackoff

    public init(
        store: any Store, handlers: [any JobHandler], clock: ServerClock, metrics: ServerMetrics,
        settings: Settings = Settings(), owner: String = APIKeys.identifier(prefix: "jobs-")
    ) {
        self.store = store
        self.handlers = handlers
        self.clock = clock
        self.metrics = metrics
        self.settings = settings
        self.owner = owner
        loop = WorkerLoop(clock: clock, interval: settings.pollInterval)
        retryBackoff = RetryBackoff(
            initialMilliseconds: settings.initialBackoffMilliseconds, maxMilliseconds: settings.maxBackoffMilliseconds,
            jitter: settings.jitter, random: settings.random)
    }

    /// A round; the next follows at once while jobs were due, else after `pollInterval`.
    public func round() async -> WorkerRound {
        await runDue() == 0 ? .rest : .again
    }

    /// One round: for each kind, claim what is due, run it, record the outcomes. Returns the
    /// number of jobs claimed (0 when nothing was due or the store failed).
    @discardableResult
    public func runDue() async -> Int {
        var claimedTotal = 0
        for handler in handlers {
            let now = clock.now()
            let (owner, settings, kind) = (self.owner, self.settings, handler.kind)
            let claimed: [JobRecord]
            do {
                claimed = try await store.write { transaction in
                    try transaction.claimJobs(
                        kind: kind, owner: owner, now: now, leaseMilliseconds: settings.leaseMilliseconds,
                        limit: settings.batchSize)
                }
            } catch {
                metrics.recordJob(kind: kind, outcome: "store_error")
                continue
            }
            claimedTotal += claimed.count
            await withTaskGroup(of: Void.self) { group in
                for job in claimed {
                    group.addTask {
                        let outcome = await handler.run(job, lease: JobLease(jobId: job.id, owner: owner))
                        // Stopping mid-job is not the job's failure: leave it leased, and it is
                        // claimed again when the lease expires, with no attempt spent as refused.
                        if Task.isCancelled { return }
                        await self.record(outcome, of: job)
                    }
                }
            }
        }
        return claimedTotal
    }

    private func record(_ outcome: JobOutcome, of job: JobRecord) async {
        let reason: String
        let limit: Int
        switch outcome {
        case .completed:
            metrics.recordJob(kind: job.kind, outcome: "completed")
            return
        case .retry(let why):
            (reason, limit) = (why, settings.maxAttempts)
        case .refused(let why):
            (reason, limit) = (why, settings.maxRefusedAttempts)
        case .failed(let why):
            (reason, limit) = (why, 0)
        }
        let now = clock.now()
        let giveUp = job.attempts >= limit
        let retryAt = giveUp ? nil : now.adding(milliseconds: retryBackoff.milliseconds(attempt: job.attempts))
        let owner = self.owner
        let bounded = String(reason.prefix(1000))
        metrics.recordJob(kind: job.kind, outcome: giveUp ? "failed" : "retried")
        _ = try? await store.write { transaction in
            let marked = try transaction.failJob(id: job.id, owner: owner, error: bounded, retryAt: retryAt, at: now)
            if marked && giveUp {
                try transaction.appendAudit(
                    NewAuditEntry(
                        at: now, actor: "job-worker", action: JobWorker.failedAction(kind: job.kind),
                        appId: JobWorker.appId(of: job),
                        detail: .object([
                            "jobId": .integer(job.id), "attempts": .integer(Int64(job.attempts)),
                            "error": .string(bounded),
                        ])))
            }
            return marked
        }
    }

    /// The `appId` member of the job's payload, which every job kind carries, for the audit
    /// entry (so an app's audit view shows its failed jobs).
    static func appId(of job: JobRecord) -> String? {
        guard case .object(let fields)? = try? AppStoreJSON.decode(JSONValue.self, from: Data(job.payload.utf8)),
            case .string(let appId)? = fields["appId"]
        else { return nil }
        return appId
    }

}
