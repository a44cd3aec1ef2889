import AppStoreModels
import Foundation
import Testing

@testable import Entitlements

/// `CustomerInfoJSON` writes byte for byte what Foundation's `JSONEncoder` (sorted keys) writes
/// for a CustomerInfo, with every member of every type it holds named.
@Suite struct CustomerInfoJSONTests {
    static let awkward = "quote \" backslash \\ slash / controls \u{0}\u{1}\u{8}\u{9}\u{A}\u{C}\u{D}\u{1F} é ü 😀 \u{7F}"
    static func at(_ seconds: Int64) -> Timestamp { Timestamp(millisecondsSince1970: 1_700_000_000_000 + seconds) }

    static func foundation<T: Encodable>(_ value: T) -> String {
        String(decoding: AppStoreJSON.foundationEncode(value), as: UTF8.self)
    }

    /// Every optional member set, awkward strings, negative money.
    static var full: CustomerInfo {
        var change = ProductChange(
            fromProductId: "a", toProductId: awkward, kind: .downgrade, timing: .atNextRenewal, effectiveAt: at(9))
        change.isWithdrawn = false
        let revocation = Revocation(
            kind: .refund, revokedAt: at(5), refundReason: .developerIssue, refundPercentage: 50_000)
        var subscription = SubscriptionInfo(
            productId: "monthly", subscriptionGroup: awkward, status: .inBillingRetry, isActive: true,
            transactionId: "t2", originalTransactionId: "o1", purchaseDate: at(2), originalPurchaseDate: at(1),
            expiresDate: at(3), periodType: .promotional, offerIdentifier: "offer", willRenew: true,
            autoRenewProductId: "yearly", pendingProductChange: change, unsubscribeDetectedAt: at(4),
            billingIssueDetectedAt: at(6), gracePeriodExpiresDate: at(7), expirationReason: .billingError,
            priceIncreaseConsent: .pending, revocation: revocation, ownership: .familyShared, environment: .sandbox,
            price: Money(milliunits: -9_990, currency: "EUR"), reason: awkward)
        subscription.isUnknownProduct = true
        subscription.store = .playStore
        var entitlement = EntitlementInfo(
            entitlementId: "pro", isActive: true, expiresDate: at(3), productId: "monthly", transactionId: "t2",
            originalTransactionId: "o1", purchaseDate: at(2), originalPurchaseDate: at(1), periodType: .trial,
            willRenew: false, unsubscribeDetectedAt: at(4), billingIssueDetectedAt: at(6),
            gracePeriodExpiresDate: at(7), ownership: .purchased, environment: .sandbox, reason: awkward)
        entitlement.store = .appStore
        var purchase = NonSubscriptionPurchase(
            productId: "coins", kind: .consumable, transactionId: "t3", originalTransactionId: "t3",
            purchaseDate: at(8), originalPurchaseDate: at(8), serviceStartsDate: at(8), expiresDate: at(10),
            isActive: false, isRestorable: false, quantity: 3, ownership: .purchased, environment: .sandbox,
            price: Money(milliunits: 1_990, currency: awkward),
            revocation: Revocation(
                kind: .familySharingRevoked, revokedAt: at(11), refundReason: nil, refundPercentage: nil),
            reason: "r")
        purchase.isUnknownProduct = false
        purchase.store = .playStore
        var revenue = TransactionRevenue(
            transactionId: "t2", productId: "monthly", purchaseDate: at(2),
            price: Money(milliunits: 9_990, currency: "USD"),
            commissionPercent: 15, proceeds: Money(milliunits: 8_492, currency: "USD"),
            refunded: Money(milliunits: Int64.min, currency: "USD"), netProceeds: Money(milliunits: 0, currency: ""),
            paidServiceDaysBefore: 366, reason: awkward)
        revenue.store = .playStore
        return CustomerInfo(
            customerId: awkward, environment: .sandbox, evaluatedAt: at(12),
            entitlements: ["pro": entitlement, awkward: entitlement, "Pro": entitlement, "é": entitlement],
            subscriptions: ["monthly": subscription, "b": subscription],
            nonSubscriptionPurchases: [purchase, purchase],
            introOfferEligibility: [
                "group": IntroOfferEligibility(
                    subscriptionGroup: "group", isEligible: false, usedByTransactionId: "t1", reason: awkward),
                awkward: IntroOfferEligibility(
                    subscriptionGroup: awkward, isEligible: true, usedByTransactionId: nil, reason: ""),
            ],
            revenue: [revenue, revenue], eventIds: ["b", "a", awkward, ""], notes: [awkward])
    }

    /// Every optional member nil.
    static var bare: CustomerInfo {
        var info = full
        for key in info.subscriptions.keys {
            info.subscriptions[key] = SubscriptionInfo(
                productId: "", subscriptionGroup: nil, status: .expired, isActive: false, transactionId: "",
                originalTransactionId: "", purchaseDate: at(0), originalPurchaseDate: nil, expiresDate: nil,
                periodType: .normal, offerIdentifier: nil, willRenew: false, autoRenewProductId: nil,
                pendingProductChange: nil, unsubscribeDetectedAt: nil, billingIssueDetectedAt: nil,
                gracePeriodExpiresDate: nil, expirationReason: nil, priceIncreaseConsent: nil, revocation: nil,
                ownership: .purchased, environment: .production, price: nil, reason: "")
        }
        for key in info.entitlements.keys {
            info.entitlements[key] = EntitlementInfo(
                entitlementId: "", isActive: false, expiresDate: nil, productId: "", transactionId: "",
                originalTransactionId: "", purchaseDate: at(0), originalPurchaseDate: nil, periodType: .normal,
                willRenew: false, unsubscribeDetectedAt: nil, billingIssueDetectedAt: nil, gracePeriodExpiresDate: nil,
                ownership: .purchased, environment: .production, reason: "")
        }
        info.nonSubscriptionPurchases = [
            NonSubscriptionPurchase(
                productId: "", kind: .nonConsumable, transactionId: "", originalTransactionId: "", purchaseDate: at(0),
                originalPurchaseDate: nil, serviceStartsDate: nil, expiresDate: nil, isActive: true, isRestorable: true,
                quantity: 1, ownership: .purchased, environment: .production, price: nil, revocation: nil, reason: "")
        ]
        info.revenue = [
            TransactionRevenue(
                transactionId: "", productId: "", purchaseDate: at(0), price: nil, commissionPercent: 30,
                proceeds: nil, refunded: nil, netProceeds: nil, paidServiceDaysBefore: nil, reason: "")
        ]
        return info
    }

    @Test func sameBytesAsFoundation() {
        for info in [
            Self.full, Self.bare, CustomerInfo(customerId: "", environment: .production, evaluatedAt: Self.at(0)),
        ] {
            #expect(CustomerInfoJSON.text(info) == Self.foundation(info))
            #expect(CustomerInfoEncoding(info).json == Self.foundation(info))
            for entry in info.revenue { #expect(CustomerInfoJSON.text(entry) == Self.foundation(entry)) }
            #expect(CustomerInfoJSON.text(info.eventIds) == Self.foundation(info.eventIds))
        }
        var withdrawn = Self.full
        withdrawn.subscriptions["b"]?.pendingProductChange?.isWithdrawn = true
        withdrawn.subscriptions["monthly"]?.pendingProductChange?.isWithdrawn = nil
        #expect(CustomerInfoJSON.text(withdrawn) == Self.foundation(withdrawn))
    }

    /// The member names written for each type are exactly its stored members.
    @Test func everyStoredMemberIsWritten() throws {
        let info = Self.full
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(CustomerInfoJSON.text(info).utf8)) as? [String: Any])
        func labels(_ value: Any) -> Set<String> { Set(Mirror(reflecting: value).children.compactMap(\.label)) }
        func keys(_ value: Any?) throws -> Set<String> { Set(try #require(value as? [String: Any]).keys) }
        #expect(Set(object.keys) == labels(info))
        let subscription = try #require((object["subscriptions"] as? [String: Any])?["monthly"] as? [String: Any])
        #expect(Set(subscription.keys) == labels(info.subscriptions["monthly"]!))
        #expect(try keys(subscription["revocation"]) == labels(info.subscriptions["monthly"]!.revocation!))
        #expect(
            try keys(subscription["pendingProductChange"])
                == labels(info.subscriptions["monthly"]!.pendingProductChange!))
        #expect(try keys(subscription["price"]) == labels(info.subscriptions["monthly"]!.price!))
        #expect(try keys((object["entitlements"] as? [String: Any])?["pro"]) == labels(info.entitlements["pro"]!))
        #expect(
            try keys((object["introOfferEligibility"] as? [String: Any])?["group"])
                == labels(info.introOfferEligibility["group"]!))
        #expect(
            try keys((object["nonSubscriptionPurchases"] as? [Any])?.first) == labels(info.nonSubscriptionPurchases[0]))
        #expect(try keys((object["revenue"] as? [Any])?.first) == labels(info.revenue[0]))
    }
}
