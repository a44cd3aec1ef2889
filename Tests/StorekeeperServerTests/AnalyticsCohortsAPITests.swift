import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperTesting
import Testing

@testable import StorekeeperServer

/// Retention cohorts and realized LTV through the real ingestion path, on SQLite and
/// PostgreSQL, against the hand-computed examples of docs/analytics.md: a January cohort of 10
/// monthly subscriptions of which 8 paid February and 6 March, and four January customers whose
/// first 30 days are worth 9.99, 9.99, 0 and 49.99 USD refunded in full (d30 = 4995).
@Suite struct AnalyticsCohortsAPITests {
    static let day: Int64 = 86_400_000
    static let hour: Int64 = 3_600_000

    /// `month`/`day` of 2026 at noon UTC.
    static func at(_ month: Int, _ day: Int, hour: Int64 = 12) -> Timestamp {
        CalendarDay(year: 2026, month: month, day: day).start.adding(milliseconds: hour * Self.hour)
    }

    @Test func sqlite() async throws { try await run(.sqlite) }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func postgres() async throws { try await run(.postgres(TestDatabase.postgresURL!)) }

    func run(_ database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        harness.clock.set(Self.at(4, 15))
        try await retention(harness)
        try await ltv(harness)
    }

    struct Fixture {
        let harness: ServerHarness
        let app: ServerHarness.AppKeys
        let signer: AppStoreSigner

        var base: String { "/v1/apps/\(app.appId)" }

        func post(_ user: String, _ payload: JWSTransactionDecodedPayload) async throws {
            let response = try await harness.request(
                "POST", "\(base)/customers/\(user)/transactions", key: app.publicKey,
                json: ["signedTransaction": try harness.ca.signer.sign(payload)])
            #expect(response.status == 200, "\(response.text)")
        }

        /// A paid monthly (or `productId`) period of `original` from `purchase`.
        func payment(
            _ id: String, _ original: String, _ purchase: Timestamp, productId: String = "com.example.monthly",
            price: Int64 = 9990, days: Int64 = 31
        ) -> JWSTransactionDecodedPayload {
            var payload = TestSigning.transaction(environment: .sandbox, signedDate: purchase, transactionId: id)
            payload.originalTransactionId = original
            payload.productId = productId
            payload.purchaseDate = purchase
            payload.originalPurchaseDate = purchase
            payload.expiresDate = purchase.adding(milliseconds: days * AnalyticsCohortsAPITests.day)
            payload.webOrderLineItemId = "w\(id)"
            payload.subscriptionGroupIdentifier = "group"
            payload.price = price
            payload.storefront = "USA"
            return payload
        }

        func get(_ metric: String, _ query: String) async throws -> (cohorts: [[String: Any]], json: [String: Any]) {
            let response = try await harness.request(
                "GET", "\(base)/analytics/\(metric)?environment=Sandbox&\(query)", key: app.secretKey)
            #expect(response.status == 200, "\(response.text)")
            return (response.json["cohorts"] as? [[String: Any]] ?? [], response.json)
        }
    }

    /// Retention: the January cohort 10 → 8 → 6, a family-shared subscription left out, a trial
    /// joining the cohort of its first full-price payment, a yearly cohort, filters, CSV, rebuild.
    func retention(_ harness: ServerHarness) async throws {
        let app = try await harness.createApp()
        let fixture = Fixture(harness: harness, app: app, signer: AppStoreSigner(ca: harness.ca))
        for index in 0..<10 {
            let original = uniqueDigits()
            let user = "r\(index)"
            try await fixture.post(user, fixture.payment(original, original, Self.at(1, 5 + index)))
            if index < 8 {
                try await fixture.post(user, fixture.payment(original + "1", original, Self.at(2, 5 + index)))
            }
            if index < 6 {
                try await fixture.post(user, fixture.payment(original + "2", original, Self.at(3, 8 + index)))
            }
        }
        // Family shared: grants access, counts in no cohort.
        let shared = uniqueDigits()
        var family = fixture.payment(shared, shared, Self.at(1, 9))
        family.inAppOwnershipType = RawEnum(.familyShared)
        try await fixture.post("family", family)
        // A January free trial converting in February joins the February cohort.
        let trialist = uniqueDigits()
        var trial = fixture.payment(trialist, trialist, Self.at(1, 28), price: 0, days: 7)
        trial.offerType = RawEnum(.introductoryOffer)
        trial.offerDiscountType = RawEnum(.freeTrial)
        try await fixture.post("trialist", trial)
        try await fixture.post("trialist", fixture.payment(trialist + "1", trialist, Self.at(2, 4)))
        // A yearly subscription in January, in Germany.
        let yearly = uniqueDigits()
        var german = fixture.payment(
            yearly, yearly, Self.at(1, 3), productId: "com.example.yearly", price: 49990, days: 365)
        german.storefront = "DEU"
        try await fixture.post("yearly", german)

        func expectRetention() async throws {
            let all = try await fixture.get("retention", "from=2026-01-01&to=2026-03-31")
            #expect(all.json["metric"] as? String == "retention")
            #expect(all.json["resolution"] as? String == "month")
            #expect(all.cohorts.map { $0["cohort"] as? String } == ["2026-01", "2026-01", "2026-02"])
            #expect(
                all.cohorts.map { $0["productId"] as? String } == [
                    "com.example.monthly", "com.example.yearly", "com.example.monthly",
                ])
            #expect(all.cohorts.map { $0["size"] as? Int } == [10, 1, 1])
            #expect(all.cohorts.map { $0["stillPaying"] as? [Int] } == [[8, 6], [], []])
        }
        try await expectRetention()

        let monthly = try await fixture.get("retention", "from=2026-01-01&to=2026-01-31&productId=com.example.monthly")
        #expect(monthly.cohorts.map { $0["size"] as? Int } == [10])
        let germany = try await fixture.get("retention", "from=2026-01-01&to=2026-03-31&storefront=DEU")
        #expect(germany.cohorts.map { $0["productId"] as? String } == ["com.example.yearly"])
        // `from` in the middle of February still selects the February cohort; March has none.
        let february = try await fixture.get("retention", "from=2026-02-15&to=2026-03-31")
        #expect(february.cohorts.map { $0["cohort"] as? String } == ["2026-02"])
        let production = try await harness.request(
            "GET", "\(fixture.base)/analytics/retention?from=2026-01-01&to=2026-03-31", key: app.secretKey)
        #expect(production.json["cohorts"] as? [[String: Any]] != nil)
        #expect((production.json["cohorts"] as? [[String: Any]])?.isEmpty == true)
        // Cohorts are the App Store's: a store filter is refused, not an error of the database
        // (their tables have no store column: this was a 500).
        for metric in ["retention", "ltv"] {
            let byStore = try await harness.request(
                "GET", "\(fixture.base)/analytics/\(metric)?environment=Sandbox&store=googlePlay", key: app.secretKey)
            #expect(byStore.status == 400, "\(byStore.text)")
            let error = byStore.json["error"] as? [String: Any]
            #expect(error?["code"] as? String == "invalid_analytics_query")
            #expect(
                error?["message"] as? String
                    == "store is not a filter of \(metric): its cohorts are the App Store's.")
        }

        let csv = try await harness.request(
            "GET", "\(fixture.base)/analytics/retention?environment=Sandbox&from=2026-01-01&to=2026-03-31&format=csv",
            key: app.secretKey)
        #expect(csv.header("Content-Type") == "text/csv; charset=utf-8")
        #expect(
            csv.text
                == "cohort,productId,size,stillPaying.1,stillPaying.2\r\n2026-01,com.example.monthly,10,8,6\r\n"
                + "2026-01,com.example.yearly,1,,\r\n2026-02,com.example.monthly,1,,\r\n")

        // Rebuild: finds nothing to change, then repairs a row changed by hand and rows lost.
        let unchanged = try await AnalyticsAggregation.rebuild(
            appId: app.appId, store: harness.store, now: Self.at(4, 15))
        #expect(unchanged.changed == false)
        let appId = app.appId
        try await harness.store.write { transaction in
            let customer = try transaction.customerIds(appId: appId)[0]
            try transaction.applyAnalyticsCohorts(
                customerId: customer, appId: appId, environment: .sandbox, CohortContribution())
        }
        let lost = try await fixture.get("retention", "from=2026-01-01&to=2026-03-31")
        #expect(lost.cohorts.first?["size"] as? Int == 9)
        #expect(lost.cohorts.first?["stillPaying"] as? [Int] == [7, 5])
        let repaired = try await AnalyticsAggregation.rebuild(
            appId: app.appId, store: harness.store, now: Self.at(4, 15))
        #expect(repaired.changed)
        #expect(repaired.contributionsChanged == 1)
        try await expectRetention()

        // The dashboard's cohorts page shows the same table (exact values in data-value).
        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)
        let page = await client.send(
            .get, "/dashboard/apps/\(app.appId)/cohorts?environment=Sandbox&months=6")
        #expect(page.status == .ok)
        #expect(
            page.text.contains(
                "<tr><th scope=\"row\">2026-01</th><td>com.example.monthly</td><td data-value=\"10\">10</td>"
                    + "<td data-value=\"8\">8 <span class=\"muted\">80%</span></td>"
                    + "<td data-value=\"6\">6 <span class=\"muted\">60%</span></td></tr>"), "\(page.text)")
        let filtered = await client.send(
            .get, "/dashboard/apps/\(app.appId)/cohorts?environment=Sandbox&months=6&productId=none")
        #expect(filtered.text.contains("id=\"retention-empty\""))
        let badSpan = await client.send(.get, "/dashboard/apps/\(app.appId)/cohorts?months=5")
        #expect(badSpan.status == .badRequest)
    }

    /// LTV: four January customers, a refund in full reducing d30 from 17493 to 4995, horizons
    /// not reached are null, the reporting currency, a product filter, CSV, rebuild.
    func ltv(_ harness: ServerHarness) async throws {
        let app = try await harness.createApp()
        let fixture = Fixture(harness: harness, app: app, signer: AppStoreSigner(ca: harness.ca))
        let saved = try await harness.request(
            "PUT", "\(fixture.base)/analytics-settings", key: ServerHarness.adminKey,
            json: [
                "reportingCurrency": "USD",
                "exchangeRates": [
                    ["currency": "EUR", "from": "2025-11-01", "rate": "1.0842"],
                    ["currency": "EUR", "from": "2026-03-01", "rate": "1.2"],
                ],
            ])
        #expect(saved.status == 200, "\(saved.text)")
        let ann = uniqueDigits()
        let bob = uniqueDigits()
        let cat = uniqueDigits()
        let dan = uniqueDigits()
        let eve = uniqueDigits()
        // Ann: 9.99 on January 10, renewed February 10 (after her 30 days, within 90).
        try await fixture.post("ann", fixture.payment(ann, ann, Self.at(1, 10)))
        try await fixture.post("ann", fixture.payment(ann + "1", ann, Self.at(2, 10)))
        // Bob: 9.99 on January 20.
        try await fixture.post("bob", fixture.payment(bob, bob, Self.at(1, 20)))
        // Cat: a free trial on January 15 that never converts: first seen, worth 0.
        var trial = fixture.payment(cat, cat, Self.at(1, 15), price: 0, days: 7)
        trial.offerType = RawEnum(.introductoryOffer)
        trial.offerDiscountType = RawEnum(.freeTrial)
        try await fixture.post("cat", trial)
        // Dan: 49.99 yearly on January 25, refunded in full on January 28 (posted below).
        let danPurchase = fixture.payment(
            dan, dan, Self.at(1, 25), productId: "com.example.yearly", price: 49990, days: 365)
        try await fixture.post("dan", danPurchase)
        // Eve: family shared only: not a customer of any cohort.
        var family = fixture.payment(eve, eve, Self.at(1, 12))
        family.inAppOwnershipType = RawEnum(.familyShared)
        try await fixture.post("eve", family)

        // Fay, in February: 8.99 EUR on February 3 and March 10 (after her first 30 days),
        // converted at the rate of each purchase day (1.0842, then 1.2 from March 1).
        let fay = uniqueDigits()
        for (index, day) in [Self.at(2, 3), Self.at(3, 10)].enumerated() {
            var euro = fixture.payment(index == 0 ? fay : fay + "1", fay, day, price: 8990)
            euro.currency = "EUR"
            euro.storefront = "DEU"
            try await fixture.post("fay", euro)
        }

        // Before the refund: (9990 + 9990 + 0 + 49990) / 4 = 17492.5 → 17493.
        let before = try await fixture.get("ltv", "from=2026-01-01&to=2026-01-31")
        #expect(before.cohorts.count == 1)
        #expect(before.cohorts.first?["customers"] as? Int == 4)
        let beforeUSD = (before.cohorts.first?["byCurrency"] as? [[String: Any]])?.first ?? [:]
        #expect(beforeUSD["d30"] as? Int == 17493)

        var refunded = danPurchase
        refunded.signedDate = Self.at(1, 28)
        refunded.revocationDate = Self.at(1, 28)
        refunded.revocationReason = RawEnum(.other)
        try await fixture.post("dan", refunded)

        func expectLTV(now: Timestamp, _ expected: [String: Int?]) async throws {
            harness.clock.set(now)
            let answer = try await fixture.get("ltv", "from=2026-01-01&to=2026-01-31")
            #expect(answer.json["metric"] as? String == "ltv")
            #expect(answer.cohorts.map { $0["cohort"] as? String } == ["2026-01"])
            #expect(answer.cohorts.first?["customers"] as? Int == 4)
            let byCurrency = answer.cohorts.first?["byCurrency"] as? [[String: Any]] ?? []
            #expect(byCurrency.map { $0["currency"] as? String } == ["USD"])
            for (name, value) in expected {
                #expect((byCurrency.first?[name] as? Int) == value, "\(name)")
                #expect(byCurrency.first?[name] != nil)
            }
            let reporting = answer.cohorts.first?["reporting"] as? [String: Any] ?? [:]
            #expect(reporting["currency"] as? String == "USD")
            #expect(reporting["unconverted"] as? [String] == [])
            for (name, value) in expected { #expect((reporting[name] as? Int) == value, "reporting \(name)") }
        }
        // d90 = (9990 + 9990 + 9990) / 4 = 7492.5 → 7493; d365 not reached on May 15.
        try await expectLTV(now: Self.at(5, 15), ["d7": 4995, "d30": 4995, "d90": 7493, "d365": nil])
        // On February 15 only d7 is reached (February 8); d30 is on March 3.
        try await expectLTV(now: Self.at(2, 15), ["d7": 4995, "d30": nil, "d90": nil, "d365": nil])
        try await expectLTV(now: Self.at(3, 3, hour: 0), ["d7": 4995, "d30": 4995, "d90": nil, "d365": nil])
        harness.clock.set(Self.at(5, 15))

        // February at June 1: d90 reached (May 30), d365 not.
        harness.clock.set(Self.at(6, 1))
        let february = try await fixture.get("ltv", "from=2026-02-01&to=2026-02-28")
        #expect(february.cohorts.map { $0["cohort"] as? String } == ["2026-02"])
        #expect(february.cohorts.first?["customers"] as? Int == 1)
        let euro = (february.cohorts.first?["byCurrency"] as? [[String: Any]]) ?? []
        #expect(euro.map { $0["currency"] as? String } == ["EUR"])
        #expect(euro.first?["d30"] as? Int == 8990)
        #expect(euro.first?["d90"] as? Int == 17980)
        #expect(euro.first?["d365"] is NSNull)
        // 8990 × 1.0842 = 9746.958 → 9747; + 8990 × 1.2 = 10788.
        let converted = february.cohorts.first?["reporting"] as? [String: Any] ?? [:]
        #expect(converted["d7"] as? Int == 9747)
        #expect(converted["d30"] as? Int == 9747)
        #expect(converted["d90"] as? Int == 20535)
        #expect(converted["d365"] is NSNull)
        harness.clock.set(Self.at(5, 15))

        let yearly = try await fixture.get("ltv", "from=2026-01-01&to=2026-01-31&productId=com.example.yearly")
        #expect(yearly.cohorts.first?["customers"] as? Int == 1)
        #expect(((yearly.cohorts.first?["byCurrency"] as? [[String: Any]])?.first?["d30"] as? Int) == 0)
        let december = try await fixture.get("ltv", "from=2025-12-01&to=2025-12-31")
        #expect(december.cohorts.isEmpty)

        let csv = try await harness.request(
            "GET", "\(fixture.base)/analytics/ltv?environment=Sandbox&from=2026-01-01&to=2026-01-31&format=csv",
            key: app.secretKey)
        #expect(
            csv.text
                == "cohort,customers,currency,d7,d30,d90,d365\r\n2026-01,4,USD,4.995,4.995,7.493,\r\n"
                + "2026-01,4,reporting:USD,4.995,4.995,7.493,\r\n")

        let unchanged = try await AnalyticsAggregation.rebuild(
            appId: app.appId, store: harness.store, now: Self.at(5, 15))
        #expect(unchanged.changed == false)
        // A contribution changed behind the rows' back: the rebuild recomputes it from the facts.
        let appId = app.appId
        try await harness.store.write { transaction in
            for customer in try transaction.customerIds(appId: appId) {
                try transaction.applyAnalyticsCohorts(
                    customerId: customer, appId: appId, environment: .sandbox, CohortContribution())
            }
        }
        #expect(try await fixture.get("ltv", "from=2026-01-01&to=2026-01-31").cohorts.isEmpty)
        let repaired = try await AnalyticsAggregation.rebuild(
            appId: app.appId, store: harness.store, now: Self.at(5, 15))
        #expect(repaired.changed)
        try await expectLTV(now: Self.at(5, 15), ["d7": 4995, "d30": 4995, "d90": 7493, "d365": nil])

        var client = DashboardClient(harness.application.responder)
        #expect(await client.signIn(app.secretKey).status.code == 303)
        let page = await client.send(.get, "/dashboard/apps/\(app.appId)/cohorts?environment=Sandbox")
        #expect(page.status == .ok)
        for currency in ["USD", "reporting:USD"] {
            #expect(
                page.text.contains(
                    "<tr><th scope=\"row\">2026-01</th><td data-value=\"4\">4</td><td>\(currency)</td>"
                        + "<td data-value=\"4995\">4.995</td><td data-value=\"4995\">4.995</td>"
                        + "<td data-value=\"7493\">7.493</td><td data-value=\"\">—</td></tr>"), "\(page.text)")
        }
        #expect(page.text.contains("<figure class=\"chart\" id=\"chart-ltv\">"))
    }
}
