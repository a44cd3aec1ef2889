/// The body of Extend Subscription Renewal Dates for All Active Subscribers of one product.
/// Omit `storefrontCountryCodes` to apply to every storefront.
/// - Note: Immutable value; `Sendable`.
public struct MassExtendRenewalDateRequest: Sendable, Hashable, Codable {
    public var extendByDays: Int32?
    public var extendReasonCode: RawEnum<ExtendReasonCode>?
    public var requestIdentifier: String?
    public var storefrontCountryCodes: [String]?
    public var productId: String?

    public init(
        extendByDays: Int32? = nil, extendReasonCode: RawEnum<ExtendReasonCode>? = nil,
        requestIdentifier: String? = nil,
        storefrontCountryCodes: [String]? = nil, productId: String? = nil
    ) {
        self.extendByDays = extendByDays
        self.extendReasonCode = extendReasonCode
        self.requestIdentifier = requestIdentifier
        self.storefrontCountryCodes = storefrontCountryCodes
        self.productId = productId
    }
}
