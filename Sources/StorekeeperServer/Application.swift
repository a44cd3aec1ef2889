import AppStoreClient
import AppStoreModels
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion
import Synchronization

/// The Storekeeper application: every route, the middleware (metrics, authentication), the
/// ingestion, the workers (webhook deliverer, access scheduler, job worker, history replay,
/// status polling; `storekeeper serve` starts the ones its configuration enables) and the
/// metrics, assembled over one `Store`.
///
/// The same value serves `storekeeper serve` and the tests, which run it in process
/// (`responder.respond(to:)`) or on port 0 (`httpConfiguration`).
/// - Note: Immutable and `Sendable`.
public struct StorekeeperApplication: Sendable {
    public let configuration: ServerConfiguration
    public let store: any Store
    public let clock: ServerClock
    public let metrics: ServerMetrics
    /// Ingestion without HTTP: what the routes adapt, and what workers and tests call directly.
    public let ingestion: Ingestion
    public let routes: [APIRoute]
    public let responder: Responder
    public let webhookDeliverer: WebhookDeliverer
    /// Commits the changes of access that time alone makes (`configuration.accessScheduler`
    /// says whether `storekeeper serve` runs it).
    public let accessScheduler: AccessScheduler
    /// Runs the durable job queue (purchase completions); `ServeCommand` starts its loop.
    public let jobWorker: JobWorker
    /// Runs the analytics rebuilds the analytics-settings `PUT` queues (`analytics_rebuild`
    /// jobs), on a loop of its own so that a rebuild of minutes never holds up the other jobs;
    /// started with the job worker (`configuration.jobWorker`).
    public let analyticsRebuildWorker: JobWorker
    /// Replays each app's notification history from its cursor (`configuration.historyReplay`).
    public let historyReplayWorker: HistoryReplayWorker
    /// Polls subscription statuses that went quiet (`configuration.statusPolling`).
    public let statusPollingWorker: StatusPollingWorker
    /// Lists each Play app's voided purchases from its cursor (`configuration.playVoidedPolling`).
    public let playVoidedPollingWorker: PlayVoidedPollingWorker
    /// Re-reads Play subscriptions that went quiet (`configuration.playReread`).
    public let playRereadWorker: PlayRereadWorker
    public let openAPIDocument: JSONValue

    /// - Parameters:
    ///   - appStoreConnections: how the server reaches the App Store for an app (default: Apple
    ///     through the app's App Store Connect key and shared secret).
    ///   - webhookSettings: delivery tuning; defaults follow `configuration`.
    ///   - webhookTransport: how webhooks are POSTed (default: URLSession).
    ///   - secrets: seals and opens the secrets stored in the database, with the key from
    ///     `configuration.storedSecrets()`; run `StoredSecrets.prepare` on the store before
    ///     serving. Keyless (the default) cannot store a secret.
    ///   - webhookResolver: how webhook hosts are resolved for the destination checks (default:
    ///     the system's `getaddrinfo`).
    ///   - jobSettings: job queue tuning (backoff, attempts); defaults otherwise.
    ///   - playService: how the server reaches Google Play (default: from `configuration`'s
    ///     `playApiBaseURL` and `playPushKeySet`, else Google's own).
    public init(
        configuration: ServerConfiguration, store: any Store, clock: ServerClock = .system,
        appStoreConnections: AppStoreConnectionFactory? = nil, webhookSettings: WebhookDeliverer.Settings? = nil,
        webhookTransport: (any HTTPTransport)? = nil, accessLog: AccessLogger? = nil,
        secrets: StoredSecrets = .keyless, webhookResolver: (any HostResolver)? = nil,
        jobSettings: JobWorker.Settings? = nil, playService: PlayServiceConfiguration? = nil
    ) {
        self.configuration = configuration
        self.store = store
        self.clock = clock
        let metrics = ServerMetrics(now: clock.now)
        self.metrics = metrics
        let ingestion = Ingestion(
            store: store, clock: clock, connections: appStoreConnections, metrics: metrics,
            appRefreshInterval: .milliseconds(configuration.appRefreshMilliseconds), secrets: secrets,
            purchaseCompletionWait: .milliseconds(configuration.purchaseCompletionWaitMilliseconds),
            rateLimiters: AppStoreRateLimiters(share: Double(configuration.appStoreRatePercent) / 100),
            customerSyncInterval: .seconds(configuration.customerSyncIntervalSeconds),
            playService: playService ?? configuration.playService())
        self.ingestion = ingestion
        let apps = AppDirectory(store: store, metrics: metrics, runtimes: ingestion.apps)
        let notifications = ingestion.notifications
        let purchases = ingestion.purchases
        let documentBox = DocumentBox()
        let webhookDestinations = WebhookDestinationGuard(
            policy: WebhookDestinationPolicy(allowList: configuration.webhookAllowedDestinations),
            resolver: webhookResolver ?? SystemHostResolver())
        var settings = webhookSettings ?? WebhookDeliverer.Settings()
        if webhookSettings == nil {
            settings.pollInterval = .milliseconds(configuration.webhookPollMilliseconds)
            settings.maxAgeMilliseconds = Int64(configuration.webhookMaxAgeSeconds) * 1000
            settings.requestTimeout = .seconds(configuration.webhookTimeoutSeconds)
            settings.leaseMilliseconds = Int64(configuration.webhookLeaseSeconds) * 1000
            settings.batchSize = configuration.webhookBatchSize
        }
        let webhookDeliverer = WebhookDeliverer(
            store: store, transport: webhookTransport ?? PinnedHTTPTransport(), clock: clock, metrics: metrics,
            settings: settings, destinations: webhookDestinations, secrets: secrets)
        self.webhookDeliverer = webhookDeliverer
        var routes: [APIRoute] = []
        routes +=
            OperationsController(
                store: store, metrics: metrics, clock: clock, writer: ingestion.writer, openAPI: { documentBox.value }
            ).routes
        routes += NotificationsController(apps: apps, ingestor: notifications).routes
        routes += PurchasesController(apps: apps, ingestor: purchases).routes
        routes += GooglePlayController(googlePlay: ingestion.googlePlay, metrics: metrics).routes
        routes += CustomersController(apps: apps, aliases: ingestion.aliases, clock: clock).routes
        routes += CustomerSyncController(apps: apps, sync: ingestion.recovery.sync, metrics: metrics).routes
        routes += ConsumptionController(apps: apps, clock: clock).routes
        routes += CatalogController(apps: apps, clock: clock).routes
        routes += AnalyticsController(apps: apps, clock: clock).routes
        routes +=
            WebhooksController(
                apps: apps, clock: clock, destinations: webhookDestinations, deliverer: webhookDeliverer
            ).routes
        routes += RecentNotificationsController(apps: apps).routes
        let keys = APIKeyCache(refreshInterval: .milliseconds(configuration.appRefreshMilliseconds))
        routes += AppsController(apps: apps, clock: clock, keys: keys).routes
        routes +=
            GooglePlaySettingsController(
                apps: apps, clock: clock, playRuntimes: ingestion.googlePlay.runtimes
            ).routes
        routes += PlayUnmatchedVoidedController(apps: apps).routes
        let openAPI = OpenAPIDocument.build(routes: routes)
        documentBox.set(openAPI)
        self.openAPIDocument = openAPI
        self.routes = routes

        // The dashboard checks its own session cookie: open to the key middleware, and not part
        // of the REST API's document.
        let dashboard = DashboardController(
            apps: apps, store: store, clock: clock, metrics: metrics, sync: ingestion.recovery.sync,
            configuration: configuration)
        var access = Dictionary(routes.map { ($0.accessKey, $0.access) }, uniquingKeysWith: { first, _ in first })
        for (method, path, _) in dashboard.routes { access["\(method.rawValue) \(path)"] = .open }

        var router = Router(accessLog: accessLog ?? (configuration.accessLog ? AccessLog.standardError() : nil))
        router.use(MetricsMiddleware(metrics: metrics))
        router.use(
            AuthenticationMiddleware(access: access, store: store, adminKey: configuration.adminKey, keys: keys))
        for route in routes { router.add(route.method, route.path, route.routedHandler) }
        for (method, path, handler) in dashboard.routes { router.add(method, path, handler: handler) }
        responder = router.buildResponder()

        accessScheduler = AccessScheduler(
            store: store, clock: clock,
            settings: AccessScheduler.Settings(
                pollInterval: .milliseconds(configuration.accessSchedulerPollMilliseconds)))
        var jobs = jobSettings ?? JobWorker.Settings()
        if jobSettings == nil {
            jobs.pollInterval = .milliseconds(configuration.webhookPollMilliseconds)
            jobs.leaseMilliseconds = max(1000, Int64(configuration.jobLeaseSeconds) * 1000)
        }
        jobWorker = JobWorker(
            store: store, handlers: ingestion.jobHandlers, clock: clock, metrics: metrics, settings: jobs)
        analyticsRebuildWorker = JobWorker(
            store: store,
            handlers: [AnalyticsRebuildJob(store: store, clock: clock, leaseMilliseconds: jobs.leaseMilliseconds)],
            clock: clock, metrics: metrics, settings: jobs, owner: APIKeys.identifier(prefix: "rebuild-"))
        historyReplayWorker = HistoryReplayWorker(
            ingestion: ingestion, metrics: metrics,
            settings: HistoryReplayWorker.Settings(
                interval: .seconds(configuration.historyReplayIntervalSeconds),
                replay: NotificationHistoryReplay.Settings(
                    overlapMilliseconds: Int64(configuration.historyReplayOverlapSeconds) * 1000,
                    onlyFailures: configuration.historyReplayOnlyFailures,
                    leaseMilliseconds: Int64(configuration.historyReplayLeaseSeconds) * 1000)))
        statusPollingWorker = StatusPollingWorker(
            ingestion: ingestion, metrics: metrics,
            settings: StatusPollingWorker.Settings(
                interval: .seconds(configuration.statusPollingIntervalSeconds),
                rules: SubscriptionPollRules(
                    expiryDelayMilliseconds: Int64(configuration.statusPollingExpiryDelaySeconds) * 1000,
                    billingRetryIntervalMilliseconds: Int64(configuration.statusPollingBillingRetrySeconds) * 1000,
                    staleAfterMilliseconds: Int64(configuration.statusPollingStaleSeconds) * 1000),
                leaseMilliseconds: Int64(configuration.statusPollingLeaseSeconds) * 1000))
        playVoidedPollingWorker = PlayVoidedPollingWorker(
            ingestion: ingestion, metrics: metrics,
            settings: PlayVoidedPollingWorker.Settings(
                interval: .seconds(configuration.playVoidedPollingIntervalSeconds),
                polling: PlayVoidedPurchasesPolling.Settings(
                    overlapMilliseconds: Int64(configuration.playVoidedPollingOverlapSeconds) * 1000,
                    leaseMilliseconds: Int64(configuration.historyReplayLeaseSeconds) * 1000,
                    pageSize: UInt32(configuration.playVoidedPollingPageSize))))
        playRereadWorker = PlayRereadWorker(
            ingestion: ingestion, metrics: metrics,
            settings: PlayRereadWorker.Settings(
                interval: .seconds(configuration.playRereadIntervalSeconds),
                rules: PlayRereadRules(
                    expiryDelayMilliseconds: Int64(configuration.playRereadExpiryDelaySeconds) * 1000,
                    pendingIntervalMilliseconds: Int64(configuration.playRereadPendingSeconds) * 1000),
                leaseMilliseconds: Int64(configuration.playRereadLeaseSeconds) * 1000))
    }

    /// Starts serving `responder` with `httpConfiguration()`, and exports the server's
    /// connection statistics on `/metrics`.
    public func startServer() throws -> HTTPServer {
        let server = try HTTPServer(configuration: try httpConfiguration(), responder: responder)
        metrics.observeConnections { [weak server] in server?.connectionStatistics }
        return server
    }

    /// The HTTP core's configuration from `configuration` (listen address and limits).
    public func httpConfiguration() throws(ServerConfigurationError) -> HTTPServer.Configuration {
        let (host, port) = try configuration.listenAddress()
        return HTTPServer.Configuration(
            host: host, port: port, threadPoolSize: configuration.threadPoolSize,
            maxBodySize: configuration.maxBodySize, maxHeaderSize: configuration.maxHeaderSize,
            connectionLimit: configuration.connectionLimit,
            connectionTimeout: .seconds(configuration.connectionTimeoutSeconds),
            requestHeadTimeout: .seconds(configuration.requestHeadTimeoutSeconds),
            minimumBodyRate: configuration.minBodyBytesPerSecond == 0
                ? nil
                : HTTPServer.MinimumBodyRate(
                    bytesPerSecond: configuration.minBodyBytesPerSecond,
                    grace: .seconds(configuration.requestHeadTimeoutSeconds)),
            maxConnectionsPerAddress: configuration.maxConnectionsPerAddress,
            shutdownGracePeriod: .seconds(configuration.shutdownGraceSeconds),
            accessLog: configuration.accessLog ? AccessLog.standardError() : nil)
    }
}

/// The OpenAPI document, set once after the routes that serve it exist.
/// - Note: Thread-safe: the value sits behind a `Mutex`.
private final class DocumentBox: Sendable {
    private let document = Mutex<JSONValue>(.null)
    var value: JSONValue { document.withLock { $0 } }
    func set(_ value: JSONValue) { document.withLock { $0 = value } }
}

/// Builds the application's responder: what `HTTPServer(configuration:responder:)` serves.
public func buildApplication(
    _ configuration: ServerConfiguration, store: any Store, clock: ServerClock = .system,
    appStoreClientFactory: AppStoreConnectionFactory? = nil
) -> Responder {
    StorekeeperApplication(
        configuration: configuration, store: store, clock: clock, appStoreConnections: appStoreClientFactory
    ).responder
}
