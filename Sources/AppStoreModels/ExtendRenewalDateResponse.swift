/// The outcome of extending one subscription's renewal date.
/// - Note: Immutable value; `Sendable`.
public struct ExtendRenewalDateResponse: Sendable, Hashable, Codable {
    public var originalTransactionId: String?
    public var webOrderLineItemId: String?
    public var success: Bool?
    /// The new renewal date.
    public var effectiveDate: Timestamp?

    public init(
        originalTransactionId: String? = nil, webOrderLineItemId: String? = nil, success: Bool? = nil,
        effectiveDate: Timestamp? = nil
    ) {
        self.originalTransactionId = originalTransactionId
        self.webOrderLineItemId = webOrderLineItemId
        self.success = success
        self.effectiveDate = effectiveDate
    }
}
