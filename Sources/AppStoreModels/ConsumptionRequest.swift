/// The body of Send Consumption Information (App Store Server API 1.19+), answering a
/// `CONSUMPTION_REQUEST` notification.
///
/// Apple's rules: `customerConsented` must be `true`; `consumptionPercentage` is in milliunits
/// (0...100000, 50000 = 50 %), must be 0 when the item was not delivered, and must be omitted for
/// auto-renewable subscriptions (Apple computes it).
/// - Note: Immutable value; `Sendable`.
public struct ConsumptionRequest: Sendable, Hashable, Codable {
    public var customerConsented: Bool?
    public var consumptionPercentage: Int32?
    public var deliveryStatus: RawEnum<DeliveryStatus>?
    public var refundPreference: RawEnum<RefundPreference>?
    public var sampleContentProvided: Bool?

    public init(
        customerConsented: Bool? = nil, consumptionPercentage: Int32? = nil,
        deliveryStatus: RawEnum<DeliveryStatus>? = nil,
        refundPreference: RawEnum<RefundPreference>? = nil, sampleContentProvided: Bool? = nil
    ) {
        self.customerConsented = customerConsented
        self.consumptionPercentage = consumptionPercentage
        self.deliveryStatus = deliveryStatus
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
    }
}
