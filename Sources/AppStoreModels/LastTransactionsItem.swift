/// The most recent transaction and renewal info of one subscription, with its status.
/// The signed parts are unverified JWS strings.
/// - Note: Immutable value; `Sendable`.
public struct LastTransactionsItem: Sendable, Hashable, Codable {
    public var status: RawEnum<Status>?
    public var originalTransactionId: String?
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?

    public init(
        status: RawEnum<Status>? = nil, originalTransactionId: String? = nil,
        signedTransactionInfo: String? = nil,
        signedRenewalInfo: String? = nil
    ) {
        self.status = status
        self.originalTransactionId = originalTransactionId
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}
