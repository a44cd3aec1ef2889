import AppStoreModels

/// A stored notification as the admin listing shows it: what arrived and what became of it,
/// without the signed payload (which `notification(appId:uuid:)` reads when wanted).
/// - Note: Immutable value; `Sendable`.
public struct NotificationSummary: Sendable, Hashable {
    /// The row id: the listing's order (newest first) and its cursor.
    public var id: Int64
    public var notificationUUID: String
    public var type: String
    public var subtype: String?
    public var environment: AppStoreEnvironment?
    public var originalTransactionId: String?
    public var signedDate: Timestamp
    public var receivedAt: Timestamp
    /// `applied`, `unclaimed` or `recorded` (`FactBatch.Outcome`); `nil` while not processed.
    public var outcome: String?

    public init(
        id: Int64, notificationUUID: String, type: String, subtype: String?, environment: AppStoreEnvironment?,
        originalTransactionId: String?, signedDate: Timestamp, receivedAt: Timestamp, outcome: String?
    ) {
        self.id = id
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.signedDate = signedDate
        self.receivedAt = receivedAt
        self.outcome = outcome
    }
}

/// Which of an app's notifications `recentNotifications` lists: an outcome and a type, each
/// optional, and a page (newest first, before the row id `before`).
/// - Note: Immutable value; `Sendable`.
public struct NotificationFilter: Sendable, Hashable {
    public var outcome: String?
    public var type: String?
    public var before: Int64?
    public var limit: Int

    public init(outcome: String? = nil, type: String? = nil, before: Int64? = nil, limit: Int) {
        self.outcome = outcome
        self.type = type
        self.before = before
        self.limit = limit
    }
}
