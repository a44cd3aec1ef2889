import AppStoreClient
import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion

/// Delivers the webhook outbox: claims due deliveries (leased, so several workers and several
/// server instances share the work), POSTs each signed with its endpoint's secret, and marks it
/// delivered, schedules a retry with exponential backoff and jitter, or dead-letters it once its
/// event is older than `maxAge` (3 days by default; recorded in the audit log, listed by the
/// admin API).
///
/// At least once: a delivery is marked only after the endpoint answered 2xx, so a crash between
/// the two sends it again (receivers deduplicate by the event id). Order per customer: a
/// customer's delivery to an endpoint waits while an earlier event of that customer is still
/// pending for that endpoint.
/// - Note: Thread-safe (immutable; the store and transport are `Sendable`). Run one `run()`
///   loop per process; `deliverDue()` is one round, for tests.
public final class WebhookDeliverer: Sendable {
    /// Tunables of the delivery loop.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        public var batchSize: Int
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
            batchSize: Int = 32, leaseMilliseconds: Int64 = 60_000, pollInterval: Duration = .seconds(1),
            requestTimeout: Duration = .seconds(10), maxAgeMilliseconds: Int64 = 3 * 86_400_000,
            initialBackoffMilliseconds: Int64 = 10_000, maxBackoffMilliseconds: Int64 = 6 * 3_600_000,
            jitter: Double = 0.2, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
        ) {
            self.batchSize = batchSize
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

    let store: any Store
    let transport: any HTTPTransport
    let clock: ServerClock
    let metrics: ServerMetrics
    let settings: Settings
    let owner: String
    /// Opens each endpoint's sealed signing secret.
    let secrets: StoredSecrets

    public init(
        store: any Store, transport: any HTTPTransport = URLSessionTransport(), clock: ServerClock,
        metrics: ServerMetrics, settings: Settings = Settings(), owner: String = APIKeys.identifier(prefix: "worker-"),
        secrets: StoredSecrets = .keyless
    ) {
        self.store = store
        self.transport = transport
        self.clock = clock
        self.metrics = metrics
        self.settings = settings
        self.owner = owner
        self.secrets = secrets
    }

    /// Delivers until the task is cancelled, sleeping `pollInterval` when nothing is due.
    public func run() async {
        while !Task.isCancelled {
            let attempted = await deliverDue()
            if attempted == 0 {
                do { try await clock.sleep(settings.pollInterval) } catch { return }
            }
        }
    }

    /// One round: claim what is due, deliver it, record the outcomes. Returns the number of
    /// deliveries claimed (0 when nothing was due or the store failed).
    @discardableResult
    public func deliverDue() async -> Int {
        let now = clock.now()
        let owner = self.owner
        let settings = self.settings
        let claimed: [OutboxDelivery]
        do {
            claimed = try await store.write { transaction in
                try transaction.claimDeliveries(
                    owner: owner, now: now, leaseMilliseconds: settings.leaseMilliseconds, limit: settings.batchSize,
                    maxAttempts: WebhookDeliverer.maxAttemptsForLeases)
            }
        } catch {
            metrics.recordWebhookDelivery(outcome: "store_error")
            return 0
        }
        let oldest = claimed.map(\.event.createdAt).min()
        metrics.recordOutbox(
            claimed: claimed.count,
            oldestAgeSeconds: oldest.map { Double(now.millisecondsSince1970 - $0.millisecondsSince1970) / 1000 } ?? 0)
        if claimed.isEmpty { return 0 }

        let context: [Int64: DeliveryContext]
        do {
            context = try await store.read { reader in try Self.contexts(for: claimed, reader: reader) }
        } catch {
            metrics.recordWebhookDelivery(outcome: "store_error")
            return claimed.count
        }
        // One lane per (customer, endpoint), oldest event first; lanes run concurrently.
        var lanes: [String: [OutboxDelivery]] = [:]
        for delivery in claimed {
            lanes["\(delivery.event.customerId)|\(delivery.endpoint.id)", default: []].append(delivery)
        }
        await withTaskGroup(of: Void.self) { group in
            for lane in lanes.values {
                let ordered = lane.sorted { $0.event.sequence < $1.event.sequence }
                group.addTask { await self.deliverLane(ordered, context: context) }
            }
        }
        return claimed.count
    }

    /// What a delivery needs besides itself: the customer, its state, and whether an earlier
    /// event of the customer is still pending for the endpoint outside this batch.
    struct DeliveryContext: Sendable {
        var customer: CustomerRecord?
        var customerInfo: CustomerInfo?
        /// When the earliest blocking delivery is next due, if one blocks.
        var blockedUntil: Timestamp?
    }

    static func contexts(for claimed: [OutboxDelivery], reader: any StoreReader) throws -> [Int64: DeliveryContext] {
        let claimedIds = Set(claimed.map(\.id))
        var customers: [Int64: CustomerRecord?] = [:]
        var eventsByCustomer: [Int64: [StoredEvent]] = [:]
        var result: [Int64: DeliveryContext] = [:]
        for delivery in claimed {
            let customerId = delivery.event.customerId
            if customers[customerId] == nil { customers[customerId] = try reader.customer(id: customerId) }
            if eventsByCustomer[customerId] == nil {
                eventsByCustomer[customerId] = try reader.events(customerId: customerId, after: nil, limit: 100_000)
            }
            var blockedUntil: Timestamp?
            for earlier in eventsByCustomer[customerId]! where earlier.sequence < delivery.event.sequence {
                for entry in try reader.outboxEntries(eventSequence: earlier.sequence)
                where entry.endpointId == delivery.endpoint.id && entry.deliveredAt == nil
                    && entry.deadLetteredAt == nil
                    && !claimedIds.contains(entry.id)
                {
                    let due = max(entry.nextAttemptAt, entry.leaseExpiresAt ?? entry.nextAttemptAt)
                    blockedUntil = min(blockedUntil ?? due, due)
                }
            }
            result[delivery.id] = DeliveryContext(
                customer: customers[customerId] ?? nil,
                customerInfo: try reader.customerInfo(
                    customerId: customerId, environment: delivery.event.event.environment)?
                    .info,
                blockedUntil: blockedUntil)
        }
        return result
    }

    private func deliverLane(_ lane: [OutboxDelivery], context: [Int64: DeliveryContext]) async {
        var holdUntil: Timestamp? = lane.first.flatMap { context[$0.id]?.blockedUntil }
        for delivery in lane {
            let now = clock.now()
            if let until = holdUntil {
                metrics.recordWebhookDelivery(outcome: "deferred")
                await record(
                    delivery, error: "waiting for an earlier event of this customer",
                    retryAt: max(until, now).adding(milliseconds: 1), deadLetter: false, now: now)
                continue
            }
            let failure = await send(delivery, context: context[delivery.id])
            let after = clock.now()
            guard let failure else {
                metrics.recordWebhookDelivery(outcome: "delivered")
                _ = try? await store.write { [owner] transaction in
                    try transaction.markDelivered(id: delivery.id, owner: owner, at: after)
                }
                continue
            }
            let age = after.millisecondsSince1970 - delivery.event.createdAt.millisecondsSince1970
            let retryAt = after.adding(milliseconds: backoff(attempt: delivery.attempt))
            let tooOld =
                age >= settings.maxAgeMilliseconds
                || retryAt.millisecondsSince1970 - delivery.event.createdAt.millisecondsSince1970
                    > settings.maxAgeMilliseconds
            metrics.recordWebhookDelivery(outcome: tooOld ? "dead_lettered" : "failed")
            await record(delivery, error: failure, retryAt: retryAt, deadLetter: tooOld, now: after)
            // Later events of this customer wait for this one.
            holdUntil = tooOld ? nil : retryAt
        }
    }

    private func record(_ delivery: OutboxDelivery, error: String, retryAt: Timestamp, deadLetter: Bool, now: Timestamp)
        async
    {
        let owner = self.owner
        _ = try? await store.write { transaction in
            let marked = try transaction.markFailed(
                id: delivery.id, owner: owner, error: error, retryAt: deadLetter ? nil : retryAt, at: now)
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

    /// POSTs one delivery; `nil` on a 2xx answer, else why it failed (no secrets).
    private func send(_ delivery: OutboxDelivery, context: DeliveryContext?) async -> String? {
        guard let url = URL(string: delivery.endpoint.url) else { return "the endpoint URL is invalid" }
        let payload = WebhookPayload(
            event: delivery.event, appId: delivery.endpoint.appId, customer: context?.customer,
            customerInfo: context?.customerInfo)
        let body = AppStoreJSON.encode(payload)
        guard let secret = try? secrets.signingSecret(of: delivery.endpoint) else {
            return "the endpoint's signing secret cannot be opened with this server's secrets key"
        }
        let signature = WebhookSignature.header(body: body, secret: secret, unixSeconds: clock.now().secondsSince1970)
        let request = HTTPTransportRequest(
            method: "POST", url: url,
            headers: [
                ("Content-Type", "application/json"), (WebhookSignature.headerName, signature),
                ("Storekeeper-Event-Id", delivery.event.event.id),
                ("Storekeeper-Delivery-Attempt", String(delivery.attempt)),
                ("User-Agent", "storekeeper-webhooks/1"),
            ],
            body: body, timeout: settings.requestTimeout)
        do {
            let response = try await transport.send(request, maximumResponseBytes: 64 * 1024)
            return (200..<300).contains(response.status) ? nil : "HTTP \(response.status)"
        } catch {
            return "transport: \(error.kind.rawValue)"
        }
    }
}
