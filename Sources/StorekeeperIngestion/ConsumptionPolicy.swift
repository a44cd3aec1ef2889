import AppStoreModels

/// How an app answers Apple's `CONSUMPTION_REQUEST` (stored in `AppSettings.consumption`,
/// set through the admin API; `AppSettings.answerConsumptionRequests` turns answering on). What the app reported about a customer and a transaction wins
/// over the policy's defaults; the policy fills in what the app did not say.
/// - Note: Immutable value; `Sendable`.
public struct ConsumptionPolicy: Sendable, Hashable, Codable {
    /// The refund the developer prefers, sent with every answer; `nil`: none stated.
    public var refundPreference: RefundPreference?
    /// Whether the app offers a free sample or trial of its content (sent as
    /// `sampleContentProvided`).
    public var sampleContentProvided: Bool
    /// The delivery status sent when the app reported none for the transaction.
    public var defaultDeliveryStatus: DeliveryStatus
    /// For a subscription the app reported no usage for, estimate it from the time used of the
    /// period (purchase to expiry); otherwise the percentage is omitted.
    public var estimateSubscriptionUsage: Bool

    public init(
        refundPreference: RefundPreference? = nil, sampleContentProvided: Bool = false,
        defaultDeliveryStatus: DeliveryStatus = .delivered, estimateSubscriptionUsage: Bool = true
    ) {
        self.refundPreference = refundPreference
        self.sampleContentProvided = sampleContentProvided
        self.defaultDeliveryStatus = defaultDeliveryStatus
        self.estimateSubscriptionUsage = estimateSubscriptionUsage
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        let defaults = ConsumptionPolicy()
        refundPreference = try container.decodeIfPresent(RefundPreference.self, forKey: .refundPreference)
        sampleContentProvided =
            try container.decodeIfPresent(Bool.self, forKey: .sampleContentProvided) ?? defaults.sampleContentProvided
        defaultDeliveryStatus =
            try container.decodeIfPresent(DeliveryStatus.self, forKey: .defaultDeliveryStatus)
            ?? defaults.defaultDeliveryStatus
        estimateSubscriptionUsage =
            try container.decodeIfPresent(Bool.self, forKey: .estimateSubscriptionUsage)
            ?? defaults.estimateSubscriptionUsage
    }
}
