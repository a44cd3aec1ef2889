/// The app a notification without transaction data is about (`RESCIND_CONSENT`).
/// - Note: Immutable value; `Sendable`.
public struct AppData: Sendable, Hashable, Codable {
    public var appAppleId: Int64?
    public var bundleId: String?
    public var environment: RawEnum<AppStoreEnvironment>?
    public var signedAppTransactionInfo: String?

    public init() {}
}
