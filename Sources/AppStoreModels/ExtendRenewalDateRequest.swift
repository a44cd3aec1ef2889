/// The body of Extend a Subscription Renewal Date.
///
/// Apple allows 1...90 days per extension; `requestIdentifier` makes a retry idempotent.
/// - Note: Immutable value; `Sendable`.
public struct ExtendRenewalDateRequest: Sendable, Hashable, Codable {
    public var extendByDays: Int32?
    public var extendReasonCode: RawEnum<ExtendReasonCode>?
    public var requestIdentifier: String?

    public init(
        extendByDays: Int32? = nil, extendReasonCode: RawEnum<ExtendReasonCode>? = nil,
        requestIdentifier: String? = nil
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
    }
}
