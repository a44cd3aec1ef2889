/// One subscription group in a `StatusResponse`, with the latest transaction of each subscription in it.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionGroupIdentifierItem: Sendable, Hashable, Codable {
    public var subscriptionGroupIdentifier: String?
    public var lastTransactions: [LastTransactionsItem]?

    public init(
        subscriptionGroupIdentifier: String? = nil, lastTransactions: [LastTransactionsItem]? = nil
    ) {
        self.subscriptionGroupIdentifier = subscriptionGroupIdentifier
        self.lastTransactions = lastTransactions
    }
}
