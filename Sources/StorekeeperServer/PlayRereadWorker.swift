import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion

/// The Play re-read loop: every `interval`, for every app with a Play side (a service-account
/// key) whose `playReread` switch is on, claims the watched subscription tokens that are due
/// (`claimPlayRereads`: read with access but past their expiry plus a delay with nothing read
/// since, or in grace, on hold or paused with nothing read for a while) and re-reads them one
/// after the other through `PlaySubscriptionReread`.
///
/// Many instances: a claim leases its rows (`FOR UPDATE SKIP LOCKED` on PostgreSQL), so no
/// token is re-read by two at once; a re-read that fails keeps its lease for `retryDelay`, and a
/// server that dies mid-claim leaves its rows to the next claim after the lease; what is left
/// unread at three quarters of the lease is given back.
/// - Note: Thread-safe (immutable). Run one `run()` loop per process (rounds back to back while
///   any is due, else one every `interval`); `runOnce()` is one round.
public final class PlayRereadWorker: PeriodicWorker {
    /// Tunables of the loop.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        public var interval: Duration
        public var rules: PlayRereadRules
        /// Tokens claimed per app per round.
        public var batchSize: Int
        public var leaseMilliseconds: Int64
        /// How long a failed re-read waits before it may be claimed again.
        public var retryDelayMilliseconds: Int64

        public init(
            interval: Duration = .seconds(60),
            rules: PlayRereadRules = PlayRereadRules(
                expiryDelayMilliseconds: 3_600_000, pendingIntervalMilliseconds: 86_400_000),
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
        owner: String = APIKeys.identifier(prefix: "reread-")
    ) {
        (self.ingestion, self.metrics, self.settings, self.owner) = (ingestion, metrics, settings, owner)
        loop = WorkerLoop(clock: ingestion.clock, interval: settings.interval)
    }

    /// A round; the next follows at once while tokens were due, else after `interval`.
    public func round() async -> WorkerRound {
        await runOnce() == 0 ? .rest : .again
    }

    /// One round: claims and re-reads what is due for every app; returns how many tokens it
    /// re-read (0 when nothing was due or the store failed).
    @discardableResult
    public func runOnce() async -> Int {
        var count = 0
        for (_, runtime) in await PlayWorkerApps.running(.playReread, in: ingestion) {
            if Task.isCancelled { break }
            count += await reread(runtime)
        }
        return count
    }

    private func reread(_ runtime: PlayRuntime) async -> Int {
        let (appId, owner, settings) = (runtime.appId, self.owner, self.settings)
        let batch = LeasedBatch(
            store: ingestion.store, clock: ingestion.clock, leaseMilliseconds: settings.leaseMilliseconds,
            retryDelayMilliseconds: settings.retryDelayMilliseconds)
        let reread = await batch.run(
            claim: { transaction, now in
                try transaction.claimPlayRereads(
                    appId: appId, rules: settings.rules, owner: owner, now: now,
                    leaseMilliseconds: settings.leaseMilliseconds, limit: settings.batchSize)
            },
            work: { watch in
                do throws(IngestionError) {
                    let outcome = try await ingestion.googlePlay.reread.reread(
                        runtime: runtime, purchaseToken: watch.purchaseToken)
                    metrics.recordPlayReread(outcome: outcome.rawValue)
                    return ingestion.clock.now()
                } catch {
                    // A token Google no longer knows, or a purchase of an environment the app does
                    // not accept, will answer the same again: recorded as re-read, not retried.
                    let final = error.code == .transactionNotFound || error.code == .environmentNotAccepted
                    metrics.recordPlayReread(
                        outcome: error.code == .transactionNotFound ? "not_found" : final ? "refused" : "failed")
                    ServerLog.event(["event": "reread.failed", "appId": appId, "code": error.code.rawValue])
                    return final ? ingestion.clock.now() : nil
                }
            },
            finish: { transaction, watch, rereadAt, retryAt in
                _ = try transaction.finishPlayReread(
                    appId: appId, purchaseToken: watch.purchaseToken, owner: owner, rereadAt: rereadAt,
                    retryAt: retryAt)
            })
        guard let reread else {
            metrics.recordPlayReread(outcome: "store_error")
            return 0
        }
        return reread
    }
}
