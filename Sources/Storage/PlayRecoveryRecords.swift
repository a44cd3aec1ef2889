import AppStoreModels
import Entitlements

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
    /// The window a run left open (migration `0019_play_voided_resume`): listed up to
    /// `pageToken`, the next page; `nil` when no window is open.
    public var openWindow: PlayVoidedWindow?

    public init(
        appId: String, cursorAt: Timestamp?, leaseOwner: String?, leaseExpiresAt: Timestamp?, lastRunAt: Timestamp?,
        lastError: String?, updatedAt: Timestamp, openWindow: PlayVoidedWindow? = nil
    ) {
        self.openWindow = openWindow
        self.appId = appId
        self.cursorAt = cursorAt
        self.leaseOwner = leaseOwner
        self.leaseExpiresAt = leaseExpiresAt
        self.lastRunAt = lastRunAt
        self.lastError = lastError
        self.updatedAt = updatedAt
    }
}

/// A voided-purchases window being listed: its bounds (voided times) and Google's page token
/// of the next page.
/// - Note: Immutable value; `Sendable`.
public struct PlayVoidedWindow: Sendable, Hashable {
    public var start: Timestamp
    public var end: Timestamp
    public var pageToken: String

    public init(start: Timestamp, end: Timestamp, pageToken: String) {
        self.start = start
        self.end = end
        self.pageToken = pageToken
    }
}

/// A voided purchase kept for a purchase token Storekeeper has not read: it refunds nothing
/// until the token arrives (posted by the app, or read after a notification), then applies.
/// - Note: Immutable value; `Sendable`.
public struct PlayUnmatchedVoided: Sendable, Hashable {
    public var fact: PlayVoidedPurchaseFact
    /// `notification` or `voided_poll`.
    public var source: String
    public var receivedAt: Timestamp

    public init(fact: PlayVoidedPurchaseFact, source: String, receivedAt: Timestamp) {
        self.fact = fact
        self.source = source
        self.receivedAt = receivedAt
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
