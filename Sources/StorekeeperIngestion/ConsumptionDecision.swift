import AppStoreModels

/// The purchase a consumption request is about, as the request's signed transaction said.
/// - Note: Immutable value; `Sendable`.
public struct ConsumedPurchase: Sendable, Hashable, Codable {
    public var productType: String?
    public var purchaseDate: Timestamp?
    public var expiresDate: Timestamp?

    public init(productType: String?, purchaseDate: Timestamp?, expiresDate: Timestamp?) {
        self.productType = productType
        self.purchaseDate = purchaseDate
        self.expiresDate = expiresDate
    }

    var isAutoRenewable: Bool { productType == ProductType.autoRenewableSubscription.rawValue }
    var isSubscription: Bool {
        isAutoRenewable || productType == ProductType.nonRenewingSubscription.rawValue
    }
}

/// What to do with one consumption request: send Apple this body, or send nothing and record
/// why (a stable code plus a message).
/// - Note: Immutable value; `Sendable`.
public enum ConsumptionDecision: Sendable, Hashable {
    case send(ConsumptionRequest)
    case withhold(code: String, message: String)

    /// Apple's 12-hour window to answer a `CONSUMPTION_REQUEST`.
    public static let windowMilliseconds: Int64 = 12 * 3_600_000

    /// Applies the app's policy to what the app reported (`consent`, `report`) about `purchase`
    /// at `now`. Consent comes first: without it nothing is sent (Apple refuses a body whose
    /// `customerConsented` is not `true`, and sending data without consent is not ours to do).
    public static func decide(
        policy: ConsumptionPolicy, consent: Bool?, report: (deliveryStatus: String, consumptionPercentage: Int32?)?,
        purchase: ConsumedPurchase, now: Timestamp
    ) -> ConsumptionDecision {
        guard let consent else {
            return .withhold(
                code: "consumption.consentUnknown", message: "The app has not reported the customer's consent.")
        }
        guard consent else {
            return .withhold(code: "consumption.consentRefused", message: "The customer did not consent.")
        }
        let delivery =
            report.map { RawEnum<DeliveryStatus>(rawValue: $0.deliveryStatus) }
            ?? RawEnum(policy.defaultDeliveryStatus)
        var request = ConsumptionRequest(
            customerConsented: true, deliveryStatus: delivery,
            refundPreference: policy.refundPreference.map { RawEnum($0) },
            sampleContentProvided: policy.sampleContentProvided)
        if purchase.isAutoRenewable && policy.refundPreference == .grantProrated {
            // Apple prorates from the subscription's own dates: the percentage must be omitted.
            return .send(request)
        }
        if delivery.value != .delivered {
            // Nothing delivered was consumed.
            request.consumptionPercentage = 0
        } else if let reported = report?.consumptionPercentage {
            request.consumptionPercentage = reported
        } else if purchase.isSubscription && policy.estimateSubscriptionUsage {
            request.consumptionPercentage = estimatedUsage(of: purchase, at: now)
        }
        if policy.refundPreference == .grantProrated && (request.consumptionPercentage ?? 0) <= 0 {
            // Apple refuses a prorated preference without a usage above 0 (outside
            // auto-renewable subscriptions): state no preference rather than be refused.
            request.refundPreference = nil
        }
        return .send(request)
    }

    /// The share of the subscription period elapsed at `now`, in thousandths of a percent;
    /// `nil` when the period is unknown.
    static func estimatedUsage(of purchase: ConsumedPurchase, at now: Timestamp) -> Int32? {
        guard let start = purchase.purchaseDate?.millisecondsSince1970,
            let end = purchase.expiresDate?.millisecondsSince1970, end > start
        else { return nil }
        let used = min(max(now.millisecondsSince1970 - start, 0), end - start)
        return Int32(used * 100_000 / (end - start))
    }
}
