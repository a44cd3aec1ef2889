/// Apple's acknowledgement of a mass renewal-date extension; the outcome arrives later as a
/// `RENEWAL_EXTENSION` / `SUMMARY` notification or through the status endpoint.
/// - Note: Immutable value; `Sendable`.
public struct MassExtendRenewalDateResponse: Sendable, Hashable, Codable {
    public var requestIdentifier: String?

    public init(requestIdentifier: String? = nil) { self.requestIdentifier = requestIdentifier }
}
