import AppStoreClient
import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting

/// Several webhook delivery instances on one database of the test's own: on PostgreSQL each
/// has its own store (its own connections) and deliverer, as separate server processes would;
/// on SQLite (one writer) the deliverers share one store. One app with one endpoint, whose
/// signing secret is stored in clear.
struct DeliveryInstances: Sendable {
    static let appId = "app-instances"
    let database: OwnDatabase
    let stores: [any Store]
    let deliverers: [WebhookDeliverer]

    var count: Int { deliverers.count }

    /// Engines the many-instances tests run on: SQLite always, PostgreSQL when configured.
    static let engines: [StoreEngine] = TestDatabase.postgresURL == nil ? [.sqlite] : [.sqlite, .postgres]

    /// Settings for tests: real time, short backoff, no jitter.
    static func settings(timeout: Duration, leaseMilliseconds: Int64, batchSize: Int) -> WebhookDeliverer.Settings {
        WebhookDeliverer.Settings(
            batchSize: batchSize, leaseMilliseconds: leaseMilliseconds, pollInterval: .milliseconds(100),
            requestTimeout: timeout, initialBackoffMilliseconds: 1_000, random: { 0.5 })
    }

    static func start(
        _ engine: StoreEngine, count: Int, endpointURL: String, settings: WebhookDeliverer.Settings
    ) async throws -> DeliveryInstances {
        let database = try await OwnDatabase.make(engine)
        var stores: [any Store] = []
        do {
            stores.append(try await database.open())
            try await stores[0].write { transaction in
                try transaction.saveApp(
                    AppRecord(id: appId, bundleId: "com.example", environments: [.sandbox]), at: .now)
                try transaction.saveWebhookEndpoint(
                    WebhookEndpoint(id: "hook", appId: appId, url: endpointURL, secret: "instances-secret"), at: .now)
            }
            if engine == .postgres {
                for _ in 1..<count { stores.append(try await database.open()) }
            }
            let destinations = WebhookDestinationGuard.standard(
                allowList: try WebhookDestinationAllowList(["127.0.0.1"]))
            let deliverers = (0..<count).map { index in
                WebhookDeliverer(
                    store: stores[index % stores.count], transport: PinnedHTTPTransport(), clock: .system,
                    metrics: ServerMetrics(), settings: settings, destinations: destinations, owner: "instance-\(index)"
                )
            }
            return DeliveryInstances(database: database, stores: stores, deliverers: deliverers)
        } catch {
            for store in stores { await store.close() }
            database.drop()
            throw error
        }
    }

    /// The store of instance `index`.
    func store(_ index: Int) -> any Store { stores[index % stores.count] }

    /// Commits event `eventId` (`<customer>/<index>`) for its customer through instance `index`.
    func commit(_ eventId: String, through index: Int) async throws {
        let customer = String(eventId.split(separator: "/")[0])
        try await WebhookEvents.commit(eventId, appUserId: customer, appId: Self.appId, into: store(index), at: .now)
    }

    /// Starts every deliverer's `run()` loop.
    func run() -> [Task<Void, Never>] { deliverers.map { deliverer in Task { await deliverer.run() } } }

    func backlog() async throws -> Int { try await stores[0].read { try $0.outboxBacklog() }.pending }

    func close() async {
        for store in stores { await store.close() }
        database.drop()
    }

    /// Waits (polling every 20 ms, up to `seconds`) until `condition` holds; whether it did.
    static func until(_ seconds: Double, _ condition: () async throws -> Bool) async rethrows -> Bool {
        let deadline = ContinuousClock.now + .milliseconds(Int(seconds * 1000))
        while ContinuousClock.now < deadline {
            if try await condition() { return true }
            try? await Task.sleep(for: .milliseconds(20))
        }
        return try await condition()
    }
}

extension Timestamp {
    /// The wall clock: these tests run their deliverers in real time.
    static var now: Timestamp { Timestamp(Date()) }
}

extension [Task<Void, Never>] {
    /// Cancels every worker and waits for each to give back what it held.
    func stop() async {
        for task in self { task.cancel() }
        for task in self { await task.value }
    }
}
