/// The `unified_receipt` of a Server Notification V1: the same latest receipt data a verifyReceipt
/// call would return at the time of the notification.
/// - Note: Immutable value; `Sendable`.
public struct UnifiedReceipt: Sendable, Hashable, Codable {
    public var environment: RawEnum<AppStoreEnvironment>?
    public var latestReceipt: String?
    public var latestReceiptInfo: [LegacyInAppPurchase]?
    public var pendingRenewalInfo: [LegacyPendingRenewalInfo]?
    public var status: VerifyReceiptStatus?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let fields = try LegacyDecodingContainer(decoder)
        environment = try fields.rawEnum("environment", AppStoreEnvironment.self)
        latestReceipt = try fields.string("latest_receipt")
        latestReceiptInfo = try fields.decode([LegacyInAppPurchase].self, "latest_receipt_info")
        pendingRenewalInfo = try fields.decode([LegacyPendingRenewalInfo].self, "pending_renewal_info")
        status = try fields.decode(VerifyReceiptStatus.self, "status")
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = LegacyEncodingContainer(encoder)
        try fields.rawEnum(environment, "environment")
        try fields.string(latestReceipt, "latest_receipt")
        try fields.encode(latestReceiptInfo, "latest_receipt_info")
        try fields.encode(pendingRenewalInfo, "pending_renewal_info")
        try fields.encode(status, "status")
    }
}
