import AppStoreModels

/// A stored customer state whose next scheduled change (`valid_until`) has come: the access
/// scheduler re-evaluates it so that the change is committed, with its events, at that instant.
/// - Note: Immutable value; `Sendable`.
public struct DueCustomerState: Sendable, Hashable {
    public var customerId: Int64
    public var environment: AppStoreEnvironment
    /// The instant the state was scheduled to change at.
    public var dueAt: Timestamp

    public init(customerId: Int64, environment: AppStoreEnvironment, dueAt: Timestamp) {
        self.customerId = customerId
        self.environment = environment
        self.dueAt = dueAt
    }
}
