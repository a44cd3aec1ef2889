import AppStoreModels
import Testing

@testable import Entitlements

/// Issue 15, exact Play revenue: an order read from the orders API (`PlayOrderFact`) gives its
/// developer revenue as the order's proceeds, in the customer's revenue and in analytics'
/// charges alike; orders not read, and reads without a developer revenue, keep the commission
/// rule; of two reads of one order the later wins whatever the arrival order.
@Suite struct PlayOrderRevenueEngineTests {
    typealias F = Fixture
    typealias P = PlayFixture

    static func order(
        _ orderId: String, revenue: Int64?, read: Double, total: Int64 = 9990, tax: Int64 = 0,
        currency: String = "USD"
    ) -> Fact {
        .playOrder(
            PlayOrderFact(
                packageName: P.package, orderId: orderId, purchaseToken: "tok1", readAt: F.day(read),
                isTestPurchase: false, state: "PROCESSED", total: Money(milliunits: total, currency: currency),
                tax: Money(milliunits: tax, currency: currency),
                developerRevenue: revenue.map { Money(milliunits: $0, currency: currency) }))
    }

    static let twoOrders = [
        P.sub(read: 0.5, state: .active, expiry: 30, order: "GPA.1"),
        P.sub(read: 30.5, state: .active, expiry: 60, order: "GPA.1..0"),
    ]

    private func revenue(_ facts: [Fact]) -> [String] {
        F.evaluate(facts, at: 31).customerInfo.revenue.map(Rendering.revenue)
    }

    private func charges(_ facts: [Fact]) -> [String] {
        let ledger = FactLedger(facts: facts, environment: .production).play
        return PlayAnalyticsCharges(ledger: ledger, now: F.day(31), catalog: F.catalog, rule: PlayCommissionRule())
            .charges.map { "\($0.orderId) \($0.currency) gross=\($0.gross) proceeds=\($0.proceeds)" }
    }

    @Test func anOrderReadReplacesTheRuleForThatOrderOnly() {
        #expect(
            revenue(Self.twoOrders) == [
                "GPA.1 price=9990 fee=15% proceeds=8492", "GPA.1..0 price=9990 fee=15% proceeds=8492",
            ])
        let read = Self.twoOrders + [Self.order("GPA.1", revenue: 8100, read: 1)]
        // (9.99 - 8.10) / 9.99 = 18.9 % → 19.
        #expect(
            revenue(read) == [
                "GPA.1 price=9990 fee=19% proceeds=8100", "GPA.1..0 price=9990 fee=15% proceeds=8492",
            ])
        #expect(
            charges(read) == [
                "GPA.1 USD gross=9990 proceeds=8100", "GPA.1..0 USD gross=9990 proceeds=8492",
            ])
        // The same facts without the order read: the rule on both (what the switch off gives).
        #expect(
            charges(Self.twoOrders) == [
                "GPA.1 USD gross=9990 proceeds=8492", "GPA.1..0 USD gross=9990 proceeds=8492",
            ])
    }

    @Test func theLaterReadOfAnOrderWinsInAnyArrivalOrder() {
        // Both reads before the evaluation at day 31 (the fixture drops facts signed later).
        let early = Self.order("GPA.1..0", revenue: 7654, read: 30.6)
        let late = Self.order("GPA.1..0", revenue: 7000, read: 30.9)
        for facts in [Self.twoOrders + [early, late], [late] + Self.twoOrders + [early]] {
            #expect(
                revenue(facts) == [
                    "GPA.1 price=9990 fee=15% proceeds=8492", "GPA.1..0 price=9990 fee=30% proceeds=7000",
                ])
        }
    }

    @Test func aReadWithoutDeveloperRevenueKeepsTheRule() {
        let facts = Self.twoOrders + [Self.order("GPA.1", revenue: nil, read: 1)]
        #expect(charges(facts) == ["GPA.1 USD gross=9990 proceeds=8492", "GPA.1..0 USD gross=9990 proceeds=8492"])
    }

    @Test func anOrderInTheBuyersCurrencyTakesItsTotalLessTaxAsThePrice() {
        // The catalog's price is USD; the buyer paid EUR 9.19 with 1.19 VAT; Google's revenue
        // EUR 6.80: price 8.000 EUR, fee (8.00 - 6.80) / 8.00 = 15 %.
        let facts =
            Self.twoOrders + [Self.order("GPA.1", revenue: 6800, read: 1, total: 9190, tax: 1190, currency: "EUR")]
        #expect(
            revenue(facts) == [
                "GPA.1 price=8000 fee=15% proceeds=6800", "GPA.1..0 price=9990 fee=15% proceeds=8492",
            ])
        #expect(charges(facts).first == "GPA.1 EUR gross=8000 proceeds=6800")
    }

    @Test func aRefundTakesBackItsShareOfTheExactProceeds() {
        let facts =
            Self.twoOrders + [
                Self.order("GPA.1", revenue: 8100, read: 1), P.voided(order: "GPA.1", at: 5, refund: .full),
            ]
        #expect(revenue(facts).first == "GPA.1 price=9990 fee=19% proceeds=8100 refunded=9990 net=0")
    }
}
