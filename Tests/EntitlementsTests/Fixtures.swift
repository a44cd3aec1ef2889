import AppStoreModels
import Entitlements

/// Test fixtures: a catalog, a time base and short builders for facts. Times are in days
/// after 2026-01-01T00:00:00Z (fractions allowed), so scenarios read like calendars.
enum Fixture {
    static let customer = "customer-1"
    static let baseMilliseconds: Int64 = 1_767_225_600_000

    static func day(_ value: Double) -> Timestamp {
        Timestamp(millisecondsSince1970: baseMilliseconds + Int64((value * 86_400_000).rounded()))
    }

    /// `d30`, or `d30.5` for times within a day; the inverse of `day`.
    static func label(_ instant: Timestamp?) -> String {
        guard let instant else { return "never" }
        let offset = Double(instant.millisecondsSince1970 - baseMilliseconds) / 86_400_000
        return offset == offset.rounded() ? "d\(Int(offset))" : "d\(offset)"
    }

    static let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 2,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 9990, currency: "USD")),
        CatalogProduct(
            productId: "monthly_alt", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 2,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 9990, currency: "USD")),
        CatalogProduct(
            productId: "yearly", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 2,
            duration: SubscriptionPeriod(value: 1, unit: .year), entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 79990, currency: "USD")),
        CatalogProduct(
            productId: "plus_monthly", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 1,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro", "plus"],
            referencePrice: Money(milliunits: 14990, currency: "USD")),
        CatalogProduct(
            productId: "news_monthly", kind: .autoRenewable, subscriptionGroup: "news", groupLevel: 1,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["news"],
            referencePrice: Money(milliunits: 4990, currency: "USD")),
        CatalogProduct(
            productId: "season_pass", kind: .nonRenewing, duration: SubscriptionPeriod(value: 1, unit: .month),
            entitlementIds: ["pass"], referencePrice: Money(milliunits: 5990, currency: "USD")),
        CatalogProduct(
            productId: "lifetime", kind: .nonConsumable, entitlementIds: ["pro", "lifetime"],
            referencePrice: Money(milliunits: 149_990, currency: "USD")),
        CatalogProduct(
            productId: "coins_100", kind: .consumable, entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 990, currency: "USD")),
    ])

    static let smallBusinessCatalog: ProductCatalog = {
        var small = Fixture.catalog
        small.isSmallBusinessProgram = true
        return small
    }()

    static func price(_ productId: String) -> Int64 { catalog[productId]?.referencePrice?.milliunits ?? 0 }

    /// A transaction version. `signed` defaults to the purchase date.
    static func tx(
        _ id: String, _ product: String, _ start: Double, _ end: Double? = nil, original: String = "o1",
        signed: Double? = nil, period: PeriodType = .normal, offer: String? = nil, price: Int64? = nil,
        family: Bool = false, reason: TransactionReason? = nil, revokedAt: Double? = nil,
        revocationReason: Int32? = nil, revocationType: RevocationType? = nil, revocationPercentage: Int32? = nil,
        upgraded: Bool = false, environment: AppStoreEnvironment = .production, currency: String = "USD"
    ) -> Fact {
        let resolvedPrice = price ?? (period == .trial ? 0 : Self.price(product))
        return .transaction(
            TransactionFact(
                transactionId: id, originalTransactionId: original, productId: product, purchaseDate: day(start),
                originalPurchaseDate: nil, expiresDate: end.map(day), signedDate: day(signed ?? start),
                revocationDate: revokedAt.map(day), revocationReason: revocationReason,
                revocationType: revocationType, revocationPercentage: revocationPercentage, isUpgraded: upgraded,
                periodType: period, offerIdentifier: offer, ownership: family ? .familyShared : .purchased,
                environment: environment, price: resolvedPrice, currency: currency, quantity: 1,
                transactionReason: reason))
    }

    /// A renewal-info snapshot.
    static func ri(
        _ product: String, signed: Double, original: String = "o1", autoRenew: Bool? = true, next: String? = nil,
        retry: Bool = false, grace: Double? = nil, intent: Int32? = nil, priceIncrease: Int32? = nil,
        environment: AppStoreEnvironment = .production
    ) -> Fact {
        .renewalInfo(
            RenewalFact(
                originalTransactionId: original, productId: product, autoRenewProductId: next ?? product,
                autoRenewEnabled: autoRenew, expirationIntent: intent, isInBillingRetryPeriod: retry,
                gracePeriodExpiresDate: grace.map(day), priceIncreaseStatus: priceIncrease, signedDate: day(signed),
                environment: environment))
    }

    /// A notification envelope.
    static func note(
        _ type: NotificationTypeV2, _ subtype: Subtype? = nil, signed: Double, original: String = "o1",
        product: String = "monthly", transaction: String? = nil
    ) -> Fact {
        .notification(
            NotificationFact(
                notificationId: "n-\(type.rawValue)-\(signed)-\(original)", type: type.rawValue,
                subtype: subtype?.rawValue, signedDate: day(signed), environment: .production,
                originalTransactionId: original, transactionId: transaction, productId: product))
    }

    /// When a fact became known: facts are only visible at instants after they were signed.
    static func signedDate(of fact: Fact) -> Timestamp {
        switch fact {
        case .transaction(let value): return value.signedDate
        case .renewalInfo(let value): return value.signedDate
        case .notification(let value): return value.signedDate
        case .playSubscription(let value): return value.readAt
        case .playProductPurchase(let value): return value.readAt
        case .playVoidedPurchase(let value): return value.voidedAt
        case .playOrder(let value): return value.readAt
        }
    }

    static func evaluate(
        _ facts: [Fact], at instant: Double, catalog: ProductCatalog = catalog,
        environment: AppStoreEnvironment = .production, previous: CustomerInfo? = nil
    ) -> EntitlementEvaluation {
        let now = day(instant)
        return EntitlementEngine.evaluate(
            customerId: customer, environment: environment, facts: facts.filter { signedDate(of: $0) <= now },
            catalog: catalog, now: now, previous: previous)
    }
}

/// Compact, exact renderings of engine output for table-driven expectations.
enum Rendering {
    static func entitlement(_ info: EntitlementInfo) -> String {
        var line = "\(info.entitlementId) \(info.isActive ? "active" : "inactive") \(info.productId)"
        line += " until=\(Fixture.label(info.expiresDate)) \(info.periodType.rawValue)"
        line += info.willRenew ? " renews" : " no-renew"
        if let value = info.unsubscribeDetectedAt { line += " unsub=\(Fixture.label(value))" }
        if let value = info.billingIssueDetectedAt { line += " billing=\(Fixture.label(value))" }
        if let value = info.gracePeriodExpiresDate { line += " grace=\(Fixture.label(value))" }
        if info.ownership == .familyShared { line += " family" }
        return line
    }

    static func subscription(_ info: SubscriptionInfo) -> String {
        var line = "\(info.productId) \(info.status.rawValue) tx=\(info.transactionId)"
        if let value = info.expirationReason { line += " why=\(value.rawValue)" }
        if let change = info.pendingProductChange {
            line += " pending=\(change.toProductId):\(change.kind.rawValue)@\(Fixture.label(change.effectiveAt))"
        }
        if let consent = info.priceIncreaseConsent { line += " priceIncrease=\(consent.rawValue)" }
        if let revocation = info.revocation {
            line += " revoked=\(revocation.kind.rawValue)@\(Fixture.label(revocation.revokedAt))"
            if let reason = revocation.refundReason { line += ":\(reason.rawValue)" }
        }
        return line
    }

    static func purchase(_ info: NonSubscriptionPurchase) -> String {
        var line = "\(info.productId) tx=\(info.transactionId) \(info.isActive ? "active" : "inactive")"
        if let start = info.serviceStartsDate { line += " from=\(Fixture.label(start))" }
        if let end = info.expiresDate { line += " until=\(Fixture.label(end))" }
        if !info.isRestorable { line += " not-restorable" }
        if let revocation = info.revocation { line += " revoked=\(revocation.kind.rawValue)" }
        return line
    }

    static func event(_ event: LifecycleEvent) -> String {
        var line = "\(event.id)@\(Fixture.label(event.occurredAt))"
        if let change = event.productChange {
            line += " \(change.kind.rawValue)/\(change.timing.rawValue)"
            if change.isWithdrawn == true { line += " withdrawn" }
        }
        if let reason = event.expirationReason { line += " \(reason.rawValue)" }
        if let reason = event.refundReason { line += " \(reason.rawValue)" }
        if let price = event.proceeds, price.milliunits != 0 { line += " proceeds=\(price.milliunits)" }
        return line
    }

    static func revenue(_ revenue: TransactionRevenue) -> String {
        var line = "\(revenue.transactionId) price=\(revenue.price?.milliunits ?? -1) fee=\(revenue.commissionPercent)%"
        line += " proceeds=\(revenue.proceeds?.milliunits ?? -1)"
        if let refunded = revenue.refunded {
            line += " refunded=\(refunded.milliunits) net=\(revenue.netProceeds!.milliunits)"
        }
        return line
    }
}
