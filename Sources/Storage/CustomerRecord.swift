import AppStoreModels

/// One customer of one app: the app's user id plus everything else it is known by.
/// - Note: Immutable value; `Sendable`.
public struct CustomerRecord: Sendable, Hashable, Codable {
    /// The store's key for the customer (stable, engine-assigned).
    public var id: Int64
    public var appId: String
    public var appUserId: String
    public var aliases: [String]
    public var appAccountTokens: [String]
    /// Original transaction ids this customer owns, sorted.
    public var originalTransactionIds: [String]
    public var firstSeenAt: Timestamp
    public var lastSeenAt: Timestamp
}

/// The ways a customer is found.
/// - Note: Immutable value; `Sendable`.
public enum CustomerLookup: Sendable, Hashable {
    case appUserId(String)
    case alias(String)
    case appAccountToken(String)
    case originalTransactionId(String)
}
