/// The background workers of one server process, started together by
/// `StorekeeperApplication.startWorkers()` and stopped together by `stop()`.
///
/// Order: the webhook deliverer starts first, so the first events the others commit find it
/// running; then the access scheduler, the job queue, history replay, status polling and the Play workers. They
/// stop the other way round: the producers are cancelled before the deliverer, then every
/// worker is awaited, each giving back what it leased, so the caller may close the store once
/// `stop()` returns.
/// - Note: Thread-safe: immutable; the tasks are `Sendable`.
public final class RunningWorkers: Sendable {
    /// The names of the running workers, in the order they started.
    public let names: [String]
    private let tasks: [Task<Void, Never>]

    init(_ workers: [(name: String, worker: any BackgroundWorker)]) {
        names = workers.map(\.name)
        tasks = workers.map { entry in Task { await entry.worker.run() } }
    }

    /// Cancels every worker, last started first, and waits for each to end.
    public func stop() async {
        for task in tasks.reversed() { task.cancel() }
        for task in tasks.reversed() { await task.value }
    }
}

extension StorekeeperApplication {
    /// The workers `configuration` turns on, in the order they start.
    public var configuredWorkers: [(name: String, worker: any BackgroundWorker)] {
        let all: [(name: String, enabled: Bool, worker: any BackgroundWorker)] = [
            ("webhookDeliverer", configuration.webhookWorker, webhookDeliverer),
            ("accessScheduler", configuration.accessScheduler, accessScheduler),
            ("jobWorker", configuration.jobWorker, jobWorker),
            ("analyticsRebuild", configuration.jobWorker, analyticsRebuildWorker),
            ("historyReplay", configuration.historyReplay, historyReplayWorker),
            ("statusPolling", configuration.statusPolling, statusPollingWorker),
            ("playVoidedPolling", configuration.playVoidedPolling, playVoidedPollingWorker),
            ("playReread", configuration.playReread, playRereadWorker),
        ]
        return all.filter(\.enabled).map { ($0.name, $0.worker) }
    }

    /// Starts every worker `configuration` turns on; `stop()` the result before closing the store.
    public func startWorkers() -> RunningWorkers {
        RunningWorkers(configuredWorkers)
    }
}
