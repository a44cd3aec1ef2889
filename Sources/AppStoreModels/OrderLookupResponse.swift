/// The body of Look Up Order ID: whether the order ID is valid and the signed transactions it contains.
/// - Note: Immutable value; `Sendable`.
public struct OrderLookupResponse: Sendable, Hashable, Codable {
    public var status: RawEnum<OrderLookupStatus>?
    public var signedTransactions: [String]?

    public init(status: RawEnum<OrderLookupStatus>? = nil, signedTransactions: [String]? = nil) {
        self.status = status
        self.signedTransactions = signedTransactions
    }
}
