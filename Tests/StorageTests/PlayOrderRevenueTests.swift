import AppStoreModels
import Entitlements
import Foundation
import StorekeeperIngestion
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionWorkload
private typealias P = PlayAnalyticsTests

/// Issue 15: exact Play revenue from the orders API. The same purchases give the commission
/// rule's proceeds until an order read (`PlayOrderFact`) is stored, then the order's developer
/// revenue, on both engines; an order never read keeps the rule; a rebuild agrees; the order is
/// one row per order id, a later read replacing it.
@Suite struct PlayOrderRevenueTests {
    static func order(
        _ orderId: String, token: String, revenue: Int64?, total: Int64 = 9990, tax: Int64 = 0, at: Timestamp,
        currency: String = "USD"
    ) throws -> VerifiedPlaySnapshot {
        let fact = PlayOrderFact(
            packageName: P.package, orderId: orderId, purchaseToken: token, readAt: at, isTestPurchase: false,
            state: "PROCESSED", total: Money(milliunits: total, currency: currency),
            tax: Money(milliunits: tax, currency: currency),
            developerRevenue: revenue.map { Money(milliunits: $0, currency: currency) })
        return try VerifiedPlaySnapshot(
            fact: .playOrder(fact), raw: "{\"orderId\":\"\(orderId)\",\"at\":\(at.millisecondsSince1970)}")
    }

    static func readOrders(_ ingestor: PlayIngestor, _ orders: [VerifiedPlaySnapshot], at: Timestamp) async throws {
        _ = try await ingestor.ingest(
            settings: P.settings, notification: nil, snapshots: orders, source: "client", receivedAt: at)
    }

    static func revenue(_ store: any Store, _ user: String, at: Timestamp) async throws -> [TransactionRevenue] {
        try await store.read { (reader) throws in
            try CustomerStateUpdater.current(
                customer: try reader.customer(appId: F.appId, .appUserId(user)), appUserId: user,
                environment: .production, in: reader, now: at)
        }.revenue
    }

    @Test(arguments: Backend.enabled)
    func subscriptionOrdersTakeTheDeveloperRevenueOnceRead(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await P.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            let start = P.noon(10)
            try await P.post(
                ingestor, "alice",
                try P.subscription(
                    "tok-sub", start: start, read: start, expiry: start.adding(milliseconds: 30 * F.day), order: "GPA.1"
                ),
                at: start)
            // No order read yet: the rule's 15 %, 9.99 × 0.85 = 8.4915 → 8.492.
            #expect(try await P.day(store, 10, .googlePlay).proceeds == 8492)

            // The order read: Google's exact 8.10 replaces the estimate on the purchase's day,
            // and in the period's MRR from the next midnight.
            try await Self.readOrders(
                ingestor, [try Self.order("GPA.1", token: "tok-sub", revenue: 8100, at: start)], at: start)
            #expect(
                try await P.day(store, 10, .googlePlay)
                    == P.measures {
                        $0.transactions = 1
                        $0.gross = 9990
                        $0.proceeds = 8100
                        $0.newCustomers = 1
                        $0.mrrNew = 9990
                    })
            #expect(
                try await P.day(store, 11, .googlePlay)
                    == P.measures {
                        $0.activePaidDelta = 1
                        $0.mrrGrossDelta = 9990
                        $0.mrrProceedsDelta = 8100
                        $0.paidRunsActiveDelta = 1
                    })
            let revenue = try await Self.revenue(store, "alice", at: start)
            #expect(revenue.map(\.proceeds) == [Money(milliunits: 8100, currency: "USD")])
            #expect(revenue.map(\.commissionPercent) == [19])
            #expect(revenue.map(\.price) == [Money(milliunits: 9990, currency: "USD")])

            // The renewal's order is not read: it keeps the rule (8.492) beside the exact one.
            let renewed = start.adding(milliseconds: 30 * F.day)
            try await P.read(
                ingestor,
                try P.subscription(
                    "tok-sub", start: start, read: renewed, expiry: renewed.adding(milliseconds: 30 * F.day),
                    order: "GPA.1..0"),
                at: renewed)
            #expect(try await P.day(store, 40, .googlePlay).proceeds == 8492)
            // Read later, after a partial refund: the later read replaces the order's row.
            try await Self.readOrders(
                ingestor, [try Self.order("GPA.1..0", token: "tok-sub", revenue: 7654, at: renewed)], at: renewed)
            #expect(try await P.day(store, 40, .googlePlay).proceeds == 7654)
            let later = renewed.adding(milliseconds: F.day)
            try await Self.readOrders(
                ingestor, [try Self.order("GPA.1..0", token: "tok-sub", revenue: 7000, at: later)], at: later)
            #expect(try await P.day(store, 40, .googlePlay).proceeds == 7000)
            // An earlier read arriving late changes nothing.
            try await Self.readOrders(
                ingestor, [try Self.order("GPA.1..0", token: "tok-sub", revenue: 1, at: renewed)], at: later)
            #expect(try await P.day(store, 40, .googlePlay).proceeds == 7000)

            let stored = try await store.read { reader in
                (
                    try reader.storedPlayOrderIds(appId: F.appId, orderIds: ["GPA.1", "GPA.1..0", "GPA.2"]),
                    try reader.facts(
                        customerId: try #require(try reader.customer(appId: F.appId, .appUserId("alice"))).id)
                )
            }
            #expect(stored.0 == ["GPA.1", "GPA.1..0"])
            let orders = stored.1.compactMap { fact -> PlayOrderFact? in
                if case .playOrder(let order) = fact { return order }
                return nil
            }
            #expect(orders.map(\.orderId).sorted() == ["GPA.1", "GPA.1..0"])
            #expect(
                orders.first { $0.orderId == "GPA.1..0" }?.developerRevenue == Money(milliunits: 7000, currency: "USD"))
            try await P.rebuildChangesNothing(store, now: later)
        }
    }

    @Test(arguments: Backend.enabled)
    func oneTimeOrdersTakeTheDeveloperRevenueAndRefundsShareIt(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await P.setUp(store)
            let ingestor = PlayIngestor(writer: IngestionWriter(store: store))
            // After the 1M crossing (day 100) the rule says 30 %: 4.99 × 0.7 = 3.493.
            try await P.post(
                ingestor, "carol", try P.product("tok-p", "lifetime", at: P.noon(120)), at: P.noon(120))
            #expect(try await P.day(store, 120, .googlePlay).proceeds == 3493)
            // Google's exact figure (tax taken out, VAT 0.80 in the total): 3.61.
            try await Self.readOrders(
                ingestor,
                [try Self.order("GPA.tok-p", token: "tok-p", revenue: 3610, total: 5790, tax: 800, at: P.noon(120))],
                at: P.noon(120))
            #expect(
                try await P.day(store, 120, .googlePlay)
                    == P.measures {
                        $0.transactions = 1
                        $0.gross = 4990
                        $0.proceeds = 3610
                        $0.newCustomers = 1
                    })
            // A full refund takes back all of the exact proceeds.
            try await P.read(
                ingestor,
                try P.voided("tok-p", order: "GPA.tok-p", type: .oneTime, at: P.noon(122), reason: 1, refund: .full),
                at: P.noon(122))
            let purchaseDay = try await P.day(store, 120, .googlePlay)
            #expect(purchaseDay.refunded == 4990)
            #expect(purchaseDay.refundedProceeds == 3610)
            #expect(try await P.day(store, 122, .googlePlay).refundedOnDate == 4990)
            let revenue = try await Self.revenue(store, "carol", at: P.noon(123))
            #expect(revenue.map(\.netProceeds) == [Money(milliunits: 0, currency: "USD")])
            #expect(revenue.map(\.commissionPercent) == [28])
            try await P.rebuildChangesNothing(store, now: P.noon(123))
        }
    }

    @Test(arguments: Backend.enabled)
    func theSwitchIsStoredAndOffByDefault(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await P.setUp(store)
            #expect(try await store.read { try $0.playAppSettings(appId: F.appId) }?.readOrderRevenue == false)
            try await store.write { (tx) throws in
                var on = P.settings
                on.readOrderRevenue = true
                _ = try tx.savePlayAppSettings(on, environments: F.app.environments, at: F.at(1))
            }
            let saved = try await store.read { try $0.playAppSettings(appId: F.appId) }
            #expect(saved?.readOrderRevenue == true)
            #expect(saved?.version == 2)
        }
    }
}
