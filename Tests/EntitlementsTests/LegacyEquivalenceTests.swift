import AppStoreModels
import Foundation
import Testing

@testable import Entitlements

/// One lifecycle told twice, once as StoreKit 2 / V2 payloads and once as verifyReceipt / V1
/// receipt entries, gives the same entitlements, statuses and event ids at every instant.
///
/// The lifecycle: a free trial converts, renews, auto-renew goes off and the subscription
/// expires; a non-consumable is bought and refunded; a family member's shared purchase is
/// revoked.
@Suite struct LegacyEquivalenceTests {
    typealias F = Fixture

    static func storeKit2Facts() throws -> [Fact] {
        func transaction(
            _ id: String, _ product: String, _ start: Double, _ end: Double?, original: String = "o1",
            signed: Double? = nil, trial: Bool = false, revokedAt: Double? = nil, family: Bool = false
        ) -> JWSTransactionDecodedPayload {
            var payload = JWSTransactionDecodedPayload()
            payload.transactionId = id
            payload.originalTransactionId = original
            payload.productId = product
            payload.purchaseDate = F.day(start)
            payload.originalPurchaseDate = F.day(0)
            payload.expiresDate = end.map(F.day)
            payload.signedDate = F.day(signed ?? start)
            payload.environment = RawEnum(.production)
            payload.inAppOwnershipType = RawEnum(family ? .familyShared : .purchased)
            payload.price = trial ? 0 : F.price(product)
            payload.currency = "USD"
            if trial {
                payload.offerType = RawEnum(.introductoryOffer)
                payload.offerDiscountType = RawEnum(.freeTrial)
            }
            if let revokedAt {
                payload.revocationDate = F.day(revokedAt)
                payload.revocationReason = RawEnum(.other)
                payload.revocationType = RawEnum(family ? .familyRevoke : .refundFull)
            }
            return payload
        }
        func renewal(_ signed: Double, autoRenew: Bool, intent: ExpirationIntent? = nil) -> JWSRenewalInfoDecodedPayload
        {
            var payload = JWSRenewalInfoDecodedPayload()
            payload.originalTransactionId = "o1"
            payload.productId = "monthly"
            payload.autoRenewProductId = "monthly"
            payload.autoRenewStatus = RawEnum(autoRenew ? .on : .off)
            payload.isInBillingRetryPeriod = false
            payload.expirationIntent = intent.map(RawEnum.init)
            payload.signedDate = F.day(signed)
            payload.environment = RawEnum(.production)
            return payload
        }
        var expired = ResponseBodyV2DecodedPayload()
        expired.notificationType = RawEnum(.expired)
        expired.subtype = RawEnum(.voluntary)
        expired.notificationUUID = "uuid-expired"
        expired.signedDate = F.day(67)
        var data = NotificationData()
        data.environment = RawEnum(.production)
        expired.data = data
        return try [
            Fact(transaction: transaction("t1", "monthly", 0, 7, trial: true)),
            Fact(renewalInfo: renewal(0, autoRenew: true)),
            Fact(transaction: transaction("t2", "monthly", 7, 37)),
            Fact(transaction: transaction("t3", "monthly", 37, 67)),
            Fact(renewalInfo: renewal(50, autoRenew: false)),
            Fact(transaction: transaction("l1", "lifetime", 3, nil, original: "l1")),
            Fact(transaction: transaction("l1", "lifetime", 3, nil, original: "l1", signed: 20, revokedAt: 20)),
            Fact(transaction: transaction("f1", "news_monthly", 5, 35, original: "of", family: true)),
            Fact(
                transaction: transaction(
                    "f1", "news_monthly", 5, 35, original: "of", signed: 15, revokedAt: 15, family: true)),
        ]
            + Fact.facts(
                notification: expired, transaction: transaction("t3", "monthly", 37, 67),
                renewalInfo: renewal(67, autoRenew: false, intent: .customerCancelled))
    }

    static func legacyFacts() -> [Fact] {
        func entry(
            _ id: String, _ product: String, _ start: Double, _ end: Double?, original: String = "o1",
            observed: Double? = nil, trial: Bool = false, cancelled: Double? = nil, family: Bool = false
        ) -> Fact {
            Fact(
                legacyTransaction: LegacyTransactionFact(
                    productId: product, transactionId: id, originalTransactionId: original, purchaseDate: F.day(start),
                    originalPurchaseDate: F.day(0), expiresDate: end.map(F.day), cancellationDate: cancelled.map(F.day),
                    cancellationReason: cancelled == nil ? nil : 0, isTrialPeriod: trial,
                    inAppOwnershipType: family ? .familyShared : .purchased, environment: .production,
                    observedAt: F.day(observed ?? start)))
        }
        func pending(_ observed: Double, autoRenew: Bool, intent: Int32? = nil) -> Fact {
            Fact(
                legacyRenewal: LegacyRenewalFact(
                    productId: "monthly", originalTransactionId: "o1", autoRenewProductId: "monthly",
                    autoRenewStatus: autoRenew, expirationIntent: intent, isInBillingRetryPeriod: false,
                    environment: .production, observedAt: F.day(observed)))
        }
        return [
            entry("t1", "monthly", 0, 7, trial: true), pending(0, autoRenew: true),
            entry("t2", "monthly", 7, 37), entry("t3", "monthly", 37, 67), pending(50, autoRenew: false),
            entry("l1", "lifetime", 3, nil, original: "l1"),
            entry("l1", "lifetime", 3, nil, original: "l1", observed: 20, cancelled: 20),
            entry("f1", "news_monthly", 5, 35, original: "of", family: true),
            entry("f1", "news_monthly", 5, 35, original: "of", observed: 15, cancelled: 15, family: true),
            pending(67, autoRenew: false, intent: 1),
        ]
    }

    @Test(arguments: [1.0, 4, 8, 16, 21, 38, 51, 68])
    func sameEntitlementsFromBothSources(at instant: Double) throws {
        let modern = Fixture.evaluate(try Self.storeKit2Facts(), at: instant)
        let legacy = Fixture.evaluate(Self.legacyFacts(), at: instant)
        #expect(modern.customerInfo.entitlements == legacy.customerInfo.entitlements)
        #expect(
            modern.customerInfo.subscriptions.mapValues(\.status)
                == legacy.customerInfo.subscriptions.mapValues(\.status))
        #expect(modern.customerInfo.introOfferEligibility == legacy.customerInfo.introOfferEligibility)
        #expect(modern.allEvents.map(\.id) == legacy.allEvents.map(\.id))
        #expect(modern.allEvents.map(\.occurredAt) == legacy.allEvents.map(\.occurredAt))
    }

    @Test func theLifecycleEndsAsExpected() throws {
        let final = Fixture.evaluate(try Self.storeKit2Facts(), at: 68)
        #expect(
            final.allEvents.map(Rendering.event) == [
                "TRIAL_STARTED/t1@d0",
                "NON_CONSUMABLE_PURCHASE/l1@d3 proceeds=104993",
                "INITIAL_PURCHASE/f1@d5",
                "TRIAL_CONVERTED/t2@d7 proceeds=6993",
                "FAMILY_SHARING_REVOKED/f1/1768521600000@d15",
                "REFUND/l1/1768953600000@d20 OTHER proceeds=-104993",
                "RENEWAL/t3@d37 proceeds=6993",
                "CANCELLATION/t3/1771545600000@d50",
                "EXPIRATION/t3@d67 CUSTOMER_CANCELLED",
            ])
        #expect(final.customerInfo.activeEntitlementIds == [])
        #expect(final.customerInfo.introOfferEligibility["premium"]?.isEligible == false)
        #expect(
            final.customerInfo.entitlements["pro"]?.reason.contains(
                "expired 2026-03-09T00:00:00Z, auto-renew off by customer") == true)
        #expect(
            final.customerInfo.entitlements["lifetime"]?.reason
                == "inactive: lifetime refunded 2026-01-21T00:00:00Z: other reason")
    }
}
