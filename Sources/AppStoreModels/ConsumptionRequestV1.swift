import Foundation

/// The body of Send Consumption Information V1, answering a `CONSUMPTION_REQUEST` notification with
/// the integer-coded bands Apple defined first. Apple deprecated it for `ConsumptionRequest`.
///
/// Apple rejects the body unless `customerConsented` is `true`.
/// - Note: Immutable value; `Sendable`.
public struct ConsumptionRequestV1: Sendable, Hashable, Codable {
    public var customerConsented: Bool?
    public var consumptionStatus: RawEnum<ConsumptionStatus>?
    public var platform: RawEnum<Platform>?
    public var sampleContentProvided: Bool?
    public var deliveryStatus: RawEnum<DeliveryStatusV1>?
    public var appAccountToken: UUID?
    public var accountTenure: RawEnum<AccountTenure>?
    public var playTime: RawEnum<PlayTime>?
    public var lifetimeDollarsRefunded: RawEnum<LifetimeDollarsRefunded>?
    public var lifetimeDollarsPurchased: RawEnum<LifetimeDollarsPurchased>?
    public var userStatus: RawEnum<UserStatus>?
    public var refundPreference: RawEnum<RefundPreferenceV1>?

    public init(
        customerConsented: Bool? = nil, consumptionStatus: RawEnum<ConsumptionStatus>? = nil,
        platform: RawEnum<Platform>? = nil, sampleContentProvided: Bool? = nil,
        deliveryStatus: RawEnum<DeliveryStatusV1>? = nil, appAccountToken: UUID? = nil,
        accountTenure: RawEnum<AccountTenure>? = nil, playTime: RawEnum<PlayTime>? = nil,
        lifetimeDollarsRefunded: RawEnum<LifetimeDollarsRefunded>? = nil,
        lifetimeDollarsPurchased: RawEnum<LifetimeDollarsPurchased>? = nil,
        userStatus: RawEnum<UserStatus>? = nil,
        refundPreference: RawEnum<RefundPreferenceV1>? = nil
    ) {
        self.customerConsented = customerConsented
        self.consumptionStatus = consumptionStatus
        self.platform = platform
        self.sampleContentProvided = sampleContentProvided
        self.deliveryStatus = deliveryStatus
        self.appAccountToken = appAccountToken
        self.accountTenure = accountTenure
        self.playTime = playTime
        self.lifetimeDollarsRefunded = lifetimeDollarsRefunded
        self.lifetimeDollarsPurchased = lifetimeDollarsPurchased
        self.userStatus = userStatus
        self.refundPreference = refundPreference
    }
}
