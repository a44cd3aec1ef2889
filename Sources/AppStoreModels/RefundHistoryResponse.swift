/// One page of Get Refund History: refunded or revoked signed transactions and the next-page token.
/// - Note: Immutable value; `Sendable`.
public struct RefundHistoryResponse: Sendable, Hashable, Codable {
    public var signedTransactions: [String]?
    public var revision: String?
    public var hasMore: Bool?

    public init(signedTransactions: [String]? = nil, revision: String? = nil, hasMore: Bool? = nil) {
        self.signedTransactions = signedTransactions
        self.revision = revision
        self.hasMore = hasMore
    }
}
