import AppStoreModels
import Testing

@testable import Entitlements

/// What one customer's facts add to the retention and LTV rows, by hand.
@Suite struct CohortContributionTests {
    typealias F = AnalyticsFixture

    static func noon(_ month: Int, _ day: Int) -> Timestamp {
        F.day(2026, month, day).adding(milliseconds: 12 * 3_600_000)
    }

    static let january = CalendarDay(year: 2026, month: 1, day: 1)

    func ltvKey(_ month: Int, _ day: Int, productId: String = "coins", group: String = "") -> LTVCohortKey {
        LTVCohortKey(
            cohortMonth: Self.january, productId: productId, subscriptionGroup: group, storefront: "USA",
            day: CalendarDay(year: 2026, month: month, day: day), currency: "USD")
    }

    /// Coins on January 5 (first seen), a monthly trial on the 20th converting on the 27th, the
    /// February renewal refunded, the March one paid, the April one refunded by half; a
    /// family-shared yearly that counts nowhere.
    @Test func aCustomersCohortsAndHorizons() {
        let coins = F.transaction("c", "coins", from: Self.noon(1, 5), to: nil, price: 990, original: "c")
        let trial = F.transaction(
            "t0", "monthly", from: Self.noon(1, 20), to: Self.noon(1, 27), price: 0, periodType: .trial, original: "o")
        let first = F.transaction(
            "t1", "monthly", from: Self.noon(1, 27), to: Self.noon(2, 27), price: 9990, original: "o")
        let refunded = F.transaction(
            "t2", "monthly", from: Self.noon(2, 27), to: Self.noon(3, 27), price: 9990, original: "o",
            signedDate: Self.noon(3, 1), revokedAt: Self.noon(3, 1), revocationType: .refundFull)
        let renewal = F.transaction(
            "t3", "monthly", from: Self.noon(3, 27), to: Self.noon(4, 27), price: 9990, original: "o")
        let half = F.transaction(
            "t4", "monthly", from: Self.noon(4, 27), to: Self.noon(5, 27), price: 9990, original: "o",
            signedDate: Self.noon(5, 1), revokedAt: Self.noon(5, 1), revocationType: .refundProrated,
            revocationPercentage: 50000)
        let shared = F.transaction(
            "f", "yearly", from: Self.noon(1, 2), to: Self.noon(12, 2), price: 49990, ownership: .familyShared,
            original: "f")
        let facts: [Fact] = [coins, trial, first, refunded, renewal, half, shared].map { .transaction($0) }
        let contribution = CohortContribution.of(
            facts: facts, environment: .production, catalog: F.catalog, rule: CommissionRule())

        // One subscription: its first full-price payment on January 27; the refunded February
        // renewal is no payment, March counts, and April (refunded by half) is still a payment.
        #expect(
            contribution.retention == [
                RetentionCohortKey(
                    cohortMonth: Self.january, productId: "monthly", subscriptionGroup: "premium", storefront: "USA",
                    paidRenewals: 2): 1
            ])
        // First seen on January 5 through the coins. Within 7 days: the coins; 30 days
        // (before February 4): and the first month; 90 days (before April 5): the refunded
        // renewal adds 0 and March adds 9990; 365: April's 4995 kept after the half refund.
        #expect(
            contribution.ltv == [
                ltvKey(1, 5): LTVMeasures(customers: 1, d7: 990, d30: 990, d90: 990, d365: 990),
                ltvKey(1, 27): LTVMeasures(d30: 9990, d90: 9990, d365: 9990),
                ltvKey(3, 27): LTVMeasures(d90: 9990, d365: 9990),
                ltvKey(4, 27): LTVMeasures(d365: 4995),
            ])
        // Sandbox has none of these facts.
        #expect(
            CohortContribution.of(facts: facts, environment: .sandbox, catalog: F.catalog, rule: CommissionRule())
                .isEmpty)
    }

    /// Only family-shared purchases: no cohort, no customer.
    @Test func familySharingCountsNowhere() {
        let shared = F.transaction(
            "f", "monthly", from: Self.noon(1, 2), to: Self.noon(2, 2), price: 9990, ownership: .familyShared,
            original: "f")
        #expect(
            CohortContribution.of(
                facts: [.transaction(shared)], environment: .production, catalog: F.catalog, rule: CommissionRule()
            ).isEmpty)
    }

    /// A subscription whose only payments are a trial and a paid introductory offer has no
    /// cohort yet; the customer is still first seen at the trial.
    @Test func noFullPricePaymentNoCohort() {
        let trial = F.transaction(
            "t0", "monthly", from: Self.noon(1, 3), to: Self.noon(1, 10), price: 0, periodType: .trial, original: "o")
        let intro = F.transaction(
            "t1", "monthly", from: Self.noon(1, 10), to: Self.noon(2, 10), price: 990, periodType: .intro, original: "o"
        )
        let contribution = CohortContribution.of(
            facts: [.transaction(trial), .transaction(intro)], environment: .production, catalog: F.catalog,
            rule: CommissionRule())
        #expect(contribution.retention.isEmpty)
        #expect(
            contribution.ltv == [
                ltvKey(1, 3, productId: "monthly", group: "premium"): LTVMeasures(customers: 1),
                // Exactly 7 days after the first purchase: past the 7-day horizon.
                ltvKey(1, 10, productId: "monthly", group: "premium"): LTVMeasures(d30: 990, d90: 990, d365: 990),
            ])
    }

    /// A Google Play read of `token` at `read`: one line item, order `order`.
    static func play(
        _ token: String, _ productId: String, read: Timestamp, start: Timestamp, expiry: Timestamp, order: String,
        price: Int64, state: PlaySubscriptionState = .active, trial: Bool = false, linked: String? = nil
    ) -> Fact {
        .playSubscription(
            PlaySubscriptionFact(
                packageName: "com.example.play", purchaseToken: token, readAt: read, state: RawEnum(state),
                startTime: start,
                lineItems: [
                    PlaySubscriptionLineItem(
                        productId: productId, expiryTime: expiry, autoRenewEnabled: state == .active,
                        offerPhase: trial ? .freeTrial : nil, latestSuccessfulOrderId: order,
                        recurringPrice: Money(milliunits: price, currency: "USD"))
                ], isAcknowledged: true, linkedPurchaseToken: linked, regionCode: "US"))
    }

    /// Google Play: a monthly free trial from January 10, paid from the 17th, upgraded on
    /// February 1 to a yearly plan on a new token linked to the first. One subscription across
    /// the two tokens: the trial is not full price and the paid month the upgrade cut short is
    /// no payment, so its cohort is February's, by the yearly plan, with no renewal. LTV: first
    /// seen at the trial on January 10; the month paid on the 17th (7 days later: outside d7)
    /// and the yearly plan on February 1 (22 days) in d30.
    @Test func aPlayUpgradeChainIsOneSubscription() {
        let start = Self.noon(1, 10)
        let facts: [Fact] = [
            Self.play(
                "tok-a", "monthly", read: start, start: start, expiry: Self.noon(1, 17), order: "GPA.a", price: 9990,
                trial: true),
            Self.play(
                "tok-a", "monthly", read: Self.noon(1, 17), start: start, expiry: Self.noon(2, 17), order: "GPA.a..0",
                price: 9990),
            Self.play(
                "tok-a", "monthly", read: Self.noon(2, 1), start: start, expiry: Self.noon(2, 1), order: "GPA.a..0",
                price: 9990, state: .expired),
            Self.play(
                "tok-b", "yearly", read: Self.noon(2, 1), start: Self.noon(2, 1),
                expiry: F.day(2027, 2, 1).adding(milliseconds: 12 * 3_600_000), order: "GPA.b", price: 49990,
                linked: "tok-a"),
        ]
        let contribution = CohortContribution.of(
            facts: facts, environment: .production, catalog: F.catalog, rule: CommissionRule())
        #expect(
            contribution.retention == [
                RetentionCohortKey(
                    cohortMonth: CalendarDay(year: 2026, month: 2, day: 1), productId: "yearly",
                    subscriptionGroup: "premium", storefront: "US", paidRenewals: 0): 1
            ])
        func key(_ month: Int, _ day: Int) -> LTVCohortKey {
            LTVCohortKey(
                cohortMonth: Self.january, productId: "monthly", subscriptionGroup: "premium", storefront: "US",
                day: CalendarDay(year: 2026, month: month, day: day), currency: "USD")
        }
        #expect(
            contribution.ltv == [
                key(1, 10): LTVMeasures(customers: 1),
                key(1, 17): LTVMeasures(d30: 9990, d90: 9990, d365: 9990),
                key(2, 1): LTVMeasures(d30: 49990, d90: 49990, d365: 49990),
            ])
    }

    /// `AnalyticsContribution.all` works the proceeds out once for the daily rows, the periods
    /// and the cohorts: its cohorts are exactly what `CohortContribution.of` answers from the
    /// facts alone, also when two versions of a transaction are signed at the same instant (the
    /// first one read wins in both), in either order.
    @Test func allAnswersWhatTheSeparateComputationsAnswer() {
        let trial = F.transaction(
            "t0", "monthly", from: Self.noon(1, 20), to: Self.noon(1, 27), price: 0, periodType: .trial, original: "o")
        let first = F.transaction(
            "t1", "monthly", from: Self.noon(1, 27), to: Self.noon(2, 27), price: 9990, original: "o")
        let renewal = F.transaction(
            "t2", "monthly", from: Self.noon(2, 27), to: Self.noon(3, 27), price: 9990, original: "o",
            signedDate: Self.noon(3, 1))
        let refundedTwin = F.transaction(
            "t2", "monthly", from: Self.noon(2, 27), to: Self.noon(3, 27), price: 9990, original: "o",
            signedDate: Self.noon(3, 1), revokedAt: Self.noon(3, 1), revocationType: .refundFull)
        let coins = F.transaction("c", "coins", from: Self.noon(1, 5), to: nil, price: 990, original: "c")
        let info = RenewalFact(
            originalTransactionId: "o", productId: "monthly", autoRenewEnabled: false, signedDate: Self.noon(3, 2),
            environment: .production)
        let now = Self.noon(4, 1)
        var results: [CohortContribution] = []
        for twins in [[renewal, refundedTwin], [refundedTwin, renewal]] {
            let facts: [Fact] =
                [coins, trial, first].map { .transaction($0) } + twins.map { .transaction($0) }
                + [.renewalInfo(info)]
            let all = AnalyticsContribution.all(
                facts: facts, environment: .production, catalog: F.catalog, rule: CommissionRule(), now: now)
            let cohorts = CohortContribution.of(
                facts: facts, environment: .production, catalog: F.catalog, rule: CommissionRule())
            #expect(all.cohorts == cohorts)
            #expect(!all.cohorts.ltv.isEmpty)
            results.append(all.cohorts)
        }
        // The twin read first is the one counted: the refunded one makes February's renewal add
        // no money (rows are keyed by the customer's first purchase, the coins).
        #expect(results[0].ltv[ltvKey(2, 27)] == LTVMeasures(d90: 9990, d365: 9990))
        #expect(results[1].ltv[ltvKey(2, 27)] == nil)
        #expect(results[1].ltv[ltvKey(1, 27)] == LTVMeasures(d30: 9990, d90: 9990, d365: 9990))
    }

    /// The keys' orders, written field by field, are the orders of their fields as tuples.
    @Test func keyOrdersAreTheTupleOrders() {
        let days = [CalendarDay(year: 2026, month: 1, day: 1), CalendarDay(year: 2026, month: 1, day: 2)]
        let names = ["", "a", "b"]
        var daily: [AnalyticsDailyKey] = []
        var retention: [RetentionCohortKey] = []
        var ltv: [LTVCohortKey] = []
        for day in days {
            for product in names {
                for group in names {
                    for storefront in names {
                        for other in names {
                            for store in [AnalyticsStore.appStore, .googlePlay] {
                                daily.append(
                                    AnalyticsDailyKey(
                                        day: day, productId: product, subscriptionGroup: group, storefront: storefront,
                                        currency: other, store: store))
                            }
                            retention.append(
                                RetentionCohortKey(
                                    cohortMonth: day, productId: product, subscriptionGroup: group,
                                    storefront: storefront, paidRenewals: Int64(other.count)))
                            for purchaseDay in days {
                                ltv.append(
                                    LTVCohortKey(
                                        cohortMonth: day, productId: product, subscriptionGroup: group,
                                        storefront: storefront, day: purchaseDay, currency: other))
                            }
                        }
                    }
                }
            }
        }
        // Counted rather than expected one by one: over 200,000 pairs.
        func differing<Key: Comparable>(_ keys: [Key], _ tupleOrder: (Key, Key) -> Bool) -> Int {
            keys.reduce(0) { count, lhs in count + keys.filter { rhs in (lhs < rhs) != tupleOrder(lhs, rhs) }.count }
        }
        let differing =
            differing(daily) {
                ($0.day, $0.productId, $0.subscriptionGroup, $0.storefront, $0.currency, $0.store)
                    < ($1.day, $1.productId, $1.subscriptionGroup, $1.storefront, $1.currency, $1.store)
            }
            + differing(retention) {
                ($0.cohortMonth, $0.productId, $0.subscriptionGroup, $0.storefront, $0.paidRenewals)
                    < ($1.cohortMonth, $1.productId, $1.subscriptionGroup, $1.storefront, $1.paidRenewals)
            }
            + differing(ltv) {
                ($0.cohortMonth, $0.productId, $0.subscriptionGroup, $0.storefront, $0.day, $0.currency)
                    < ($1.cohortMonth, $1.productId, $1.subscriptionGroup, $1.storefront, $1.day, $1.currency)
            }
        #expect(daily.count == 324 && retention.count == 162 && ltv.count == 324)
        #expect(differing == 0)
    }

    /// Retention counts a transaction as a subscription payment exactly when subscriber
    /// activity (and the engine) read it as an auto-renewable subscription: by the catalog's
    /// kind first, then the kind Apple signed. Retention used to read Apple's kind first, and
    /// an expiry as auto-renewable when neither knew: a catalog that disagrees with Apple, or a
    /// product in neither, put a subscription in the retention rows that the subscriber
    /// counts, MRR and the API did not have.
    @Test func retentionReadsAProductsKindAsSubscriberActivityDoes() {
        func payments(_ productId: String, signedKind: ProductKind?) -> [TransactionFact] {
            (0..<3).map { month in
                var transaction = F.transaction(
                    "k\(month)", productId, from: Self.noon(1 + month, 5), to: Self.noon(2 + month, 5), price: 9990,
                    original: "k")
                transaction.productKind = signedKind
                return transaction
            }
        }
        func read(_ transactions: [TransactionFact]) -> (retention: [RetentionCohortKey: Int64], active: Bool) {
            let contribution = CohortContribution.of(
                facts: transactions.map { .transaction($0) }, environment: .production, catalog: F.catalog,
                rule: CommissionRule())
            let active = SubscriptionActivity.of(transactions[1], at: Self.noon(2, 20), catalog: F.catalog) != nil
            return (contribution.retention, active)
        }
        // The catalog sells `coins` as a consumable; Apple signed an auto-renewable type.
        let consumable = read(payments("coins", signedKind: .autoRenewable))
        #expect(consumable.retention.isEmpty)
        #expect(!consumable.active)
        // A product in no catalog, of no kind Apple signed, with an expiry.
        let unlisted = read(payments("unlisted", signedKind: nil))
        #expect(unlisted.retention.isEmpty)
        #expect(!unlisted.active)
        // The catalog's auto-renewable `monthly`, signed as non-renewing: the catalog decides.
        let monthly = read(payments("monthly", signedKind: .nonRenewing))
        #expect(
            monthly.retention == [
                RetentionCohortKey(
                    cohortMonth: Self.january, productId: "monthly", subscriptionGroup: "premium", storefront: "USA",
                    paidRenewals: 2): 1
            ])
        #expect(monthly.active)
    }
}
