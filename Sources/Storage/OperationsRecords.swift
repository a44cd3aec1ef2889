import AppStoreModels

/// Notifications received for one app, counted by type and outcome (the dashboard's intake
/// table).
/// - Note: Immutable value; `Sendable`.
public struct NotificationIntakeCount: Sendable, Hashable {
    public var notificationType: String
    public var subtype: String?
    /// `applied`, `unclaimed`, `recorded`, `duplicate`…; `nil` while unprocessed.
    public var outcome: String?
    public var count: Int
    public var lastReceivedAt: Timestamp

    public init(notificationType: String, subtype: String?, outcome: String?, count: Int, lastReceivedAt: Timestamp) {
        self.notificationType = notificationType
        self.subtype = subtype
        self.outcome = outcome
        self.count = count
        self.lastReceivedAt = lastReceivedAt
    }
}

/// Refused notifications of one app counted by the trust rule that refused them (from the
/// audit log's `notification.rejected` entries, which every instance writes).
/// - Note: Immutable value; `Sendable`.
public struct VerificationFailureCount: Sendable, Hashable {
    public var rule: String
    public var count: Int
    public var lastAt: Timestamp

    public init(rule: String, count: Int, lastAt: Timestamp) {
        self.rule = rule
        self.count = count
        self.lastAt = lastAt
    }
}

/// The state of one app's webhook outbox, in counts.
/// - Note: Immutable value; `Sendable`.
public struct DeliverySummary: Sendable, Hashable {
    /// Neither delivered nor dead-lettered (failing ones included).
    public var pending: Int
    /// Pending after at least one failed attempt.
    public var failing: Int
    public var deadLettered: Int
    public var delivered: Int

    public init(pending: Int, failing: Int, deadLettered: Int, delivered: Int) {
        self.pending = pending
        self.failing = failing
        self.deadLettered = deadLettered
        self.delivered = delivered
    }
}

/// One kind of job of one app in the durable queue, in counts.
/// - Note: Immutable value; `Sendable`.
public struct JobQueueSummary: Sendable, Hashable {
    public var kind: String
    /// Neither completed nor failed for good.
    public var queued: Int
    /// Queued and under a live lease at the instant asked about.
    public var running: Int
    public var failed: Int
    public var completed: Int
    /// When the oldest queued job is (or was) due.
    public var oldestDueAt: Timestamp?

    public init(kind: String, queued: Int, running: Int, failed: Int, completed: Int, oldestDueAt: Timestamp?) {
        self.kind = kind
        self.queued = queued
        self.running = running
        self.failed = failed
        self.completed = completed
        self.oldestDueAt = oldestDueAt
    }
}

/// What status polling watches for one app and environment.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionWatchSummary: Sendable, Hashable {
    public var environment: AppStoreEnvironment
    public var watched: Int
    public var inBillingRetry: Int
    public var neverPolled: Int
    public var lastPolledAt: Timestamp?

    public init(
        environment: AppStoreEnvironment, watched: Int, inBillingRetry: Int, neverPolled: Int,
        lastPolledAt: Timestamp?
    ) {
        self.environment = environment
        self.watched = watched
        self.inBillingRetry = inBillingRetry
        self.neverPolled = neverPolled
        self.lastPolledAt = lastPolledAt
    }
}

/// How many records of one kind began on one UTC day (the dashboard's interim daily series).
/// - Note: Immutable value; `Sendable`.
public struct DailyCount: Sendable, Hashable {
    /// Days since 1970-01-01 (UTC).
    public var day: Int64
    public var count: Int

    public init(day: Int64, count: Int) {
        self.day = day
        self.count = count
    }
}
