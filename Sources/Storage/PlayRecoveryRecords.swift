import AppStoreModels

/// The voided-purchases polling cursor of one app (migration `0017_play_recovery`).
/// - Note: Immutable value; `Sendable`.
public struct PlayVoidedCursor: Sendable, Hashable {
    public var appId: String
    /// Every purchase Google voided before this instant has been ingested; `nil` before the
    /// first complete run.
    public var cursorAt: Timestamp?
    public var leaseOwner: String?
    public var leaseExpiresAt: Timestamp?
    /// When a worker last started a run.
    public var lastRunAt: Timestamp?
    /// Why the last run stopped early (`nil` when it completed).
    public var lastError: String?
    public var updatedAt: Timestamp

    public init(
        appId: String, cursorAt: Timestamp?, leaseOwner: String?, leaseExpiresAt: Timestamp?, lastRunAt: Timestamp?,
        lastError: String?, updatedAt: Timestamp
    ) {
        self.appId = appId
        self.cursorAt = cursorAt
        self.leaseOwner = leaseOwner
        self.leaseExpiresAt = leaseExpiresAt
        self.lastRunAt = lastRunAt
        self.lastError = lastError
        self.updatedAt = updatedAt
    }
}

/// When a watched Play subscription is due for a re-read (`subscriptionsv2.get`). Every
/// duration is in milliseconds.
/// - Note: Immutable value; `Sendable`.
public struct PlayRereadRules: Sendable, Hashable {
    /// A token read active, canceled or in grace whose expiry passed this long ago with no read
    /// since (a lost renewal, expiry or hold notification) is re-read.
    public var expiryDelayMilliseconds: Int64
    /// A token read in grace, on hold or paused is re-read when nothing was read or re-read for
    /// this long (a lost recovery, hold, expiry or resume notification).
    public var pendingIntervalMilliseconds: Int64

    public init(expiryDelayMilliseconds: Int64, pendingIntervalMilliseconds: Int64) {
        self.expiryDelayMilliseconds = max(0, expiryDelayMilliseconds)
        self.pendingIntervalMilliseconds = max(1, pendingIntervalMilliseconds)
    }
}

/// A watched Play subscription token: its newest read's state and expiry, and the re-reads.
/// - Note: Immutable value; `Sendable`.
public struct PlaySubscriptionWatch: Sendable, Hashable {
    public var appId: String
    public var purchaseToken: String
    /// `subscriptionState` of the newest read, as Google sent it.
    public var state: String
    /// The latest line-item `expiryTime` of the newest read.
    public var expiresAt: Timestamp?
    public var lastReadAt: Timestamp
    public var lastRereadAt: Timestamp?

    public init(
        appId: String, purchaseToken: String, state: String, expiresAt: Timestamp?, lastReadAt: Timestamp,
        lastRereadAt: Timestamp?
    ) {
        self.appId = appId
        self.purchaseToken = purchaseToken
        self.state = state
        self.expiresAt = expiresAt
        self.lastReadAt = lastReadAt
        self.lastRereadAt = lastRereadAt
    }
}
