import AppStoreClient
import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion
import Synchronization

/// Delivers the webhook outbox: claims due deliveries (leased, so several workers and several
/// server instances share the work), POSTs each signed with its endpoint's secret, and marks it
/// delivered, schedules a retry with exponential backoff and jitter, or dead-letters it once its
/// event is older than `maxAge` (3 days by default; recorded in the audit log, listed by the
/// admin API).
///
/// Endpoints are independent: work is claimed endpoint by endpoint, at most
/// `maxInFlightPerEndpoint` deliveries of one endpoint (and `batchSize` in all) are claimed and
/// unfinished at once, and `run()` claims again as soon as any delivery finishes, so a hanging
/// endpoint holds only its own slots while the others keep receiving.
///
/// At least once: a delivery is marked only after the endpoint answered 2xx, so a crash between
/// the two sends it again (receivers deduplicate by the event id). Order per customer: the store
/// claims a customer's delivery to an endpoint only while no earlier event of that customer is
/// pending there and not claimable too, and one task sends a customer's claimed deliveries to
/// an endpoint one after the other, oldest first, stopping at the first failure (the rest are
/// released, uncounted, until the failed one's retry). Never twice at once from this worker: a
/// delivery is sent only while its lease outlasts the attempt.
///
/// Where: every delivery checks its destination first (`WebhookDestinationGuard`): a URL or
/// address the policy refuses is not contacted and fails as `destination_refused`. What the
/// outbox records of a failure is only its category (`WebhookDeliveryFailure`).
/// - Note: Thread-safe (the store and transport are `Sendable`; in-flight counts sit behind a
///   `Mutex`). Run one `run()` loop per process; `deliverDue()` is one round, for tests.
public final class WebhookDeliverer: Sendable {
    /// Tunables of the delivery loop.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        /// The most deliveries this worker has claimed and not finished at once, over all endpoints.
        public var batchSize: Int
        /// The most deliveries of one endpoint this worker has claimed and not finished at once.
        public var maxInFlightPerEndpoint: Int
        public var leaseMilliseconds: Int64
        public var pollInterval: Duration
        public var requestTimeout: Duration
        /// Dead-letter once the event is this old.
        public var maxAgeMilliseconds: Int64
        public var initialBackoffMilliseconds: Int64
        public var maxBackoffMilliseconds: Int64
        /// ±fraction of each backoff, drawn from `random`.
        public var jitter: Double
        public var random: @Sendable () -> Double

        public init(
            batchSize: Int = 32, maxInFlightPerEndpoint: Int = 4, leaseMilliseconds: Int64 = 60_000,
            pollInterval: Duration = .seconds(1), requestTimeout: Duration = .seconds(10),
            maxAgeMilliseconds: Int64 = 3 * 86_400_000, initialBackoffMilliseconds: Int64 = 10_000,
            maxBackoffMilliseconds: Int64 = 6 * 3_600_000, jitter: Double = 0.2,
            random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
        ) {
            self.batchSize = batchSize
            self.maxInFlightPerEndpoint = maxInFlightPerEndpoint
            self.leaseMilliseconds = leaseMilliseconds
            self.pollInterval = pollInterval
            self.requestTimeout = requestTimeout
            self.maxAgeMilliseconds = maxAgeMilliseconds
            self.initialBackoffMilliseconds = initialBackoffMilliseconds
            self.maxBackoffMilliseconds = maxBackoffMilliseconds
            self.jitter = jitter
            self.random = random
        }
    }

    /// The audit action recorded when a delivery is dead-lettered.
    public static let deadLetterAction = "webhook.deadLettered"
    static let maxAttemptsForLeases = 1_000_000
    /// Endpoints with claimable work looked at per round.
    static let endpointsPerRound = 1_000

    let store: any Store
    let transport: any HTTPTransport
    let clock: ServerClock
    let metrics: ServerMetrics
    let settings: Settings
    let destinations: WebhookDestinationGuard
    let owner: String
    /// Opens each endpoint's sealed signing secret.
    let secrets: StoredSecrets
    let inFlight = WebhookDeliveriesInFlight()
    /// Set while a round claims: one claim at a time keeps the in-flight bounds exact.
    private let claiming = Mutex(false)

    public init(
        store: any Store, transport: any HTTPTransport = PinnedHTTPTransport(), clock: ServerClock,
        metrics: ServerMetrics, settings: Settings = Settings(),
        destinations: WebhookDestinationGuard = .standard(),
        owner: String = APIKeys.identifier(prefix: "worker-"), secrets: StoredSecrets = .keyless
    ) {
        self.store = store
        self.transport = transport
        self.clock = clock
        self.metrics = metrics
        self.settings = settings
        self.destinations = destinations
        self.owner = owner
        self.secrets = secrets
    }

    /// Deliveries claimed in one round, grouped for sending.
    private struct Round: Sendable {
        /// One lane per (customer, endpoint), oldest event first.
        var lanes: [[OutboxDelivery]]
        var context: [Int64: DeliveryContext]
        var claimed: Int
    }

    /// Delivers until the task is cancelled: claims whenever a delivery finishes or
    /// `pollInterval` passed, never waiting for one endpoint before serving another. On
    /// cancellation, deliveries not yet answered are given back to the outbox uncounted.
    public func run() async {
        // A child task's result says whether it was a lane (true) or the poll timer (false).
        await withTaskGroup(of: Bool.self) { group in
            var timerRunning = false
            while !Task.isCancelled {
                if let round = await claimRound() {
                    for lane in round.lanes {
                        group.addTask {
                            await self.deliverLane(lane, context: round.context)
                            return true
                        }
                    }
                }
                if !timerRunning {
                    timerRunning = true
                    let clock = self.clock
                    let interval = settings.pollInterval
                    group.addTask {
                        try? await clock.sleep(interval)
                        return false
                    }
                }
                guard let laneFinished = await group.next() else { break }
                if !laneFinished { timerRunning = false }
            }
            group.cancelAll()
        }
    }

    /// One round: claim what is due (within the in-flight bounds), deliver it, record the
    /// outcomes. Returns the number of deliveries claimed (0 when nothing was due, another
    /// round was claiming, or the store failed).
    @discardableResult
    public func deliverDue() async -> Int {
        guard let round = await claimRound() else { return 0 }
        await withTaskGroup(of: Void.self) { group in
            for lane in round.lanes {
                group.addTask { await self.deliverLane(lane, context: round.context) }
            }
        }
        return round.claimed
    }

    /// Claims, endpoint by endpoint, what each may still take, and reads what the payloads need.
    private func claimRound() async -> Round? {
        let admitted = claiming.withLock { busy in
            if busy { return false }
            busy = true
            return true
        }
        guard admitted else { return nil }
        defer { claiming.withLock { $0 = false } }

        let now = clock.now()
        let endpoints: [String]
        do {
            endpoints = try await store.read { reader in
                try reader.dueDeliveryEndpoints(now: now, limit: WebhookDeliverer.endpointsPerRound)
            }
        } catch {
            metrics.recordWebhookDelivery(outcome: "store_error")
            return nil
        }
        let (owner, settings, inFlight) = (self.owner, self.settings, self.inFlight)
        let claimed: [OutboxDelivery]
        do {
            claimed =
                endpoints.isEmpty
                ? []
                : try await store.write { transaction in
                    var claimed: [OutboxDelivery] = []
                    for endpointId in endpoints {
                        let room = inFlight.room(
                            endpointId: endpointId, perEndpoint: settings.maxInFlightPerEndpoint,
                            total: settings.batchSize - claimed.count)
                        guard room > 0 else { continue }
                        claimed += try transaction.claimDeliveries(
                            endpointId: endpointId, owner: owner, now: now,
                            leaseMilliseconds: settings.leaseMilliseconds, limit: room,
                            maxAttempts: WebhookDeliverer.maxAttemptsForLeases)
                    }
                    return claimed
                }
        } catch {
            metrics.recordWebhookDelivery(outcome: "store_error")
            return nil
        }
        let oldest = claimed.map(\.event.createdAt).min()
        metrics.recordOutbox(
            claimed: claimed.count,
            oldestAgeSeconds: oldest.map { Double(now.millisecondsSince1970 - $0.millisecondsSince1970) / 1000 } ?? 0)
        if claimed.isEmpty { return nil }
        inFlight.add(claimed)

        let context: [Int64: DeliveryContext]
        do {
            context = try await store.read { reader in try Self.contexts(for: claimed, reader: reader) }
        } catch {
            metrics.recordWebhookDelivery(outcome: "store_error")
            for delivery in claimed { await release(delivery, nextAttemptAt: now) }
            return nil
        }
        var lanes: [String: [OutboxDelivery]] = [:]
        for delivery in claimed {
            lanes["\(delivery.event.customerId)|\(delivery.endpoint.id)", default: []].append(delivery)
        }
        return Round(
            lanes: lanes.values.map { $0.sorted { $0.event.sequence < $1.event.sequence } }, context: context,
            claimed: claimed.count)
    }

    /// What a delivery needs besides itself: the customer and its state.
    struct DeliveryContext: Sendable {
        var customer: CustomerRecord?
        var customerInfo: CustomerInfo?
    }

    static func contexts(for claimed: [OutboxDelivery], reader: any StoreReader) throws -> [Int64: DeliveryContext] {
        var customers: [Int64: CustomerRecord?] = [:]
        var result: [Int64: DeliveryContext] = [:]
        for delivery in claimed {
            let customerId = delivery.event.customerId
            if customers[customerId] == nil { customers[customerId] = try reader.customer(id: customerId) }
            result[delivery.id] = DeliveryContext(
                customer: customers[customerId] ?? nil,
                customerInfo: try reader.customerInfo(
                    customerId: customerId, environment: delivery.event.event.environment)?
                    .info)
        }
        return result
    }

    /// Sends one customer's deliveries to one endpoint in order. After a failure the rest wait
    /// for the failed one's retry; after a dead letter they go on.
    private func deliverLane(_ lane: [OutboxDelivery], context: [Int64: DeliveryContext]) async {
        // An attempt (resolution, then the request) may take two request timeouts.
        let attemptMilliseconds = 2 * Self.milliseconds(settings.requestTimeout)
        var holdUntil: Timestamp?
        for delivery in lane {
            let now = clock.now()
            if let until = holdUntil {
                await release(delivery, nextAttemptAt: until)
                continue
            }
            // Another worker may claim it once the lease expires: never send that late.
            if Task.isCancelled || now.adding(milliseconds: attemptMilliseconds) >= delivery.leaseExpiresAt {
                await release(delivery, nextAttemptAt: now)
                holdUntil = now
                continue
            }
            let failure = await send(delivery, context: context[delivery.id])
            let after = clock.now()
            guard let failure else {
                metrics.recordWebhookDelivery(outcome: "delivered")
                _ = try? await store.write { [owner] transaction in
                    try transaction.markDelivered(id: delivery.id, owner: owner, at: after)
                }
                inFlight.finish(delivery)
                continue
            }
            if failure == .cancelled && Task.isCancelled {
                await release(delivery, nextAttemptAt: after)
                holdUntil = after
                continue
            }
            let age = after.millisecondsSince1970 - delivery.event.createdAt.millisecondsSince1970
            let retryAt = after.adding(milliseconds: backoff(attempt: delivery.attempt))
            let tooOld =
                age >= settings.maxAgeMilliseconds
                || retryAt.millisecondsSince1970 - delivery.event.createdAt.millisecondsSince1970
                    > settings.maxAgeMilliseconds
            metrics.recordWebhookDelivery(outcome: tooOld ? "dead_lettered" : "failed")
            await record(delivery, failure: failure, retryAt: retryAt, deadLetter: tooOld, now: after)
            inFlight.finish(delivery)
            holdUntil = tooOld ? nil : retryAt
        }
    }

    /// Gives a claimed delivery back unsent and uncounted.
    private func release(_ delivery: OutboxDelivery, nextAttemptAt: Timestamp) async {
        _ = try? await store.write { [owner] transaction in
            try transaction.releaseDelivery(id: delivery.id, owner: owner, nextAttemptAt: nextAttemptAt)
        }
        inFlight.finish(delivery)
    }

    private func record(
        _ delivery: OutboxDelivery, failure: WebhookDeliveryFailure, retryAt: Timestamp, deadLetter: Bool,
        now: Timestamp
    ) async {
        let owner = self.owner
        _ = try? await store.write { transaction in
            let marked = try transaction.markFailed(
                id: delivery.id, owner: owner, error: failure.category, retryAt: deadLetter ? nil : retryAt, at: now)
            if marked && deadLetter {
                try transaction.appendAudit(
                    NewAuditEntry(
                        at: now, actor: "webhook-worker", action: WebhookDeliverer.deadLetterAction,
                        appId: delivery.endpoint.appId,
                        detail: .object([
                            "deliveryId": .integer(delivery.id), "endpointId": .string(delivery.endpoint.id),
                            "eventId": .string(delivery.event.event.id),
                        ])))
            }
            return marked
        }
    }

    /// Exponential from `initialBackoff`, capped, with ± jitter.
    func backoff(attempt: Int) -> Int64 {
        let exponent = Double(max(0, min(attempt - 1, 30)))
        let base = min(
            Double(settings.maxBackoffMilliseconds), Double(settings.initialBackoffMilliseconds) * pow(2, exponent))
        let jittered = base * (1 + settings.jitter * (2 * settings.random() - 1))
        return max(1, Int64(jittered))
    }

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Checks the destination, then POSTs one delivery to the checked address; `nil` on a 2xx
    /// answer, else the category of the failure.
    private func send(_ delivery: OutboxDelivery, context: DeliveryContext?) async -> WebhookDeliveryFailure? {
        // Nothing is resolved or contacted for a delivery that could not be signed.
        guard let secret = try? secrets.signingSecret(of: delivery.endpoint) else { return .signingSecretUnavailable }
        let connection: WebhookDestinationGuard.Connection
        switch await destinations.connection(for: delivery.endpoint.url) {
        case .success(let checked): connection = checked
        case .failure(let failure): return failure
        }
        let payload = WebhookPayload(
            event: delivery.event, appId: delivery.endpoint.appId, customer: context?.customer,
            customerInfo: context?.customerInfo)
        let body = AppStoreJSON.encode(payload)
        let signature = WebhookSignature.header(body: body, secret: secret, unixSeconds: clock.now().secondsSince1970)
        let headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), (WebhookSignature.headerName, signature),
            ("Storekeeper-Event-Id", delivery.event.event.id),
            ("Storekeeper-Delivery-Attempt", String(delivery.attempt)),
            ("User-Agent", "storekeeper-webhooks/1"),
        ]
        let request = HTTPTransportRequest(
            method: "POST", url: connection.url, headers: headers, body: body, timeout: settings.requestTimeout,
            connectAddress: connection.address.description)
        do {
            let response = try await transport.send(request, maximumResponseBytes: 64 * 1024)
            return (200..<300).contains(response.status) ? nil : .httpStatus(response.status)
        } catch {
            return WebhookDeliveryFailure(error)
        }
    }
}
