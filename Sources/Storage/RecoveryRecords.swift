import AppStoreModels

/// The notification-history replay cursor of one app and environment.
/// - Note: Immutable value; `Sendable`.
public struct HistoryCursor: Sendable, Hashable {
    public var appId: String
    public var environment: AppStoreEnvironment
    /// Everything Apple signed before this instant has been ingested; `nil` before the first
    /// complete run.
    public var cursorAt: Timestamp?
    public var leaseOwner: String?
    public var leaseExpiresAt: Timestamp?
    /// When a worker last started a run.
    public var lastRunAt: Timestamp?
    /// Why the last run stopped early (`nil` when it completed).
    public var lastError: String?
    public var updatedAt: Timestamp

    public init(
        appId: String, environment: AppStoreEnvironment, cursorAt: Timestamp?, leaseOwner: String?,
        leaseExpiresAt: Timestamp?, lastRunAt: Timestamp?, lastError: String?, updatedAt: Timestamp
    ) {
        self.appId = appId
        self.environment = environment
        self.cursorAt = cursorAt
        self.leaseOwner = leaseOwner
        self.leaseExpiresAt = leaseExpiresAt
        self.lastRunAt = lastRunAt
        self.lastError = lastError
        self.updatedAt = updatedAt
    }
}

/// What a commit tells status polling about one auto-renewable original transaction: its
/// expiry (from a transaction), its billing-retry flag (from a renewal info, newest signed
/// wins) and that a fact arrived at `factAt`.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionWatchUpdate: Sendable, Hashable {
    public var appId: String
    public var environment: AppStoreEnvironment
    public var originalTransactionId: String
    public var expiresAt: Timestamp?
    /// The renewal info's `signedDate` and `isInBillingRetryPeriod`, when the fact is one.
    public var renewalSignedAt: Timestamp?
    public var billingRetry: Bool?
    public var factAt: Timestamp

    public init(
        appId: String, environment: AppStoreEnvironment, originalTransactionId: String, expiresAt: Timestamp? = nil,
        renewalSignedAt: Timestamp? = nil, billingRetry: Bool? = nil, factAt: Timestamp
    ) {
        self.appId = appId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.expiresAt = expiresAt
        self.renewalSignedAt = renewalSignedAt
        self.billingRetry = billingRetry
        self.factAt = factAt
    }
}

/// When a watched subscription is due for a status poll. Every instant is epoch ms.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionPollRules: Sendable, Hashable {
    /// An expiry with no fact since is polled this long after `expiresDate`.
    public var expiryDelayMilliseconds: Int64
    /// A subscription in billing retry is polled this often.
    public var billingRetryIntervalMilliseconds: Int64
    /// An active subscription with no fact (and no poll) for this long is polled.
    public var staleAfterMilliseconds: Int64

    public init(expiryDelayMilliseconds: Int64, billingRetryIntervalMilliseconds: Int64, staleAfterMilliseconds: Int64)
    {
        self.expiryDelayMilliseconds = max(0, expiryDelayMilliseconds)
        self.billingRetryIntervalMilliseconds = max(1, billingRetryIntervalMilliseconds)
        self.staleAfterMilliseconds = max(1, staleAfterMilliseconds)
    }
}

/// A watched subscription claimed for a status poll.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionPoll: Sendable, Hashable {
    public var appId: String
    public var environment: AppStoreEnvironment
    public var originalTransactionId: String
    public var expiresAt: Timestamp?
    public var billingRetry: Bool
    public var lastFactAt: Timestamp
    public var lastPolledAt: Timestamp?

    public init(
        appId: String, environment: AppStoreEnvironment, originalTransactionId: String, expiresAt: Timestamp?,
        billingRetry: Bool, lastFactAt: Timestamp, lastPolledAt: Timestamp?
    ) {
        self.appId = appId
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.expiresAt = expiresAt
        self.billingRetry = billingRetry
        self.lastFactAt = lastFactAt
        self.lastPolledAt = lastPolledAt
    }
}
