/// The app and the signed transaction and renewal info a V2 notification is about.
/// - Note: Immutable value; `Sendable`.
public struct NotificationData: Sendable, Hashable, Codable {
    public var environment: RawEnum<AppStoreEnvironment>?
    public var appAppleId: Int64?
    public var bundleId: String?
    public var bundleVersion: String?
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?
    public var status: RawEnum<Status>?
    public var consumptionRequestReason: RawEnum<ConsumptionRequestReason>?

    public init() {}
}
