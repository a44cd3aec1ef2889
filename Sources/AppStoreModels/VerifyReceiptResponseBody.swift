/// The JSON body Apple's deprecated `verifyReceipt` endpoint answers with.
///
/// Fields are read leniently (numbers or strings, three date forms) and written in Apple's form,
/// so the same type serves the client and the simulator.
/// - Note: Immutable value; `Sendable`.
public struct VerifyReceiptResponseBody: Sendable, Hashable, Codable {
    public var status: VerifyReceiptStatus?
    public var environment: RawEnum<AppStoreEnvironment>?
    /// Apple's hint for 21100–21199 that the same request may succeed later.
    public var isRetryable: Bool?
    public var receipt: LegacyReceipt?
    /// Base64 of the latest receipt (auto-renewable subscriptions only).
    public var latestReceipt: String?
    /// Every transaction of the customer's subscriptions, in no order you may rely on: see
    /// `sortedByPurchaseDate()`.
    public var latestReceiptInfo: [LegacyInAppPurchase]?
    public var pendingRenewalInfo: [LegacyPendingRenewalInfo]?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let fields = try LegacyDecodingContainer(decoder)
        status = try fields.decode(VerifyReceiptStatus.self, "status")
        environment = try fields.rawEnum("environment", AppStoreEnvironment.self)
        isRetryable = try fields.bool("is-retryable")
        receipt = try fields.decode(LegacyReceipt.self, "receipt")
        latestReceipt = try fields.string("latest_receipt")
        latestReceiptInfo = try fields.decode([LegacyInAppPurchase].self, "latest_receipt_info")
        pendingRenewalInfo = try fields.decode([LegacyPendingRenewalInfo].self, "pending_renewal_info")
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = LegacyEncodingContainer(encoder)
        try fields.encode(status, "status")
        try fields.rawEnum(environment, "environment")
        try fields.bool(isRetryable, "is-retryable")
        try fields.encode(receipt, "receipt")
        try fields.string(latestReceipt, "latest_receipt")
        try fields.encode(latestReceiptInfo, "latest_receipt_info")
        try fields.encode(pendingRenewalInfo, "pending_renewal_info")
    }
}
