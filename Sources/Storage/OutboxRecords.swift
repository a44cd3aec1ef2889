import AppStoreModels
import Entitlements

/// One webhook delivery (event × endpoint) as stored.
/// - Note: Immutable value; `Sendable`.
public struct OutboxEntry: Sendable, Hashable {
    public var id: Int64
    public var eventSequence: Int64
    public var endpointId: String
    public var attempts: Int
    public var nextAttemptAt: Timestamp
    public var leaseOwner: String?
    public var leaseExpiresAt: Timestamp?
    public var lastError: String?
    public var deliveredAt: Timestamp?
    public var deadLetteredAt: Timestamp?
}

/// One webhook queue: a customer's deliveries to one endpoint. Ordered, so that a transaction
/// locks several in one order.
/// - Note: Immutable value; `Sendable`.
public struct DeliveryQueueKey: Sendable, Hashable, Comparable {
    public var customerId: Int64
    public var endpointId: String

    public init(customerId: Int64, endpointId: String) {
        self.customerId = customerId
        self.endpointId = endpointId
    }

    public static func < (lhs: DeliveryQueueKey, rhs: DeliveryQueueKey) -> Bool {
        (lhs.customerId, lhs.endpointId) < (rhs.customerId, rhs.endpointId)
    }
}

/// Queues whose due state disagrees with the outbox (`deliveryQueueMismatches`).
/// - Note: Immutable value; `Sendable`.
public struct DeliveryQueueMismatches: Sendable, Hashable {
    /// A delivery pending, the queue drained or missing.
    public var stranded: [DeliveryQueueKey]
    /// Due with nothing pending.
    public var emptyDue: [DeliveryQueueKey]

    public init(stranded: [DeliveryQueueKey], emptyDue: [DeliveryQueueKey]) {
        self.stranded = stranded
        self.emptyDue = emptyDue
    }

    public var isEmpty: Bool { stranded.isEmpty && emptyDue.isEmpty }
}

/// What `repairDeliveryQueues` mended.
/// - Note: Immutable value; `Sendable`.
public struct DeliveryQueueRepair: Sendable, Hashable {
    /// Queues with a pending delivery that were drained or missing, now due.
    public var reopened: Int
    /// Queues due with nothing pending, now drained.
    public var drained: Int

    public init(reopened: Int, drained: Int) {
        self.reopened = reopened
        self.drained = drained
    }
}

/// How far behind webhook delivery is: what is waiting and since when.
/// - Note: Immutable value; `Sendable`.
public struct OutboxBacklog: Sendable, Hashable {
    public var pending: Int
    /// When the oldest pending delivery was enqueued; `nil` when nothing waits.
    public var oldestCreatedAt: Timestamp?

    public init(pending: Int, oldestCreatedAt: Timestamp?) {
        self.pending = pending
        self.oldestCreatedAt = oldestCreatedAt
    }
}

/// A delivery leased to a worker, with what it needs to send it.
/// - Note: Immutable value; `Sendable`.
public struct OutboxDelivery: Sendable, Hashable {
    public var id: Int64
    /// This attempt's number, from 1.
    public var attempt: Int
    /// When the lease ends unless renewed (as claimed).
    public var leaseExpiresAt: Timestamp
    public var endpoint: WebhookEndpoint
    public var event: StoredEvent
    /// The lease on the delivery's queue it was claimed under: what recording it requires.
    public var lease: DeliveryLease
}

/// A worker's hold on one queue of the outbox (one customer's deliveries to one endpoint, sent in
/// event order). Every claim of a queue increments its generation: the fencing token. Recording
/// a delivery, renewing or giving back the lease succeeds only while the queue's lease is still
/// this owner's and this generation, so a worker whose lease expired and was taken by another
/// cannot record anything.
/// - Note: Immutable value; `Sendable`.
public struct DeliveryLease: Sendable, Hashable {
    public var customerId: Int64
    public var endpointId: String
    public var owner: String
    public var generation: Int64
    public var expiresAt: Timestamp

    public init(customerId: Int64, endpointId: String, owner: String, generation: Int64, expiresAt: Timestamp) {
        self.customerId = customerId
        self.endpointId = endpointId
        self.owner = owner
        self.generation = generation
        self.expiresAt = expiresAt
    }
}

/// A job for a worker.
/// - Note: Immutable value; `Sendable`.
public struct JobRecord: Sendable, Hashable {
    public var id: Int64
    /// The app the job works for; `nil` for a job of no app.
    public var appId: String?
    public var kind: String
    public var payload: String
    public var runAt: Timestamp
    public var attempts: Int
    public var leaseOwner: String?
    public var leaseExpiresAt: Timestamp?
    public var lastError: String?
    public var completedAt: Timestamp?
    public var failedAt: Timestamp?
}

/// An administrative action to record.
/// - Note: Immutable value; `Sendable`.
public struct NewAuditEntry: Sendable, Hashable {
    public var at: Timestamp
    /// Who: an API key id, `cli`, …
    public var actor: String
    public var action: String
    public var appId: String?
    /// What changed; never secrets.
    public var detail: JSONValue

    public init(at: Timestamp, actor: String, action: String, appId: String?, detail: JSONValue = .object([:])) {
        self.at = at
        self.actor = actor
        self.action = action
        self.appId = appId
        self.detail = detail
    }
}

/// A recorded administrative action.
/// - Note: Immutable value; `Sendable`.
public struct AuditEntry: Sendable, Hashable {
    public var id: Int64
    public var at: Timestamp
    public var actor: String
    public var action: String
    public var appId: String?
    public var detail: JSONValue
}
