import Storage

/// The ingestion module assembled over one store: the app runtimes, the writer, and an
/// ingestor per source. The server's routes, the workers and the tests all hold one of these.
/// - Note: Immutable and `Sendable`.
public struct Ingestion: Sendable {
    public let store: any Store
    public let clock: ServerClock
    public let apps: AppRuntimes
    public let writer: IngestionWriter
    public let notifications: NotificationIngestor
    public let purchases: PurchaseIngestor
    public let aliases: CustomerAliases
    /// One App Store rate limiter per app and environment, shared by every path of the process.
    public let rateLimiters: AppStoreRateLimiters
    /// The recovery sources: notification history replay, status polling, on-demand sync.
    public let recovery: Recovery
    /// Google Play: the apps' Play runtimes, the push and purchase-post paths.
    public let googlePlay: GooglePlayIngestion
    let metrics: any IngestionMetrics

    /// - Parameters:
    ///   - connections: how an app reaches the App Store (default: Apple, through the app's
    ///     App Store Connect key and shared secret).
    ///   - appRefreshInterval: how long a cached app may go unchecked; the bound within which a
    ///     change made by another instance is seen.
    ///   - secrets: opens the apps' sealed secrets (default: no key; clear values only).
    ///   - purchaseCompletionWait: how long a posted signed transaction waits for Apple before it
    ///     is answered without Apple's data (and completed by a job); `.zero`: always by a job.
    ///   - rateLimiters: the App Store rate limiters every connection goes through.
    ///   - customerSyncInterval: how often one customer may be synced on demand.
    public init(
        store: any Store, clock: ServerClock = .system, connections: AppStoreConnectionFactory? = nil,
        metrics: any IngestionMetrics = DiscardingIngestionMetrics(), appRefreshInterval: Duration = .seconds(1),
        secrets: StoredSecrets = .keyless, purchaseCompletionWait: Duration = .seconds(2),
        rateLimiters: AppStoreRateLimiters = AppStoreRateLimiters(), customerSyncInterval: Duration = .seconds(60),
        playService: PlayServiceConfiguration? = nil
    ) {
        self.store = store
        self.clock = clock
        self.rateLimiters = rateLimiters
        self.metrics = metrics
        let base = connections ?? LiveAppStoreConnection.factory(clock: clock)
        // Every connection of every runtime goes through the app's one limiter.
        let limited: AppStoreConnectionFactory = { record, settings, environment in
            try base(record, settings, environment).map {
                RateLimitedAppStoreConnection(
                    base: $0, limiter: rateLimiters.limiter(appId: record.id, environment: environment))
            }
        }
        apps = AppRuntimes(
            store: store, clock: clock, connections: limited, metrics: metrics, refreshInterval: appRefreshInterval,
            secrets: secrets)
        writer = IngestionWriter(store: store, metrics: metrics)
        notifications = NotificationIngestor(writer: writer, metrics: metrics, clock: clock)
        purchases = PurchaseIngestor(
            writer: writer, metrics: metrics, clock: clock, completionWait: purchaseCompletionWait)
        aliases = CustomerAliases(writer: writer, clock: clock)
        recovery = Recovery(
            store: store, clock: clock, notifications: notifications, writer: writer, purchases: purchases,
            metrics: metrics, syncInterval: customerSyncInterval)
        googlePlay = GooglePlayIngestion(
            runtimes: PlayRuntimes(
                store: store, clock: clock, secrets: secrets, service: playService ?? .google(),
                refreshInterval: appRefreshInterval),
            ingestor: PlayIngestor(writer: writer), apps: apps, store: store, clock: clock)
    }

    /// The handlers of the jobs ingestion queues, for the server's `JobWorker`.
    public var jobHandlers: [any JobHandler] {
        [
            PurchaseCompletion(apps: apps, purchases: purchases),
            ConsumptionResponder(store: store, apps: apps, clock: clock, metrics: metrics),
            PlayAcknowledgementJob(
                store: store, acknowledger: PlayAPIAcknowledger(runtimes: googlePlay.runtimes), clock: clock),
        ]
    }
}
