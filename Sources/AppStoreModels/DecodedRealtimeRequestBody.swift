import Foundation

/// The decoded signed request Apple sends to your Get Retention Message endpoint when a customer
/// is about to cancel, asking which retention message to show.
/// - Note: Immutable value; `Sendable`.
public struct DecodedRealtimeRequestBody: Sendable, Hashable, Codable {
    public var originalTransactionId: String?
    public var appAppleId: Int64?
    public var productId: String?
    /// The customer's locale, such as `en-US`.
    public var userLocale: String?
    public var requestIdentifier: UUID?
    public var environment: RawEnum<AppStoreEnvironment>?
    public var signedDate: Timestamp?

    public init(
        originalTransactionId: String? = nil, appAppleId: Int64? = nil, productId: String? = nil,
        userLocale: String? = nil, requestIdentifier: UUID? = nil,
        environment: RawEnum<AppStoreEnvironment>? = nil,
        signedDate: Timestamp? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.appAppleId = appAppleId
        self.productId = productId
        self.userLocale = userLocale
        self.requestIdentifier = requestIdentifier
        self.environment = environment
        self.signedDate = signedDate
    }
}
