/// The body of Get All Subscription Statuses: every subscription group of the customer with the
/// latest signed transaction and renewal info of each subscription.
/// - Note: Immutable value; `Sendable`.
public struct StatusResponse: Sendable, Hashable, Codable {
    public var environment: RawEnum<AppStoreEnvironment>?
    public var bundleId: String?
    public var appAppleId: Int64?
    public var data: [SubscriptionGroupIdentifierItem]?

    public init(
        environment: RawEnum<AppStoreEnvironment>? = nil, bundleId: String? = nil,
        appAppleId: Int64? = nil,
        data: [SubscriptionGroupIdentifierItem]? = nil
    ) {
        self.environment = environment
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.data = data
    }
}
