import AppStoreModels
import Entitlements
import Foundation
import StorekeeperIngestion
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionWorkload

/// Issue 15: Google Play purchases in the analytics aggregates, through the one commit path
/// (`PlayIngestor`, `IngestionWriter`) on both engines, every figure computed by hand:
/// Google's 15 % on an auto-renewing subscription, 15 % / 30 % on one-time products around the
/// day the year's earnings passed 1M USD, refunds from voided purchases with their type (one
/// refund when a revocation and the voided record name one order), and a customer buying on
/// both stores counted once. Each figure per store and combined; a rebuild finds nothing to
/// change.
@Suite struct PlayAnalyticsTests {
    static let package = "com.example.play"
    static let settings = PlayAppSettings(appId: F.appId, packageName: package)
    static let hour: Int64 = 3_600_000
    static let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 1,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 9990, currency: "USD")),
        CatalogProduct(
            productId: "lifetime", kind: .nonConsumable, entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 4990, currency: "USD")),
        CatalogProduct(
            productId: "gems", kind: .consumable, referencePrice: Money(milliunits: 1990, currency: "USD")),
        CatalogProduct(
            productId: "extra", kind: .autoRenewable, subscriptionGroup: "addons", groupLevel: 1,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["extra"],
            referencePrice: Money(milliunits: 1990, currency: "USD")),
    ])
    /// The developer's earnings passed 1M USD on day 100 (2026-04-11).
    static let crossing = CalendarDay(containing: F.at(100))

    /// Noon of day `days`.
    static func noon(_ days: Int64) -> Timestamp { F.at(days).adding(milliseconds: 12 * hour) }

    static func setUp(_ store: any Store) async throws {
        try await store.write { (tx) throws in
            try tx.saveApp(F.app, at: F.at(0))
            try tx.saveCatalog(appId: F.appId, catalog, at: F.at(0))
            try tx.savePlayAppSettings(settings, environments: F.app.environments, at: F.at(0))
            _ = try tx.saveAnalyticsSettings(
                appId: F.appId, AnalyticsSettings(googlePlay: PlayCommissionRule(thresholdCrossings: [crossing])),
                at: F.at(0))
        }
    }

    /// A read of a monthly subscription token: started at `start`, charged `order` (USD 9.99).
    static func subscription(
        _ token: String, start: Timestamp, read: Timestamp, expiry: Timestamp, order: String,
        state: PlaySubscriptionState = .active, autoRenew: Bool = true, cancelReason: PlayCancelReason? = nil,
        offerPhase: PlayOfferPhase? = nil
    ) throws -> VerifiedPlaySnapshot {
        let fact = PlaySubscriptionFact(
            packageName: package, purchaseToken: token, readAt: read, state: RawEnum(state), startTime: start,
            lineItems: [
                PlaySubscriptionLineItem(
                    productId: "monthly", expiryTime: expiry, autoRenewEnabled: autoRenew, offerPhase: offerPhase,
                    latestSuccessfulOrderId: order, recurringPrice: Money(milliunits: 9990, currency: "USD"))
            ], isAcknowledged: true, cancelReason: cancelReason, regionCode: "US")
        return try VerifiedPlaySnapshot(
            fact: .playSubscription(fact), raw: "{\"token\":\"\(token)\",\"order\":\"\(order)\"}")
    }

    static func product(_ token: String, _ productId: String, at: Timestamp, quantity: Int = 1) throws
        -> VerifiedPlaySnapshot
    {
        let fact = PlayProductPurchaseFact(
            packageName: package, purchaseToken: token, productId: productId, orderId: "GPA.\(token)", readAt: at,
            purchaseTime: at, purchaseState: RawEnum(.purchased), isAcknowledged: true, quantity: quantity,
            regionCode: "US")
        return try VerifiedPlaySnapshot(fact: .playProductPurchase(fact), raw: "{\"token\":\"\(token)\"}")
    }

    static func voided(
        _ token: String, order: String?, type: PlayProductType, at: Timestamp, reason: Int?,
        refund: PlayRefundType, quantity: Int? = nil
    ) throws -> VerifiedPlaySnapshot {
        let fact = PlayVoidedPurchaseFact(
            packageName: package, purchaseToken: token, orderId: order, productType: type, voidedAt: at,
            voidedSource: 0, voidedReason: reason, refundType: refund, voidedQuantity: quantity)
        return try VerifiedPlaySnapshot(
            fact: .playVoidedPurchase(fact), raw: "{\"voided\":\"\(token)\",\"at\":\(at.millisecondsSince1970)}")
    }

    static func post(_ ingestor: PlayIngestor, _ user: String, _ snapshot: VerifiedPlaySnapshot, at: Timestamp)
        async throws
    {
        _ = try await ingestor.postPurchase(
            settings: settings, appUserId: user, policy: .transferToNewest, snapshot: snapshot, receivedAt: at)
    }

    static func read(_ ingestor: PlayIngestor, _ snapshot: VerifiedPlaySnapshot, at: Timestamp) async throws {
        _ = try await ingestor.ingest(
            settings: settings, notification: nil, snapshots: [snapshot], source: "notification", receivedAt: at)
    }

    /// The day's totals (one currency each here) of `store` (nil: combined), as stored values.
    static func day(_ store: any Store, _ days: Int64, _ filter: AnalyticsStore?) async throws -> AnalyticsMeasures {
        let day = CalendarDay(containing: F.at(days))
        let totals = try await store.read { reader in
            try reader.analyticsDailyTotals(
                appId: F.appId, environment: .production, from: day, through: day,
                filter: AnalyticsFilter(store: filter))
        }
        return totals.reduce(AnalyticsMeasures()) { $0 + $1.measures }
    }

    static func measures(_ change: (inout AnalyticsMeasures) -> Void) -> AnalyticsMeasures {
        var measures = AnalyticsMeasures()
        change(&measures)
        return measures
    }

    static func rebuildChangesNothing(_ store: any Store, now: Timestamp) async throws {
        let rebuilt = try await AnalyticsAggregation.rebuild(appId: F.appId, store: store, now: now)
        #expect(rebuilt.changed == false)
        #expect(rebuilt.rowsAfter == rebuilt.rowsBefore)
    }

    @Test(arguments: Backend.enabled)
    func monthlySubscriptionMRRAndProceedsAtFifteenPercent(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            let start = Self.noon(10)
            try await Self.post(
                ingestor, "alice",
                try Self.subscription(
                    "tok-sub", start: start, read: start, expiry: start.adding(milliseconds: 30 * F.day), order: "GPA.1"
                ),
                at: start)
            // USD 9.99 at 15 %: proceeds 9.99 × 0.85 = 8.4915, 8.492 to the milliunit.
            // The MRR it adds at the next midnight is new MRR of day 10.
            let purchase = Self.measures {
                $0.transactions = 1
                $0.gross = 9990
                $0.proceeds = 8492
                $0.newCustomers = 1
                $0.mrrNew = 9990
            }
            #expect(try await Self.day(store, 10, .googlePlay) == purchase)
            #expect(try await Self.day(store, 10, nil) == purchase)
            #expect(try await Self.day(store, 10, .appStore) == AnalyticsMeasures())
            // Active from the first midnight after the purchase, MRR 9.99 (P1M × 1), 8.492 net.
            let activated = Self.measures {
                $0.activePaidDelta = 1
                $0.mrrGrossDelta = 9990
                $0.mrrProceedsDelta = 8492
                $0.paidRunsActiveDelta = 1
            }
            #expect(try await Self.day(store, 11, .googlePlay) == activated)
            let active = try await store.read { reader in
                (
                    try reader.analyticsActiveAt(
                        appId: F.appId, environment: .production, instant: F.at(20),
                        filter: AnalyticsFilter(store: .googlePlay)),
                    try reader.analyticsActiveAt(
                        appId: F.appId, environment: .production, instant: F.at(20),
                        filter: AnalyticsFilter(store: .appStore))
                )
            }
            #expect(
                active.0 == [
                    AnalyticsActiveTotal(activity: .paid, currency: "USD", count: 1, mrrGross: 9990, mrrProceeds: 8492)
                ])
            #expect(active.1 == [])

            // The renewal 30 days later is a second charge at 15 %.
            let renewed = start.adding(milliseconds: 30 * F.day)
            try await Self.read(
                ingestor,
                try Self.subscription(
                    "tok-sub", start: start, read: renewed, expiry: renewed.adding(milliseconds: 30 * F.day),
                    order: "GPA.1..0"),
                at: renewed)
            #expect(
                try await Self.day(store, 40, .googlePlay)
                    == Self.measures {
                        $0.transactions = 1
                        $0.gross = 9990
                        $0.proceeds = 8492
                    })
            try await Self.rebuildChangesNothing(store, now: renewed)
        }
    }

    @Test(arguments: Backend.enabled)
    func oneTimeProductsUnderAndOverTheMillion(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            // Day 50, before the year's 1M USD: 15 %, 4.99 × 0.85 = 4.2415 → 4.242.
            try await Self.post(
                ingestor, "bob", try Self.product("tok-p1", "lifetime", at: Self.noon(50)), at: Self.noon(50))
            // Day 120, after the crossing on day 100: 30 %, 4.99 × 0.7 = 3.493.
            try await Self.post(
                ingestor, "carol", try Self.product("tok-p2", "lifetime", at: Self.noon(120)), at: Self.noon(120))
            #expect(
                try await Self.day(store, 50, .googlePlay)
                    == Self.measures {
                        $0.transactions = 1
                        $0.gross = 4990
                        $0.proceeds = 4242
                        $0.newCustomers = 1
                    })
            #expect(
                try await Self.day(store, 120, .googlePlay)
                    == Self.measures {
                        $0.transactions = 1
                        $0.gross = 4990
                        $0.proceeds = 3493
                        $0.newCustomers = 1
                    })
            // The customer's own revenue says the same (the engine takes the app's rule too).
            let carol = try await store.read { (reader) throws in
                try CustomerStateUpdater.current(
                    customer: try reader.customer(appId: F.appId, .appUserId("carol")), appUserId: "carol",
                    environment: .production, in: reader, now: Self.noon(121))
            }
            #expect(carol.revenue.map(\.commissionPercent) == [30])
            #expect(carol.revenue.map(\.proceeds) == [Money(milliunits: 3493, currency: "USD")])
            // The crossing day itself is above the million (purchases from that day pay 30 %).
            try await Self.post(
                ingestor, "dave", try Self.product("tok-p3", "lifetime", at: Self.noon(100)), at: Self.noon(100))
            #expect(try await Self.day(store, 100, nil).proceeds == 3493)
            try await Self.rebuildChangesNothing(store, now: Self.noon(120))

            // A developer not enrolled in the 15 % tier pays 30 % below the million too; a
            // rebuild after the settings change recomputes day 50.
            try await store.write { (tx) throws in
                _ = try tx.saveAnalyticsSettings(
                    appId: F.appId,
                    AnalyticsSettings(
                        googlePlay: PlayCommissionRule(isEnrolled: false, thresholdCrossings: [Self.crossing])),
                    at: Self.noon(121))
            }
            let rebuilt = try await AnalyticsAggregation.rebuild(appId: F.appId, store: store, now: Self.noon(121))
            #expect(rebuilt.contributionsChanged == 1)
            #expect(try await Self.day(store, 50, .googlePlay).proceeds == 3493)
        }
    }

    @Test(arguments: Backend.enabled)
    func voidedPurchasesAreRefundsWithTheirType(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            // Three gems (3 × 1.99 = 5.97; 15 %: 5.0745 → 5.075), one refunded on day 62 by
            // quantity: share 1/3 = 33.333 %, 5.97 → 1.990, 5.075 → 1.692.
            try await Self.post(
                ingestor, "erin", try Self.product("tok-g", "gems", at: Self.noon(60), quantity: 3), at: Self.noon(60))
            try await Self.read(
                ingestor,
                try Self.voided(
                    "tok-g", order: "GPA.tok-g", type: .oneTime, at: Self.noon(62), reason: 1,
                    refund: .quantityBasedPartial, quantity: 1),
                at: Self.noon(62))
            #expect(
                try await Self.day(store, 60, .googlePlay)
                    == Self.measures {
                        $0.transactions = 1
                        $0.gross = 5970
                        $0.proceeds = 5075
                        $0.refunded = 1990
                        $0.refundedProceeds = 1692
                        $0.newCustomers = 1
                    })
            #expect(
                try await Self.day(store, 62, .googlePlay)
                    == Self.measures {
                        $0.refunds = 1
                        $0.refundedOnDate = 1990
                        $0.refundsPartial = 1
                    })
            // A second gem refunded on day 64: the shares add up as in the engine's events
            // (2 × 33.333 % = 66.666 %: 5.97 → 3.980, 5.075 → 3.383); the largest alone
            // (33.333 %) under-reported it.
            try await Self.read(
                ingestor,
                try Self.voided(
                    "tok-g", order: "GPA.tok-g", type: .oneTime, at: Self.noon(64), reason: 1,
                    refund: .quantityBasedPartial, quantity: 1),
                at: Self.noon(64))
            let twice = try await Self.day(store, 60, .googlePlay)
            #expect(twice.refunded == 3980)
            #expect(twice.refundedProceeds == 3383)

            // A subscription revoked on day 72 (SUBSCRIPTION_REVOKED: no order id) and the voided
            // purchase of its order an hour later ("defective": the developer's issue): one
            // full refund, on day 72, and the period counts at no instant.
            let start = Self.noon(70)
            try await Self.post(
                ingestor, "erin",
                try Self.subscription(
                    "tok-r", start: start, read: start, expiry: start.adding(milliseconds: 30 * F.day), order: "GPA.r"),
                at: start)
            try await Self.read(
                ingestor,
                try Self.voided(
                    "tok-r", order: nil, type: .subscription, at: Self.noon(72), reason: nil, refund: .full),
                at: Self.noon(72))
            try await Self.read(
                ingestor,
                try Self.voided(
                    "tok-r", order: "GPA.r", type: .subscription, at: Self.noon(72).adding(milliseconds: Self.hour),
                    reason: 3, refund: .full),
                at: Self.noon(72))
            #expect(
                try await Self.day(store, 72, nil)
                    == Self.measures {
                        $0.refunds = 1
                        $0.refundsDeveloperIssue = 1
                        $0.refundedOnDate = 9990
                        $0.refundedOnDateDeveloperIssue = 9990
                    })
            #expect(
                try await Self.day(store, 70, .googlePlay)
                    == Self.measures {
                        $0.transactions = 1
                        $0.gross = 9990
                        $0.proceeds = 8492
                        $0.refunded = 9990
                        $0.refundedProceeds = 8492
                    })
            let active = try await store.read { reader in
                try reader.analyticsActiveAt(
                    appId: F.appId, environment: .production, instant: F.at(71), filter: AnalyticsFilter())
            }
            #expect(active == [])
            try await Self.rebuildChangesNothing(store, now: Self.noon(73))
        }
    }

    /// Why a Play subscription churned comes from Google's `canceledStateContext`: the user
    /// cancelled (voluntary); a renewal that failed into account hold and then expired
    /// (involuntary). Both paid runs end on day 40, when access ended.
    @Test(arguments: Backend.enabled)
    func churnReasonsComeFromTheCanceledStateContext(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            let start = Self.noon(10)
            let end = start.adding(milliseconds: 30 * F.day)
            for (user, token) in [("hana", "tok-h"), ("ivan", "tok-i")] {
                try await Self.post(
                    ingestor, user,
                    try Self.subscription(token, start: start, read: start, expiry: end, order: "GPA.\(token)"),
                    at: start)
            }
            // Hana turns auto-renew off on day 20; her subscription expires at its end.
            try await Self.read(
                ingestor,
                try Self.subscription(
                    "tok-h", start: start, read: Self.noon(20), expiry: end, order: "GPA.tok-h", state: .canceled,
                    autoRenew: false, cancelReason: .user),
                at: Self.noon(20))
            try await Self.read(
                ingestor,
                try Self.subscription(
                    "tok-h", start: start, read: end.adding(milliseconds: Self.hour), expiry: end, order: "GPA.tok-h",
                    state: .expired, autoRenew: false, cancelReason: .user),
                at: end.adding(milliseconds: Self.hour))
            // Ivan's renewal fails on day 40: account hold, then expiry on day 70.
            try await Self.read(
                ingestor,
                try Self.subscription(
                    "tok-i", start: start, read: end, expiry: end, order: "GPA.tok-i", state: .onHold),
                at: end)
            try await Self.read(
                ingestor,
                try Self.subscription(
                    "tok-i", start: start, read: Self.noon(70), expiry: end, order: "GPA.tok-i", state: .expired,
                    autoRenew: false, cancelReason: .system),
                at: Self.noon(70))
            let churn = try await store.read { reader in
                try [AnalyticsStore.googlePlay, .appStore].map { store in
                    try reader.analyticsChurnEnds(
                        appId: F.appId, environment: .production,
                        windows: [AnalyticsChurnWindow(from: F.at(30), through: F.at(50))],
                        filter: AnalyticsFilter(store: store))
                }
            }
            #expect(churn[0] == [AnalyticsChurnEnds(expired: 2, byReason: [.voluntary: 1, .involuntary: 1])])
            #expect(churn[1] == [AnalyticsChurnEnds()])
            // Two paid subscriptions at day 40's midnight, none at day 41's: MRR churned on day 40.
            #expect(
                try await Self.day(store, 40, .googlePlay)
                    == Self.measures {
                        $0.mrrChurned = 2 * 9990
                    })
            #expect(
                try await Self.day(store, 41, .googlePlay)
                    == Self.measures {
                        $0.activePaidDelta = -2
                        $0.mrrGrossDelta = -2 * 9990
                        $0.mrrProceedsDelta = -2 * 8492
                        $0.paidRunsActiveDelta = -2
                    })
            try await Self.rebuildChangesNothing(store, now: Self.noon(70))
        }
    }

    /// A Play free trial (`offerPhase` FREE_TRIAL) is a trial, pending while it runs with
    /// auto-renew on, converted by the paid order after it.
    @Test(arguments: Backend.enabled)
    func aPlayTrialIsPendingThenConverted(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            let start = Self.noon(10)
            let trialEnd = Self.noon(17)
            try await Self.post(
                ingestor, "jade",
                try Self.subscription(
                    "tok-j", start: start, read: start, expiry: trialEnd, order: "GPA.j", offerPhase: .freeTrial),
                at: start)
            #expect(
                try await Self.day(store, 10, .googlePlay)
                    == Self.measures {
                        $0.trialsStarted = 1
                        $0.trialsPending = 1
                        $0.newCustomers = 1
                    })
            try await Self.read(
                ingestor,
                try Self.subscription(
                    "tok-j", start: start, read: trialEnd, expiry: trialEnd.adding(milliseconds: 30 * F.day),
                    order: "GPA.j..0", offerPhase: .basePrice),
                at: trialEnd)
            #expect(
                try await Self.day(store, 10, .googlePlay)
                    == Self.measures {
                        $0.trialsStarted = 1
                        $0.trialsConverted = 1
                        $0.newCustomers = 1
                    })
            #expect(try await Self.day(store, 11, .googlePlay) == Self.measures { $0.activeTrialDelta = 1 })
            // The first paid month is charged on day 17 at 15 %; it pays from day 18's midnight.
            #expect(
                try await Self.day(store, 17, .googlePlay)
                    == Self.measures {
                        $0.transactions = 1
                        $0.gross = 9990
                        $0.proceeds = 8492
                        $0.mrrNew = 9990
                    })
            #expect(
                try await Self.day(store, 18, .googlePlay)
                    == Self.measures {
                        $0.activeTrialDelta = -1
                        $0.activePaidDelta = 1
                        $0.mrrGrossDelta = 9990
                        $0.mrrProceedsDelta = 8492
                        $0.paidRunsActiveDelta = 1
                    })
            try await Self.rebuildChangesNothing(store, now: trialEnd)
        }
    }

    /// A token with two line items charged in one order (a subscription with an add-on) is two
    /// paid periods, each with its product's price (two periods under one order id once made
    /// the customer's periods collide).
    @Test(arguments: Backend.enabled)
    func twoLineItemsOfOneOrderAreTwoPeriods(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            let start = Self.noon(10)
            let expiry = start.adding(milliseconds: 30 * F.day)
            let fact = PlaySubscriptionFact(
                packageName: Self.package, purchaseToken: "tok-k", readAt: start, state: RawEnum(.active),
                startTime: start,
                lineItems: ["monthly", "extra"].map {
                    PlaySubscriptionLineItem(
                        productId: $0, expiryTime: expiry, autoRenewEnabled: true, latestSuccessfulOrderId: "GPA.k")
                }, isAcknowledged: true, regionCode: "US")
            try await Self.post(
                ingestor, "kim", try VerifiedPlaySnapshot(fact: .playSubscription(fact), raw: "{\"token\":\"tok-k\"}"),
                at: start)
            let active = try await store.read { reader in
                try reader.analyticsActiveAt(
                    appId: F.appId, environment: .production, instant: F.at(20),
                    filter: AnalyticsFilter(store: .googlePlay))
            }
            // 9.99 + 1.99 a month; at 15 %: 8.492 + 1.6915 → 1.692.
            #expect(
                active == [
                    AnalyticsActiveTotal(
                        activity: .paid, currency: "USD", count: 2, mrrGross: 11980, mrrProceeds: 10184)
                ])
            #expect(try await Self.day(store, 10, .googlePlay).transactions == 2)
            try await Self.rebuildChangesNothing(store, now: start)
        }
    }

    @Test(arguments: Backend.enabled)
    func aCustomerOfBothStoresIsNewOnce(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let writer = IngestionWriter(store: store)
            let ingestor = PlayIngestor(writer: writer)
            // Frank subscribes on the App Store on day 5, then on Google Play on day 8.
            let purchase = Self.noon(5)
            var batch = FactBatch(
                appId: F.appId, receivedAt: purchase, environment: .production,
                ownership: .claim(appUserId: "frank", policy: .transferToNewest))
            batch.transactions = [
                NewTransaction(
                    appId: F.appId, jws: "jws.frank",
                    fact: TransactionFact(
                        transactionId: "a-1", originalTransactionId: "a-1", productId: "monthly",
                        subscriptionGroup: "premium", purchaseDate: purchase,
                        expiresDate: purchase.adding(milliseconds: 30 * F.day),
                        signedDate: purchase, environment: .production, price: 9990, currency: "USD",
                        storefront: "USA"),
                    source: "test", receivedAt: purchase)
            ]
            _ = try await writer.commit(batch, operation: "test")
            let play = Self.noon(8)
            try await Self.post(
                ingestor, "frank",
                try Self.subscription(
                    "tok-f", start: play, read: play, expiry: play.adding(milliseconds: 30 * F.day), order: "GPA.f"),
                at: play)
            // Grace joins Google Play first on day 8.
            try await Self.post(
                ingestor, "grace",
                try Self.subscription(
                    "tok-g", start: play, read: play, expiry: play.adding(milliseconds: 30 * F.day), order: "GPA.g"),
                at: play)
            #expect(try await Self.day(store, 5, .appStore).newCustomers == 1)
            #expect(try await Self.day(store, 8, .googlePlay).newCustomers == 1)
            #expect(try await Self.day(store, 8, .appStore).newCustomers == 0)
            let all = try await store.read { reader in
                try reader.analyticsDailyTotals(
                    appId: F.appId, environment: .production, from: CalendarDay(containing: F.at(0)),
                    through: CalendarDay(containing: F.at(60)), filter: AnalyticsFilter())
            }
            #expect(all.reduce(0) { $0 + $1.measures.newCustomers } == 2)
            // Both of Frank's subscriptions pay: three paid subscriptions, each store its own.
            let active = try await store.read { reader in
                try [nil, AnalyticsStore.appStore, .googlePlay].map { store in
                    try reader.analyticsActiveAt(
                        appId: F.appId, environment: .production, instant: F.at(10),
                        filter: AnalyticsFilter(store: store)
                    ).reduce(0) { $0 + $1.count }
                }
            }
            #expect(active == [3, 1, 2])
            try await Self.rebuildChangesNothing(store, now: play)
        }
    }

    /// Retention and realized LTV hold both stores' customers in one cohort, by hand: in January
    /// 2026 Frank subscribes on the App Store (day 5, renewed day 35) and Grace on Google Play
    /// (day 8, renewed day 38 and day 68, the last order refunded in full on day 70; a lifetime
    /// product on day 10). Retention: one monthly cohort of 2 subscriptions, both paid 1
    /// renewal (Grace's refunded order is no payment). LTV, 2 customers: d7 = d30 = Frank's
    /// 9.99 + Grace's 9.99 + 4.99 = 24970 (the renewals are exactly 30 days after each first
    /// purchase, outside d30); d90 = d365 = 24970 + 9990 + 9990 = 44950 (the refunded order adds
    /// 0).
    @Test(arguments: Backend.enabled)
    func retentionAndLTVCohortsHoldBothStores(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.setUp(store)
            let writer = IngestionWriter(store: store)
            let ingestor = PlayIngestor(writer: writer)
            for (id, day) in [("a-1", Int64(5)), ("a-2", 35)] {
                let purchase = Self.noon(day)
                var batch = FactBatch(
                    appId: F.appId, receivedAt: purchase, environment: .production,
                    ownership: .claim(appUserId: "frank", policy: .transferToNewest))
                batch.transactions = [
                    NewTransaction(
                        appId: F.appId, jws: "jws.\(id)",
                        fact: TransactionFact(
                            transactionId: id, originalTransactionId: "a-1", productId: "monthly",
                            subscriptionGroup: "premium", purchaseDate: purchase,
                            expiresDate: purchase.adding(milliseconds: 30 * F.day), signedDate: purchase,
                            environment: .production, price: 9990, currency: "USD", storefront: "USA"),
                        source: "test", receivedAt: purchase)
                ]
                _ = try await writer.commit(batch, operation: "test")
            }
            let start = Self.noon(8)
            try await Self.post(
                ingestor, "grace",
                try Self.subscription(
                    "tok-g", start: start, read: start, expiry: Self.noon(38), order: "GPA.g"),
                at: start)
            try await Self.post(
                ingestor, "grace", try Self.product("tok-life", "lifetime", at: Self.noon(10)), at: Self.noon(10))
            for (day, order) in [(Int64(38), "GPA.g..0"), (68, "GPA.g..1")] {
                try await Self.read(
                    ingestor,
                    try Self.subscription(
                        "tok-g", start: start, read: Self.noon(day), expiry: Self.noon(day + 30), order: order),
                    at: Self.noon(day))
            }
            try await Self.read(
                ingestor,
                try Self.voided(
                    "tok-g", order: "GPA.g..1", type: .subscription, at: Self.noon(70), reason: 0, refund: .full),
                at: Self.noon(70))

            let january = CalendarDay(year: 2026, month: 1, day: 1)
            let december = CalendarDay(year: 2026, month: 12, day: 1)
            let (retention, ltv) = try await store.read { reader in
                (
                    try reader.analyticsRetention(
                        appId: F.appId, environment: .production, fromMonth: january, throughMonth: december,
                        filter: AnalyticsFilter()),
                    try reader.analyticsLTV(
                        appId: F.appId, environment: .production, fromMonth: january, throughMonth: december,
                        filter: AnalyticsFilter(), dayBoundaries: [])
                )
            }
            #expect(
                retention == [
                    RetentionCohortTotal(cohortMonth: january, productId: "monthly", paidRenewals: 1, subscriptions: 2)
                ])
            let summed = ltv.reduce(LTVMeasures()) { $0 + $1.measures }
            #expect(Set(ltv.map(\.currency)) == ["USD"])
            #expect(Set(ltv.map(\.cohortMonth)) == [january])
            #expect(summed == LTVMeasures(customers: 2, d7: 24970, d30: 24970, d90: 44950, d365: 44950))
            // Per store: Google Play's share alone is Grace's.
            let playOnly = CohortContribution.of(
                facts: try await store.read { reader in
                    let grace = try #require(try reader.customer(appId: F.appId, .appUserId("grace")))
                    return try reader.facts(customerId: grace.id)
                }, environment: .production, catalog: Self.catalog, rule: CommissionRule())
            #expect(
                playOnly.retention == [
                    RetentionCohortKey(
                        cohortMonth: january, productId: "monthly", subscriptionGroup: "premium", storefront: "US",
                        paidRenewals: 1): 1
                ])
            #expect(
                playOnly.ltv.values.reduce(LTVMeasures(), +)
                    == LTVMeasures(customers: 1, d7: 14980, d30: 14980, d90: 24970, d365: 24970))
            try await Self.rebuildChangesNothing(store, now: Self.noon(70))
        }
    }
}
