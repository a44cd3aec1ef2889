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
/// - Note: Thread-safe (immutable; the store is `Sendable`). Run one `run()` loop per process;
///   `commitDue()` is one pass, for tests.
public final class AccessScheduler: Sendable {
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

    public init(store: any Store, clock: ServerClock, settings: Settings = Settings()) {
        self.store = store
        self.clock = clock
        self.settings = settings
    }

    /// Runs passes until the task is cancelled, sleeping `pollInterval` whenever a pass did not
    /// fill a whole batch (nothing more is due now).
    public func run() async {
        while !Task.isCancelled {
            let claimed = await commitDue()
            if claimed < settings.batchSize {
                do { try await clock.sleep(settings.pollInterval) } catch { return }
            }
        }
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
                Self.log(["event": "scheduler.reevaluationFailed", "count": String(pass.failed)])
            }
            return pass.reevaluated + pass.failed
        } catch {
            Self.log(["event": "scheduler.passFailed", "code": error.code.rawValue])
            return 0
        }
    }

    /// One JSON line on standard error: a constant event name, data in keys.
    private static func log(_ fields: [String: String]) {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let line = (try? encoder.encode(fields)).map { String(decoding: $0, as: UTF8.self) } ?? "{}"
        FileHandle.standardError.write(Data((line + "\n").utf8))
    }
}
