/// The decoded app receipt in a verifyReceipt response (`receipt`).
///
/// `inApp` holds the purchases the receipt contained when the device last refreshed it; for the
/// current state of subscriptions read the response's `latestReceiptInfo` instead.
/// - Note: Immutable value; `Sendable`.
public struct LegacyReceipt: Sendable, Hashable, Codable {
    public var adamId: Int64?
    public var appItemId: Int64?
    public var applicationVersion: String?
    public var bundleId: String?
    public var downloadId: Int64?
    /// Volume Purchase Program receipts only.
    public var expirationDate: Timestamp?
    public var inApp: [LegacyInAppPurchase]?
    public var originalApplicationVersion: String?
    public var originalPurchaseDate: Timestamp?
    public var preorderDate: Timestamp?
    public var receiptCreationDate: Timestamp?
    /// `Production`, `ProductionVPP`, `ProductionSandbox` or `ProductionVPPSandbox`.
    public var receiptType: String?
    public var requestDate: Timestamp?
    public var versionExternalIdentifier: Int64?

    public init() {}

    public init(from decoder: any Decoder) throws {
        let fields = try LegacyDecodingContainer(decoder)
        adamId = try fields.int64("adam_id")
        appItemId = try fields.int64("app_item_id")
        applicationVersion = try fields.string("application_version")
        bundleId = try fields.string("bundle_id")
        downloadId = try fields.int64("download_id")
        expirationDate = try fields.date("expiration_date")
        inApp = try fields.decode([LegacyInAppPurchase].self, "in_app")
        originalApplicationVersion = try fields.string("original_application_version")
        originalPurchaseDate = try fields.date("original_purchase_date")
        preorderDate = try fields.date("preorder_date")
        receiptCreationDate = try fields.date("receipt_creation_date")
        receiptType = try fields.string("receipt_type")
        requestDate = try fields.date("request_date")
        versionExternalIdentifier = try fields.int64("version_external_identifier")
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = LegacyEncodingContainer(encoder)
        try fields.int64(adamId, "adam_id")
        try fields.int64(appItemId, "app_item_id")
        try fields.string(applicationVersion, "application_version")
        try fields.string(bundleId, "bundle_id")
        try fields.int64(downloadId, "download_id")
        try fields.date(expirationDate, "expiration_date")
        try fields.encode(inApp, "in_app")
        try fields.string(originalApplicationVersion, "original_application_version")
        try fields.date(originalPurchaseDate, "original_purchase_date")
        try fields.date(preorderDate, "preorder_date")
        try fields.date(receiptCreationDate, "receipt_creation_date")
        try fields.string(receiptType, "receipt_type")
        try fields.date(requestDate, "request_date")
        try fields.int64(versionExternalIdentifier, "version_external_identifier")
    }
}
