import AppStoreModels

/// Where an analytics rebuild stands (migration 0020; docs/analytics.md).
/// - Note: Immutable value; `Sendable`.
public enum AnalyticsRebuildStatus: String, Sendable, Hashable, CaseIterable {
    /// Waiting for an instance's job worker to claim it.
    case queued
    /// Claimed at least once and not finished: under a live lease, or waiting for its lease to
    /// run out after its instance died (then another instance goes on from its position).
    case running
    /// Every customer recomputed and the rows reconciled.
    case completed
    /// A later change of the commission terms asked for a new rebuild (`supersededBy`); this one
    /// stopped at its next batch.
    case superseded
    /// Its job was given up on (`error`); the next change of the terms queues a new one.
    case failed
}

/// One analytics rebuild of an app, with what its job says.
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsRebuildRecord: Sendable, Hashable {
    /// The `jobs.kind` of the job that runs a rebuild; its payload is `{"appId", "rebuildId"}`.
    public static let jobKind = "analytics_rebuild"
    /// The dedupe key of that job: one unfinished rebuild job per app.
    public static let jobDedupeKey = "analytics_rebuild"

    public var id: Int64
    public var appId: String
    public var jobId: Int64?
    /// The analytics settings version whose commission terms asked for it.
    public var settingsVersion: Int64
    public var status: AnalyticsRebuildStatus
    /// The last customer id recomputed (0 before the first): where a run taken over goes on.
    public var afterCustomerId: Int64
    public var customersDone: Int64
    /// Customers done plus those still to do when the latest run started (0 before).
    public var customersTotal: Int64
    public var contributionsChanged: Int64
    public var rowsRepaired: Int64
    public var supersededBy: Int64?
    public var requestedAt: Timestamp
    public var startedAt: Timestamp?
    public var finishedAt: Timestamp?
    /// Runs of its job so far (a run taken over after a lease ran out counts again).
    public var attempts: Int
    /// The job's last error (a run that failed and was retried, or gave up).
    public var lastError: String?

    /// Whether it is still to be run or running.
    public var isUnfinished: Bool { status == .queued || status == .running }

    public init(
        id: Int64, appId: String, jobId: Int64?, settingsVersion: Int64, status: AnalyticsRebuildStatus,
        afterCustomerId: Int64, customersDone: Int64, customersTotal: Int64, contributionsChanged: Int64,
        rowsRepaired: Int64, supersededBy: Int64?, requestedAt: Timestamp, startedAt: Timestamp?,
        finishedAt: Timestamp?, attempts: Int, lastError: String?
    ) {
        self.id = id
        self.appId = appId
        self.jobId = jobId
        self.settingsVersion = settingsVersion
        self.status = status
        self.afterCustomerId = afterCustomerId
        self.customersDone = customersDone
        self.customersTotal = customersTotal
        self.contributionsChanged = contributionsChanged
        self.rowsRepaired = rowsRepaired
        self.supersededBy = supersededBy
        self.requestedAt = requestedAt
        self.startedAt = startedAt
        self.finishedAt = finishedAt
        self.attempts = attempts
        self.lastError = lastError
    }
}

/// The payload of an `analytics_rebuild` job.
/// - Note: Immutable value; `Sendable`.
public struct AnalyticsRebuildJobPayload: Sendable, Hashable, Codable {
    public var appId: String
    public var rebuildId: Int64

    public init(appId: String, rebuildId: Int64) {
        self.appId = appId
        self.rebuildId = rebuildId
    }
}
