/// An external purchase token (`EXTERNAL_PURCHASE_TOKEN` notifications).
/// - Note: Immutable value; `Sendable`.
public struct ExternalPurchaseToken: Sendable, Hashable, Codable {
    public var externalPurchaseId: String?
    public var tokenCreationDate: Timestamp?
    public var appAppleId: Int64?
    public var bundleId: String?

    public init() {}

    /// Apple does not send an environment here: sandbox tokens are those whose id starts
    /// with `SANDBOX`, as Apple's libraries decide.
    public var derivedEnvironment: AppStoreEnvironment {
        (externalPurchaseId ?? "").hasPrefix("SANDBOX") ? .sandbox : .production
    }
}
