import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion

/// The voided-purchases polling loop: on start and every `interval`, for every app with a Play
/// side (a service-account key) whose `playVoidedPolling` switch is on, one
/// `PlayVoidedPurchasesPolling` run from the app's cursor. Each run leases its cursor, so on
/// many instances each cursor is listed and moved by one of them at a time; a run that fails
/// (Google, the database) is retried at the next pass from where the cursor stands.
/// - Note: Thread-safe (immutable; the store and ingestion are `Sendable`). Run one `run()` loop
///   per process; `runOnce()` is one pass, for tests.
public final class PlayVoidedPollingWorker: PeriodicWorker {
    /// Tunables of the loop.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        public var interval: Duration
        public var polling: PlayVoidedPurchasesPolling.Settings

        public init(interval: Duration = .seconds(3600), polling: PlayVoidedPurchasesPolling.Settings = .init()) {
            self.interval = interval
            self.polling = polling
        }
    }

    let ingestion: Ingestion
    let metrics: ServerMetrics
    let settings: Settings
    public let loop: WorkerLoop
    public let owner: String

    public init(
        ingestion: Ingestion, metrics: ServerMetrics, settings: Settings = Settings(),
        owner: String = APIKeys.identifier(prefix: "voided-")
    ) {
        (self.ingestion, self.metrics, self.settings, self.owner) = (ingestion, metrics, settings, owner)
        loop = WorkerLoop(clock: ingestion.clock, interval: settings.interval)
    }

    /// A pass, then a rest of `interval` whatever it found.
    public func round() async -> WorkerRound {
        await runOnce()
        return .rest
    }

    /// One pass over every app with a Play side; the runs by app id.
    @discardableResult
    public func runOnce() async -> [String: PlayVoidedPurchasesPolling.Run] {
        var runs: [String: PlayVoidedPurchasesPolling.Run] = [:]
        for (app, runtime) in await PlayWorkerApps.running(.playVoidedPolling, in: ingestion) {
            if Task.isCancelled { break }
            let run = await ingestion.googlePlay.voidedPolling.poll(
                runtime: runtime, owner: owner, settings: settings.polling)
            runs[app] = run
            let outcome =
                run.failure != nil ? "failed" : !run.leased ? "skipped" : run.completed ? "completed" : "partial"
            metrics.recordPlayVoidedRun(
                appId: app, listed: run.listed, newVoided: run.newVoided, skipped: run.skipped, outcome: outcome)
            if let failure = run.failure {
                ServerLog.event(["event": "voided.failed", "appId": app, "code": failure.code.rawValue])
            }
            if let unmatched = try? await ingestion.store.read({ reader in
                try reader.playUnmatchedVoidedCount(appId: app)
            }) {
                metrics.recordPlayVoidedUnmatched(appId: app, count: unmatched)
            }
        }
        if let cursors = try? await ingestion.store.read({ reader in try reader.playVoidedCursors() }) {
            for cursor in cursors { metrics.recordPlayVoidedCursor(appId: cursor.appId, at: cursor.cursorAt) }
        }
        return runs
    }
}

/// The apps a Play worker runs for: those with a Play side holding a service-account key whose
/// switch for the worker is on, by id.
enum PlayWorkerApps {
    static func running(_ worker: PlayRecoveryWorker, in ingestion: Ingestion) async -> [(String, PlayRuntime)] {
        guard let records = try? await ingestion.store.read({ reader in try reader.apps() }) else {
            ServerLog.event(["event": "playWorker.appsUnreadable"])
            return []
        }
        var running: [(String, PlayRuntime)] = []
        for record in records.sorted(by: { $0.id < $1.id }) {
            guard let app = try? await ingestion.apps.runtime(appId: record.id),
                let play = try? await ingestion.googlePlay.runtimes.runtime(appId: record.id),
                app.settings.runs(worker, hasPlaySide: play.client != nil)
            else { continue }
            running.append((record.id, play))
        }
        return running
    }
}
