import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion

/// The notification history replay loop: on start and every `interval`, for every app whose
/// `historyReplay` switch is on (the default with an App Store Connect key) and every
/// environment it accepts, one `NotificationHistoryReplay` run from the app's cursor. Each run
/// leases its cursor, so on many instances each cursor is moved by one of them at a time; a run
/// that fails (Apple, the database) is retried at the next pass from where its last committed
/// page left the cursor.
/// - Note: Thread-safe (immutable; the store and ingestion are `Sendable`). Run one `run()`
///   loop per process (a pass now, then one every `interval`); `runOnce()` is one pass, for tests.
public final class HistoryReplayWorker: PeriodicWorker {
    /// Tunables of the loop.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        public var interval: Duration
        public var replay: NotificationHistoryReplay.Settings

        public init(interval: Duration = .seconds(3600), replay: NotificationHistoryReplay.Settings = .init()) {
            self.interval = interval
            self.replay = replay
        }
    }

    /// What one pass did, per app and environment (for tests and logs).
    public struct Pass: Sendable {
        public var runs: [String: NotificationHistoryReplay.Run] = [:]
        public var failures: [String: IngestionError] = [:]
    }

    let ingestion: Ingestion
    let metrics: ServerMetrics
    let replay: NotificationHistoryReplay.Settings
    public let loop: WorkerLoop
    public let owner: String

    public init(
        ingestion: Ingestion, metrics: ServerMetrics, settings: Settings = Settings(),
        owner: String = APIKeys.identifier(prefix: "replay-")
    ) {
        (self.ingestion, self.metrics, self.owner) = (ingestion, metrics, owner)
        replay = settings.replay
        loop = WorkerLoop(clock: ingestion.clock, interval: settings.interval)
    }

    /// A pass, then a rest of `interval` whatever it found.
    public func round() async -> WorkerRound {
        await runOnce()
        return .rest
    }

    /// One pass over every app and environment.
    @discardableResult
    public func runOnce() async -> Pass {
        var pass = Pass()
        let records: [AppRecord]
        do {
            records = try await ingestion.store.read { reader in try reader.apps() }
        } catch {
            ServerLog.event(["event": "replay.appsUnreadable"])
            return pass
        }
        for record in records.sorted(by: { $0.id < $1.id }) {
            if Task.isCancelled { break }
            let app: AppRuntime
            do {
                app = try await ingestion.apps.runtime(appId: record.id)
            } catch {
                continue
            }
            guard app.settings.runs(.historyReplay) else { continue }
            for environment in record.environments where environment == .production || environment == .sandbox {
                let key = "\(record.id)/\(environment.rawValue)"
                do {
                    let run = try await ingestion.recovery.history.replay(
                        app: app, environment: environment, owner: owner, settings: replay)
                    pass.runs[key] = run
                    let outcome =
                        run.failure != nil
                        ? "failed" : !run.leased ? "skipped" : run.completed ? "completed" : "partial"
                    metrics.recordHistoryReplay(
                        appId: record.id, environment: environment.rawValue, replayed: run.replayed,
                        newNotifications: run.newNotifications, outcome: outcome)
                    if let failure = run.failure {
                        pass.failures[key] = failure
                        ServerLog.event([
                            "event": "replay.failed", "appId": record.id, "environment": environment.rawValue,
                            "code": failure.code.rawValue,
                        ])
                    }
                } catch {
                    pass.failures[key] = error
                    metrics.recordHistoryReplay(
                        appId: record.id, environment: environment.rawValue, replayed: 0, newNotifications: 0,
                        outcome: "failed")
                    ServerLog.event([
                        "event": "replay.failed", "appId": record.id, "environment": environment.rawValue,
                        "code": error.code.rawValue,
                    ])
                }
            }
        }
        await recordCursors()
        return pass
    }

    /// Every cursor's position, including those another instance moves.
    private func recordCursors() async {
        guard let cursors = try? await ingestion.store.read({ reader in try reader.historyCursors() }) else { return }
        for cursor in cursors {
            metrics.recordHistoryCursor(
                appId: cursor.appId, environment: cursor.environment.rawValue, at: cursor.cursorAt)
        }
    }
}
