import AppStoreModels
import StorekeeperIngestion
import Testing

/// `ConsumptionDecision` applies the app's policy to what the app reported, within Apple's
/// rules for a v2 `ConsumptionRequest`.
@Suite struct ConsumptionDecisionTests {
    static let start = Timestamp(millisecondsSince1970: 1_700_000_000_000)
    static let day: Int64 = 86_400_000
    static let coins = ConsumedPurchase(productType: "Consumable", purchaseDate: start, expiresDate: nil)
    static let monthly = ConsumedPurchase(
        productType: "Auto-Renewable Subscription", purchaseDate: start,
        expiresDate: start.adding(milliseconds: 30 * day))
    static let pass = ConsumedPurchase(
        productType: "Non-Renewing Subscription", purchaseDate: start, expiresDate: start.adding(milliseconds: 10 * day)
    )

    @Test func consentComesFirst() {
        let policy = ConsumptionPolicy(refundPreference: .grantFull)
        let now = Self.start.adding(milliseconds: Self.day)
        #expect(
            ConsumptionDecision.decide(policy: policy, consent: nil, report: nil, purchase: Self.coins, now: now)
                == .withhold(
                    code: "consumption.consentUnknown", message: "The app has not reported the customer's consent."))
        #expect(
            ConsumptionDecision.decide(policy: policy, consent: false, report: nil, purchase: Self.coins, now: now)
                == .withhold(code: "consumption.consentRefused", message: "The customer did not consent."))
    }

    @Test func usageIsEstimatedFromTimeUsedForSubscriptionsOnly() {
        let policy = ConsumptionPolicy(refundPreference: .decline)
        func sent(_ purchase: ConsumedPurchase, days: Double, estimate: Bool = true) -> Int32?? {
            var policy = policy
            policy.estimateSubscriptionUsage = estimate
            let now = Self.start.adding(milliseconds: Int64(days * Double(Self.day)))
            guard
                case .send(let request) = ConsumptionDecision.decide(
                    policy: policy, consent: true, report: nil, purchase: purchase, now: now)
            else { return .none }
            return .some(request.consumptionPercentage)
        }
        #expect(sent(Self.pass, days: 2.5) == .some(25_000))
        #expect(sent(Self.monthly, days: 3) == .some(10_000))
        #expect(sent(Self.monthly, days: 45) == .some(100_000))  // past expiry: all of it
        #expect(sent(Self.monthly, days: 3, estimate: false) == .some(nil))
        #expect(sent(Self.coins, days: 3) == .some(nil))  // no period to measure
    }

    @Test func proratedPreferenceFollowsApplesRules() {
        let policy = ConsumptionPolicy(refundPreference: .grantProrated)
        let now = Self.start.adding(milliseconds: 3 * Self.day)
        // A consumable with no usage reported: Apple refuses GRANT_PRORATED without a
        // percentage above 0, so no preference is stated.
        #expect(
            ConsumptionDecision.decide(policy: policy, consent: true, report: nil, purchase: Self.coins, now: now)
                == .send(
                    ConsumptionRequest(
                        customerConsented: true, deliveryStatus: RawEnum(.delivered), sampleContentProvided: false)))
        #expect(
            ConsumptionDecision.decide(
                policy: policy, consent: true, report: ("DELIVERED", 40_000), purchase: Self.coins, now: now)
                == .send(
                    ConsumptionRequest(
                        customerConsented: true, consumptionPercentage: 40_000, deliveryStatus: RawEnum(.delivered),
                        refundPreference: RawEnum(.grantProrated), sampleContentProvided: false)))
        // An auto-renewable subscription: no percentage, even one the app reported.
        #expect(
            ConsumptionDecision.decide(
                policy: policy, consent: true, report: ("DELIVERED", 40_000), purchase: Self.monthly, now: now)
                == .send(
                    ConsumptionRequest(
                        customerConsented: true, deliveryStatus: RawEnum(.delivered),
                        refundPreference: RawEnum(.grantProrated), sampleContentProvided: false)))
    }
}
