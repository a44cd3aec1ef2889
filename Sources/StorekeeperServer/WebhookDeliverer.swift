import AppStoreClient
import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion
import Synchronization

/// Delivers the webhook outbox: claims due queues (one customer's deliveries to one endpoint),
/// POSTs each delivery signed with its endpoint's secret, and marks it delivered, schedules a
/// retry with exponential backoff and jitter, or dead-letters it once its event is older than
/// `maxAge` (3 days by default; recorded in the audit log, listed by the admin API).
///
/// Many workers, many instances (docs/scaling.md): the store leases a queue as a unit, at its
/// head, to one worker at a time (`Store.claimDeliveries`), so a customer's events reach an
/// endpoint in commit order, one at a time. While a queue's deliveries are sent its lease is
/// renewed every third of `leaseMilliseconds` (a heartbeat), and an attempt starts only if it
/// ends, by its hard deadline of two request timeouts, before the lease does: a lease that
/// could not be renewed runs out only after the last request it covered has ended, so another
/// worker never sends the same event while this one still is. Every record carries the lease's
/// generation (the fencing token): a worker whose lease was taken records nothing. When a
/// queue's batch is done (sent, or stopped at a failure whose retry then holds the queue), the
/// queue is given back at once, so its next event is claimable right away, by any instance.
///
/// Endpoints are independent: work is claimed endpoint by endpoint, at most
/// `maxInFlightPerEndpoint` queues of one endpoint (so as many requests to it) and
/// `maxInFlight` in all are held at once, and `run()` claims again as soon as any queue is
/// given back, so a hanging endpoint holds only its own slots while the others keep receiving.
///
/// At least once: a delivery is marked only after the endpoint answered 2xx, so a crash between
/// the two sends it again (receivers deduplicate by the event id).
///
/// Where: every delivery checks its destination first (`WebhookDestinationGuard`): a URL or
/// address the policy refuses is not contacted and fails as `destination_refused`. What the
/// outbox records of a failure is only its category (`WebhookDeliveryFailure`).
/// - Note: Thread-safe (the store and transport are `Sendable`; in-flight counts and held
///   leases sit behind a `Mutex`). Run one `run()` loop per process; `deliverDue()` is one
///   round, for tests.
public final class WebhookDeliverer: BackgroundWorker {
    /// Tunables of the delivery loop.
    /// - Note: Immutable value; `Sendable`.
    public struct Settings: Sendable {
        /// The most deliveries of one customer's queue claimed under one lease.
        public var batchSize: Int
        /// The most queues this worker holds at once, over all endpoints (each has at most one
        /// request in flight).
        public var maxInFlight: Int
        /// The most queues of one endpoint this worker holds at once: requests in flight to it.
        public var maxInFlightPerEndpoint: Int
        /// How long a claimed queue stays leased without a renewal; renewed every third of it
        /// while its deliveries are sent. Never less than
        /// `minimumLeaseMilliseconds(requestTimeout:)` (a shorter value is raised to it).
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
            batchSize: Int = 16, maxInFlight: Int = 32, maxInFlightPerEndpoint: Int = 4,
            leaseMilliseconds: Int64 = 60_000, pollInterval: Duration = .seconds(1),
            requestTimeout: Duration = .seconds(10), maxAgeMilliseconds: Int64 = 3 * 86_400_000,
            initialBackoffMilliseconds: Int64 = 10_000, maxBackoffMilliseconds: Int64 = 6 * 3_600_000,
            jitter: Double = 0.2, random: @escaping @Sendable () -> Double = { Double.random(in: 0..<1) }
        ) {
            self.batchSize = batchSize
            self.maxInFlight = maxInFlight
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

        /// The hard deadline of one attempt: resolving the host, then the request, each bounded
        /// by `requestTimeout`.
        public var attemptMilliseconds: Int64 { 2 * WebhookDeliverer.milliseconds(requestTimeout) }

        /// The shortest lease that holds an attempt whenever it may start: renewed every third,
        /// two thirds of a lease are always left, and they must hold one attempt (two request
        /// timeouts) plus two seconds for the database writes around it.
        public static func minimumLeaseMilliseconds(requestTimeout: Duration) -> Int64 {
            3 * WebhookDeliverer.milliseconds(requestTimeout) + 3_000
        }

        /// `leaseMilliseconds`, raised to the minimum for `requestTimeout` if below it.
        var effectiveLeaseMilliseconds: Int64 {
            max(leaseMilliseconds, Self.minimumLeaseMilliseconds(requestTimeout: requestTimeout))
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
    public let settings: Settings
    let destinations: WebhookDestinationGuard
    let owner: String
    /// Opens each endpoint's sealed signing secret.
    let secrets: StoredSecrets
    let inFlight = WebhookDeliveriesInFlight()
    /// When a failed delivery is tried again.
    let retryBackoff: RetryBackoff
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
        retryBackoff = RetryBackoff(
            initialMilliseconds: settings.initialBackoffMilliseconds, maxMilliseconds: settings.maxBackoffMilliseconds,
            jitter: settings.jitter, random: settings.random)
    }

    /// One claimed queue: its lease and its deliveries, oldest event first.
    struct Lane: Sendable {
        var lease: DeliveryLease
        var deliveries: [OutboxDelivery]
    }

    /// Queues claimed in one round.
    private struct Round: Sendable {
        var lanes: [Lane]
        var context: [Int64: DeliveryContext]
        var claimed: Int
    }

    /// Delivers until the task is cancelled: claims whenever a queue is given back or
    /// `pollInterval` passed, never waiting for one endpoint before serving another. On
    /// cancellation, deliveries not yet answered are given back to the outbox uncounted.
    public func run() async {
        await repairQueues()
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

    /// Mends queues an earlier version left drained with deliveries pending (or due while
    /// empty) before the first round, in passes of `repairBatch` of each kind: a read that locks
    /// nothing, then a write only where something disagrees. It stops at a pass that finds less
    /// than a full batch, or mends nothing (what is left is held by another transaction, which
    /// settles it), or when the worker is cancelled. A failure is logged with its code and the
    /// rounds go on.
    func repairQueues() async {
        var repaired = DeliveryQueueRepair(reopened: 0, drained: 0)
        do {
            while !Task.isCancelled {
                let batch = Self.repairBatch
                let mismatches = try await store.read { try $0.deliveryQueueMismatches(limit: batch) }
                if mismatches.isEmpty { break }
                let now = clock.now()
                let pass = try await store.write(retries: 5) { try $0.repairDeliveryQueues(mismatches, now: now) }
                repaired.reopened += pass.reopened
                repaired.drained += pass.drained
                if pass.reopened + pass.drained == 0 { break }
                if mismatches.stranded.count < batch && mismatches.emptyDue.count < batch { break }
            }
        } catch {
            metrics.recordWebhookDelivery(outcome: "store_error")
            ServerLog.event([
                "event": "webhook.queueRepairFailed",
                "code": (error as? StoreError)?.code.rawValue ?? String(describing: type(of: error)),
            ])
        }
        if repaired.reopened > 0 || repaired.drained > 0 {
            ServerLog.event([
                "event": "webhook.queuesRepaired", "reopened": String(repaired.reopened),
                "drained": String(repaired.drained),
            ])
        }
    }

    /// Queues of each kind one repair pass reads and mends.
    static let repairBatch = 10_000

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

    /// Claims, endpoint by endpoint, the queues each may still take, and reads what the payloads
    /// need.
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
                    var queues = 0
                    for endpointId in endpoints {
                        let room = inFlight.room(
                            endpointId: endpointId, perEndpoint: settings.maxInFlightPerEndpoint,
                            total: settings.maxInFlight - queues)
                        guard room > 0 else { continue }
                        let taken = try transaction.claimDeliveries(
                            endpointId: endpointId, owner: owner, now: now,
                            leaseMilliseconds: settings.effectiveLeaseMilliseconds, queues: room,
                            batchSize: settings.batchSize, maxAttempts: WebhookDeliverer.maxAttemptsForLeases)
                        queues += Set(taken.map(\.lease)).count
                        claimed += taken
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
        // The store returns each queue's deliveries together, oldest event first.
        var lanes: [Lane] = []
        for delivery in claimed {
            if lanes.last?.lease == delivery.lease {
                lanes[lanes.count - 1].deliveries.append(delivery)
            } else {
                lanes.append(Lane(lease: delivery.lease, deliveries: [delivery]))
            }
        }
        for lane in lanes { inFlight.add(endpointId: lane.lease.endpointId) }

        let context: [Int64: DeliveryContext]
        do {
            context = try await store.read { reader in try Self.contexts(for: claimed, reader: reader) }
        } catch {
            metrics.recordWebhookDelivery(outcome: "store_error")
            for lane in lanes {
                await giveBack(lane.lease)
                inFlight.finish(endpointId: lane.lease.endpointId)
            }
            return nil
        }
        return Round(lanes: lanes, context: context, claimed: claimed.count)
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

    /// Sends one queue's deliveries in order while a heartbeat keeps its lease; when either
    /// ends (the batch is done, or the lease was lost) the other is stopped, and the queue is
    /// given back.
    private func deliverLane(_ lane: Lane, context: [Int64: DeliveryContext]) async {
        let held = HeldDeliveryLease(lane.lease)
        await withTaskGroup(of: Void.self) { group in
            group.addTask { await self.send(lane, held: held, context: context) }
            group.addTask { await self.keepRenewed(held) }
            _ = await group.next()
            group.cancelAll()
        }
        if held.isHeld { await giveBack(lane.lease) }
        inFlight.finish(endpointId: lane.lease.endpointId)
    }

    /// The heartbeat: renews the lease every third of its length until cancelled or the lease
    /// is lost. A store that cannot be reached is tried again at the next beat; meanwhile no
    /// attempt starts that could outlast the lease.
    private func keepRenewed(_ held: HeldDeliveryLease) async {
        let length = settings.effectiveLeaseMilliseconds
        while true {
            do {
                try await clock.sleep(.milliseconds(max(1, length / 3)))
            } catch {
                return
            }
            if Task.isCancelled { return }
            let now = clock.now()
            let lease = held.lease
            let renewed: DeliveryLease??
            renewed = try? await store.write { transaction in
                try transaction.renewDeliveryLease(lease, now: now, leaseMilliseconds: length)
            }
            switch renewed {
            case .some(.some(let lease)): held.renewed(until: lease.expiresAt)
            case .some(.none):
                metrics.recordWebhookDelivery(outcome: "lease_lost")
                held.lost()
                return
            case .none: continue
            }
        }
    }

    /// Sends the lane's deliveries one after the other, oldest first. Stops at a failure whose
    /// retry holds the queue (after a dead letter it goes on), when the lease is lost, or when
    /// the lease could end before the next attempt's deadline (the rest is given back and
    /// claimed again under a fresh lease).
    private func send(_ lane: Lane, held: HeldDeliveryLease, context: [Int64: DeliveryContext]) async {
        let lease = lane.lease
        for delivery in lane.deliveries {
            let now = clock.now()
            guard held.isHeld, !Task.isCancelled,
                now.adding(milliseconds: settings.attemptMilliseconds) < held.expiresAt
            else { return }
            let failure = await attempt(delivery, context: context[delivery.id])
            let after = clock.now()
            guard let failure else {
                metrics.recordWebhookDelivery(outcome: "delivered")
                let marked = try? await store.write { transaction in
                    try transaction.markDelivered(id: delivery.id, lease: lease, at: after)
                }
                guard marked == true else {
                    if marked == false { held.lost() }
                    return
                }
                continue
            }
            if failure == .cancelled && Task.isCancelled { return }
            let age = after.millisecondsSince1970 - delivery.event.createdAt.millisecondsSince1970
            let retryAt = after.adding(milliseconds: retryBackoff.milliseconds(attempt: delivery.attempt))
            let tooOld =
                age >= settings.maxAgeMilliseconds
                || retryAt.millisecondsSince1970 - delivery.event.createdAt.millisecondsSince1970
                    > settings.maxAgeMilliseconds
            metrics.recordWebhookDelivery(outcome: tooOld ? "dead_lettered" : "failed")
            let marked = await record(delivery, failure: failure, retryAt: retryAt, deadLetter: tooOld, now: after)
            guard marked == true, tooOld else {
                if marked == false { held.lost() }
                return
            }
        }
    }

    /// One attempt under its hard deadline (`attemptMilliseconds`, real time): `nil` on a 2xx
    /// answer, else the failure. A transport that outlives the deadline is cancelled.
    private func attempt(_ delivery: OutboxDelivery, context: DeliveryContext?) async -> WebhookDeliveryFailure? {
        await underAttemptDeadline(cancelled: .cancelled, timedOut: .timeout) {
            await self.post(delivery, context: context)
        }
    }

    /// `work` under the attempt's hard deadline: its answer, `timedOut` when the deadline came
    /// first (the work is cancelled), `cancelled` when the caller was.
    private func underAttemptDeadline<Answer: Sendable>(
        cancelled: Answer, timedOut: Answer, _ work: @escaping @Sendable () async -> Answer
    ) async -> Answer {
        let deadline = Duration.milliseconds(settings.attemptMilliseconds)
        return await withTaskGroup(of: AttemptOutcome<Answer>?.self) { group in
            group.addTask { .answered(await work()) }
            group.addTask {
                do {
                    try await Task.sleep(for: deadline)
                } catch {
                    return nil
                }
                return .deadline
            }
            var outcome = cancelled
            first: while let next = await group.next() {
                // A timer cancelled with its task gives no verdict: the answer decides.
                guard let next else { continue }
                switch next {
                case .answered(let answer): outcome = answer
                case .deadline: outcome = timedOut
                }
                break first
            }
            group.cancelAll()
            return outcome
        }
    }

    /// Gives a held queue back: what was not sent returns uncounted; the queue is claimable at
    /// once (or at the retry a failure scheduled).
    private func giveBack(_ lease: DeliveryLease) async {
        _ = try? await store.write { transaction in try transaction.releaseDeliveries(lease) }
    }

    /// Records a failed attempt: `true` when recorded, `false` when the lease was lost, `nil`
    /// when the store failed.
    private func record(
        _ delivery: OutboxDelivery, failure: WebhookDeliveryFailure, retryAt: Timestamp, deadLetter: Bool,
        now: Timestamp
    ) async -> Bool? {
        try? await store.write { transaction in
            let marked = try transaction.markFailed(
                id: delivery.id, lease: delivery.lease, error: failure.category, retryAt: deadLetter ? nil : retryAt,
                at: now)
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

    static func milliseconds(_ duration: Duration) -> Int64 {
        let (seconds, attoseconds) = duration.components
        return seconds * 1000 + attoseconds / 1_000_000_000_000_000
    }

    /// Checks the destination, then POSTs one delivery to the checked address; `nil` on a 2xx
    /// answer, else the category of the failure.
    private func post(_ delivery: OutboxDelivery, context: DeliveryContext?) async -> WebhookDeliveryFailure? {
        let payload = WebhookPayload(
            event: delivery.event, appId: delivery.endpoint.appId, customer: context?.customer,
            customerInfo: context?.customerInfo)
        switch await sendSigned(
            AppStoreJSON.encode(payload), eventId: delivery.event.event.id, attempt: delivery.attempt,
            to: delivery.endpoint)
        {
        case .success(let response): return (200..<300).contains(response.status) ? nil : .httpStatus(response.status)
        case .failure(let failure): return failure
        }
    }

    /// The one way a webhook leaves this server, for deliveries and test events alike: the
    /// endpoint's secret opened, the destination checked (and connected to at the checked
    /// address), the body signed, the request sent; the endpoint's answer, or why there is none.
    private func sendSigned(_ body: Data, eventId: String, attempt: Int, to endpoint: WebhookEndpoint) async
        -> Result<HTTPTransportResponse, WebhookDeliveryFailure>
    {
        // Nothing is resolved or contacted for a delivery that could not be signed.
        guard let secret = try? secrets.signingSecret(of: endpoint) else { return .failure(.signingSecretUnavailable) }
        let connection: WebhookDestinationGuard.Connection
        switch await destinations.connection(for: endpoint.url) {
        case .success(let checked): connection = checked
        case .failure(let failure): return .failure(failure)
        }
        let signature = WebhookSignature.header(body: body, secret: secret, unixSeconds: clock.now().secondsSince1970)
        let headers: [(name: String, value: String)] = [
            ("Content-Type", "application/json"), (WebhookSignature.headerName, signature),
            ("Storekeeper-Event-Id", eventId), ("Storekeeper-Delivery-Attempt", String(attempt)),
            ("User-Agent", "storekeeper-webhooks/1"),
        ]
        let request = HTTPTransportRequest(
            method: "POST", url: connection.url, headers: headers, body: body, timeout: settings.requestTimeout,
            connectAddress: connection.address.description)
        do {
            return .success(try await transport.send(request, maximumResponseBytes: 64 * 1024))
        } catch {
            return .failure(WebhookDeliveryFailure(error))
        }
    }

    /// Sends a test event (`WebhookTestEvent`) to `endpoint` now, as a delivery is sent (same
    /// secret, destination check, signature, headers and deadline) but outside the outbox:
    /// nothing is stored or retried. Returns what the endpoint answered.
    public func sendTest(to endpoint: WebhookEndpoint) async -> WebhookTestResult {
        let event = WebhookTestEvent(
            id: APIKeys.identifier(prefix: "evt_test_"), appId: endpoint.appId, endpointId: endpoint.id,
            occurredAt: clock.now())
        let body = AppStoreJSON.encode(event)
        let outcome = await underAttemptDeadline(
            cancelled: Result<HTTPTransportResponse, WebhookDeliveryFailure>.failure(.cancelled),
            timedOut: .failure(.timeout)
        ) {
            await self.sendSigned(body, eventId: event.id, attempt: 1, to: endpoint)
        }
        return WebhookTestResult(endpointId: endpoint.id, eventId: event.id, outcome: outcome)
    }
}

/// How an attempt under its deadline ended: with the work's answer, or at the deadline.
private enum AttemptOutcome<Answer: Sendable>: Sendable {
    case answered(Answer)
    case deadline
}
