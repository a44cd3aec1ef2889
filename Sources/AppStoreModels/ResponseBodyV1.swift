/// The JSON body of an App Store Server Notification V1 (deprecated by Apple, still sent to apps
/// configured for it). It is not signed: trust comes from `password` matching the shared secret
/// and from re-verifying `unified_receipt.latest_receipt`.
///
/// `description` redacts `password`.
/// - Note: Immutable value; `Sendable`.
public struct ResponseBodyV1: Sendable, Hashable, Codable, CustomStringConvertible,
    CustomDebugStringConvertible
{
    public var notificationType: RawEnum<NotificationTypeV1>?
    /// The shared secret the App Store echoes back.
    public var password: String?
    public var environment: RawEnum<NotificationEnvironmentV1>?
    public var autoRenewAdamId: String?
    public var autoRenewProductId: String?
    /// Apple writes `"true"` / `"false"` here (unlike `"1"` / `"0"` in pending renewal info).
    public var autoRenewStatus: Bool?
    public var autoRenewStatusChangeDate: Timestamp?
    public var expirationIntent: RawEnum<ExpirationIntent>?
    public var unifiedReceipt: UnifiedReceipt?
    /// The app's bundle ID.
    public var bid: String?
    /// The app's bundle version.
    public var bvrs: String?
    public var originalTransactionId: String?
    public var cancellationDate: Timestamp?
    public var webOrderLineItemId: String?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let fields = try LegacyDecodingContainer(decoder)
        notificationType = try fields.rawEnum("notification_type", NotificationTypeV1.self)
        password = try fields.string("password")
        environment = try fields.rawEnum("environment", NotificationEnvironmentV1.self)
        autoRenewAdamId = try fields.string("auto_renew_adam_id")
        autoRenewProductId = try fields.string("auto_renew_product_id")
        autoRenewStatus = try fields.bool("auto_renew_status")
        autoRenewStatusChangeDate = try fields.date("auto_renew_status_change_date")
        expirationIntent = try fields.rawEnum("expiration_intent", ExpirationIntent.self)
        unifiedReceipt = try fields.decode(UnifiedReceipt.self, "unified_receipt")
        bid = try fields.string("bid")
        bvrs = try fields.string("bvrs")
        originalTransactionId = try fields.string("original_transaction_id")
        cancellationDate = try fields.date("cancellation_date")
        webOrderLineItemId = try fields.string("web_order_line_item_id")
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = LegacyEncodingContainer(encoder)
        try fields.rawEnum(notificationType, "notification_type")
        try fields.string(password, "password")
        try fields.rawEnum(environment, "environment")
        try fields.string(autoRenewAdamId, "auto_renew_adam_id")
        try fields.string(autoRenewProductId, "auto_renew_product_id")
        try fields.boolAsString(autoRenewStatus, "auto_renew_status", .word)
        try fields.date(autoRenewStatusChangeDate, "auto_renew_status_change_date")
        try fields.rawEnumAsString(expirationIntent, "expiration_intent")
        try fields.encode(unifiedReceipt, "unified_receipt")
        try fields.string(bid, "bid")
        try fields.string(bvrs, "bvrs")
        try fields.string(originalTransactionId, "original_transaction_id")
        try fields.date(cancellationDate, "cancellation_date")
        try fields.string(webOrderLineItemId, "web_order_line_item_id")
    }

    public var description: String {
        "ResponseBodyV1(notificationType: \(notificationType.map { "\($0)" } ?? "nil"), "
            + "environment: \(environment.map { "\($0)" } ?? "nil"), bid: \(bid ?? "nil"), "
            + "originalTransactionId: \(originalTransactionId ?? "nil"), "
            + "password: \(password == nil ? "nil" : "<redacted>"))"
    }

    public var debugDescription: String { description }
}
