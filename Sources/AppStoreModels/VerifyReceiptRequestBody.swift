/// The JSON body posted to Apple's deprecated `verifyReceipt` endpoint.
///
/// `password` is the app's shared secret: `description` redacts it so that logging the body
/// never leaks it.
/// - Note: Immutable value; `Sendable`.
public struct VerifyReceiptRequestBody: Sendable, Hashable, Codable, CustomStringConvertible,
    CustomDebugStringConvertible
{
    /// Base64 of the app receipt.
    public var receiptData: String?
    /// The app-specific or primary shared secret (needed for auto-renewable subscriptions).
    public var password: String?
    /// Ask Apple to return only the latest renewal of each subscription in `latest_receipt_info`.
    public var excludeOldTransactions: Bool?

    public init(
        receiptData: String? = nil, password: String? = nil, excludeOldTransactions: Bool? = nil
    ) {
        self.receiptData = receiptData
        self.password = password
        self.excludeOldTransactions = excludeOldTransactions
    }

    public init(from decoder: any Decoder) throws {
        let fields = try LegacyDecodingContainer(decoder)
        receiptData = try fields.string("receipt-data")
        password = try fields.string("password")
        excludeOldTransactions = try fields.bool("exclude-old-transactions")
    }

    public func encode(to encoder: any Encoder) throws {
        var fields = LegacyEncodingContainer(encoder)
        try fields.string(receiptData, "receipt-data")
        try fields.string(password, "password")
        try fields.bool(excludeOldTransactions, "exclude-old-transactions")
    }

    public var description: String {
        "VerifyReceiptRequestBody(receiptData: \(receiptData.map { "\($0.utf8.count) bytes" } ?? "nil"), "
            + "password: \(password == nil ? "nil" : "<redacted>"), "
            + "excludeOldTransactions: \(excludeOldTransactions.map { "\($0)" } ?? "nil"))"
    }

    public var debugDescription: String { description }
}
