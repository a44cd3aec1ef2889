/// The body of Get Transaction Info: one signed transaction (`JWSTransaction`, still to be verified).
/// - Note: Immutable value; `Sendable`.
public struct TransactionInfoResponse: Sendable, Hashable, Codable {
    public var signedTransactionInfo: String?

    public init(signedTransactionInfo: String? = nil) {
        self.signedTransactionInfo = signedTransactionInfo
    }
}
