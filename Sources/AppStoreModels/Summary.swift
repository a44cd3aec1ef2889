/// The outcome of a mass renewal-date extension (`RENEWAL_EXTENSION` / `SUMMARY`).
/// - Note: Immutable value; `Sendable`.
public struct Summary: Sendable, Hashable, Codable {
    public var environment: RawEnum<AppStoreEnvironment>?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var productId: String?
    public var requestIdentifier: String?
    public var storefrontCountryCodes: [String]?
    public var succeededCount: Int64?
    public var failedCount: Int64?

    public init() {}
}
