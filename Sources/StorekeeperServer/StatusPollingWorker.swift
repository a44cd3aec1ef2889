import AppStoreClient
import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion

/// The status polling loop: every `interval`, for every app whose `statusPolling` switch is on
/// and every environment it accepts, claims the watched subscriptions that are due
/// (`claimSubscriptionPolls`: past their expiry with nothing heard since, in billing retry, or
/// active and quiet too long) and polls them one after the other through
/// `SubscriptionStatusPolling`, whose App Store calls take their slots from the app's shared
/// rate limiter: a large sweep is spread at Apple's rate, not sent in a burst.
///
/// Many instances: a claim leases its rows (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so no
/// subscription is polled by two at once; a claim takes no more than the app's rate can poll in
/// half the lease, and what is left at three quarters of it is given back unpolled; a poll that fails keeps its lease for `retryDelay`,
/// and a server that dies mid-poll leaves the row to the next claim after the lease.
/// - Note: Thread-safe (immutable). Run one `run()` loop per process (rounds back to back while
///   any is due, else one every `interval`); `runOnce()` is one round.
public final class StatusPollingWorker: PeriodicWorker {
    /// Tunables of the loop.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        public var interval: Duration
        public var rules: SubscriptionPollRules
        /// Subscriptions claimed per app and environment per round.
        public var batchSize: Int
        public var leaseMilliseconds: Int64
        /// How long a failed poll waits before it may be claimed again.
        public var retryDelayMilliseconds: Int64

        public init(
            interval: Duration = .seconds(60),
            rules: SubscriptionPollRules = SubscriptionPollRules(
                expiryDelayMilliseconds: 3_600_000, billingRetryIntervalMilliseconds: 86_400_000,
                staleAfterMilliseconds: 7 * 86_400_000),
            batchSize: Int = 50, leaseMilliseconds: Int64 = 300_000, retryDelayMilliseconds: Int64 = 600_000
        ) {
            self.interval = interval
            self.rules = rules
            self.batchSize = max(1, batchSize)
            self.leaseMilliseconds = max(1000, leaseMilliseconds)
            self.retryDelayMilliseconds = max(1000, retryDelayMilliseconds)
        }
    }

    let ingestion: Ingestion
    let metrics: ServerMetrics
    let settings: Settings
    public let loop: WorkerLoop
    public let owner: String

    public init(
        ingestion: Ingestion, metrics: ServerMetrics, settings: Settings = Settings(),
        owner: String = APIKeys.identifier(prefix: "poll-")
    ) {
        (self.ingestion, self.metrics, self.settings, self.owner) = (ingestion, metrics, settings, owner)
        loop = WorkerLoop(clock: ingestion.clock, interval: settings.interval)
    }

    /// A round; the next follows at once while subscriptions were due, else after `interval`.
    public func round() async -> WorkerRound {
        await runOnce() == 0 ? .rest : .again
    }

    /// One round: claims and polls what is due for every app and environment; returns how many
    /// subscriptions it polled (0 when nothing was due or the store failed).
    @discardableResult
    public func runOnce() async -> Int {
        guard let records = try? await ingestion.store.read({ reader in try reader.apps() }) else { return 0 }
        var polled = 0
        for record in records.sorted(by: { $0.id < $1.id }) {
            if Task.isCancelled { break }
            guard let app = try? await ingestion.apps.runtime(appId: record.id), app.settings.runs(.statusPolling)
            else { continue }
            for environment in record.environments where environment == .production || environment == .sandbox {
                polled += await poll(app: app, environment: environment)
            }
        }
        return polled
    }

    /// How many subscriptions one claim may take so that polling them ends inside their lease:
    /// at most `configured`, and at most what the app's rate allows in half the lease (the
    /// limiter is shared with every other path of the app, and each poll also commits). At 3%
    /// of Sandbox's 5 requests a second, 50 polls would take 333 s, past a 300 s lease.
    static func batchSize(configured: Int, requestsPerSecond: Double, leaseMilliseconds: Int64) -> Int {
        let affordable = requestsPerSecond * Double(leaseMilliseconds) / 1000 / 2
        return max(1, min(configured, Int(affordable.rounded(.down))))
    }

    private func poll(app: AppRuntime, environment: AppStoreEnvironment) async -> Int {
        let (appId, owner, settings) = (app.id, self.owner, self.settings)
        let limit = Self.batchSize(
            configured: settings.batchSize,
            requestsPerSecond: ingestion.rateLimiters.limiter(appId: appId, environment: environment).limits.rate(
                of: .getAllSubscriptionStatuses),
            leaseMilliseconds: settings.leaseMilliseconds)
        // The rest of a batch is given back at three quarters of the lease (`LeasedBatch`): the
        // limiter may be slower than its rate when other paths of the app take slots too.
        let batch = LeasedBatch(
            store: ingestion.store, clock: ingestion.clock, leaseMilliseconds: settings.leaseMilliseconds,
            retryDelayMilliseconds: settings.retryDelayMilliseconds)
        let polled = await batch.run(
            claim: { transaction, now in
                try transaction.claimSubscriptionPolls(
                    appId: appId, environment: environment, rules: settings.rules, owner: owner, now: now,
                    leaseMilliseconds: settings.leaseMilliseconds, limit: limit)
            },
            work: { poll in
                do throws(IngestionError) {
                    let outcome = try await ingestion.recovery.polling.poll(
                        app: app, environment: environment, originalTransactionId: poll.originalTransactionId)
                    metrics.recordStatusPoll(outcome: outcome.rawValue)
                    return ingestion.clock.now()
                } catch {
                    metrics.recordStatusPoll(outcome: "failed")
                    ServerLog.event([
                        "event": "poll.failed", "appId": appId, "environment": environment.rawValue,
                        "code": error.code.rawValue,
                    ])
                    return nil
                }
            },
            finish: { transaction, poll, polledAt, retryAt in
                _ = try transaction.finishSubscriptionPoll(
                    appId: appId, environment: environment, originalTransactionId: poll.originalTransactionId,
                    owner: owner, polledAt: polledAt, retryAt: retryAt)
            })
        guard let polled else {
            metrics.recordStatusPoll(outcome: "store_error")
            return 0
        }
        return polled
    }
}
