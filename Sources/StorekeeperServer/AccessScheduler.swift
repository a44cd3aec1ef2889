import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion

/// The worker that commits changes of access made by time alone (`ScheduledChanges`): every
/// `pollInterval` (its resolution) it claims the customer states whose next scheduled change
/// has come and re-evaluates them, so an expiry or the end of a billing grace period gives its
/// event and webhook at that instant even when no notification arrives.
///
/// Many instances on one PostgreSQL may each run one: a claim locks the customers it takes and
/// skips those locked elsewhere, and event ids come from their cause, so no change is emitted
/// twice.
/// - Note: Thread-safe (immutable; the store is `Sendable`). Run one `run()` loop per process
///   (passes back to back while each fills a batch, else one every `pollInterval`);
///   `commitDue()` is one pass, for tests.
public final class AccessScheduler: PeriodicWorker {
    /// Tunables of the loop.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        /// Customer states per transaction.
        public var batchSize: Int
        /// How long the loop sleeps when nothing more is due.
        public var pollInterval: Duration
        /// How long a state that could not be re-evaluated waits before the next try.
        public var retryDelayMilliseconds: Int64

        public init(batchSize: Int = 64, pollInterval: Duration = .seconds(2), retryDelayMilliseconds: Int64 = 60_000) {
            self.batchSize = batchSize
            self.pollInterval = pollInterval
            self.retryDelayMilliseconds = retryDelayMilliseconds
        }
    }

    let store: any Store
    let clock: ServerClock
    let settings: Settings
    public let loop: WorkerLoop

    public init(store: any Store, clock: ServerClock, settings: Settings = Settings()) {
        self.store = store
        self.clock = clock
        self.settings = settings
        loop = WorkerLoop(clock: clock, interval: settings.pollInterval)
    }

    /// A pass; the next follows at once when it filled a whole batch (more may be due), else
    /// after `pollInterval`.
    public func round() async -> WorkerRound {
        await commitDue() < settings.batchSize ? .rest : .again
    }

    /// One pass at the clock's now; returns how many states it claimed (0 after a failure,
    /// which the next pass retries: nothing was committed).
    @discardableResult
    public func commitDue() async -> Int {
        do {
            let pass = try await ScheduledChanges.commitDue(
                in: store, now: clock.now(), limit: settings.batchSize,
                retryDelayMilliseconds: settings.retryDelayMilliseconds)
            if pass.failed > 0 {
                ServerLog.event(["event": "scheduler.reevaluationFailed", "count": String(pass.failed)])
            }
            return pass.reevaluated + pass.failed
        } catch {
            ServerLog.event(["event": "scheduler.passFailed", "code": error.code.rawValue])
            return 0
        }
    }
}
