/// The body of Get App Transaction Info: the customer's signed app transaction (`JWSAppTransaction`).
/// - Note: Immutable value; `Sendable`.
public struct AppTransactionInfoResponse: Sendable, Hashable, Codable {
    public var signedAppTransactionInfo: String?

    public init(signedAppTransactionInfo: String? = nil) {
        self.signedAppTransactionInfo = signedAppTransactionInfo
    }
}
