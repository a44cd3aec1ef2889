import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// The analytics API over aggregates kept by ingestion, on SQLite and PostgreSQL, against
/// hand-computed figures: three customers in December 2025 (USD, a USD purchase refunded in
/// January, a EUR one in a storefront with its own rates), reported in USD.
@Suite struct AnalyticsAPITests {
    static let hour: Int64 = 3_600_000
    static let day: Int64 = 86_400_000
    /// 2025-12-01T00:00:00Z.
    static let december = TestSigning.signedDate

    static func at(day: Int64, hour: Int64 = 12) -> Timestamp {
        december.adding(milliseconds: day * Self.day + hour * Self.hour)
    }

    @Test func sqlite() async throws { try await run(.sqlite) }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func postgres() async throws { try await run(.postgres(TestDatabase.postgresURL!)) }

    func run(_ database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        harness.clock.set(Self.at(day: 40))
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let base = "/v1/apps/\(app.appId)"
        func post(_ user: String, _ jws: String) async throws {
            try await harness.postTransaction(app, user: user, jws)
        }
        let ids = (uniqueDigits(), uniqueDigits(), uniqueDigits())
        try await post(
            "ann",
            try signer.transaction(
                id: ids.0, originalId: ids.0, purchase: Self.at(day: 0), expires: Self.at(day: 30),
                signed: Self.at(day: 0)))
        try await post(
            "bob",
            try signer.transaction(
                id: ids.1, originalId: ids.1, purchase: Self.at(day: 1), expires: Self.at(day: 32),
                signed: Self.at(day: 1)))
        var euro = TestSigning.transaction(environment: .sandbox, signedDate: Self.at(day: 2), transactionId: ids.2)
        euro.purchaseDate = Self.at(day: 2)
        euro.expiresDate = Self.at(day: 33)
        euro.subscriptionGroupIdentifier = "group"
        euro.price = 8990
        euro.currency = "EUR"
        euro.storefront = "DEU"
        try await post("cat", try harness.ca.signer.sign(euro))
        // Bob's purchase is refunded on 2026-01-05, after December closed.
        try await post(
            "bob",
            try signer.transaction(
                id: ids.1, originalId: ids.1, purchase: Self.at(day: 1), expires: Self.at(day: 32),
                signed: Self.at(day: 35), revocation: Self.at(day: 35)))

        // Settings after the facts: the storefront rate changes proceeds, so the aggregates are rebuilt.
        let settings: [String: Any] = [
            "reportingCurrency": "USD",
            "commissionRates": ["byStorefront": ["DEU": ["standard": 2000, "reduced": 1000]]],
            "exchangeRates": [["currency": "EUR", "from": "2025-11-01", "rate": "1.0842"]],
        ]
        let saved = try await harness.request(
            "PUT", "\(base)/analytics-settings", key: ServerHarness.adminKey, json: settings)
        // 202: the rebuild is queued, and a job worker (here one round of it) runs it.
        #expect(saved.status == 202, "\(saved.text)")
        #expect(saved.header("ETag") == "\"1\"")
        let queued = saved.json["rebuild"] as? [String: Any] ?? [:]
        #expect(queued["status"] as? String == "queued")
        #expect(queued["settingsVersion"] as? Int == 1)
        let location = try #require(saved.header("Location"))
        #expect(location == "\(base)/analytics-rebuilds/\(queued["id"] as? Int ?? 0)")
        #expect(await harness.application.analyticsRebuildWorker.runDue() == 1)
        let rebuilt = try await harness.request("GET", location, key: ServerHarness.adminKey)
        #expect(rebuilt.json["status"] as? String == "completed")
        #expect(rebuilt.json["customersDone"] as? Int == 3)
        #expect(rebuilt.json["changed"] as? Bool == true)
        let stale = try await harness.request(
            "PUT", "\(base)/analytics-settings", key: ServerHarness.adminKey, json: settings,
            headers: ["If-Match": "\"7\""])
        #expect(stale.status == 412)
        let invalid = try await harness.request(
            "PUT", "\(base)/analytics-settings", key: ServerHarness.adminKey, json: ["reportingCurrency": "usd"])
        #expect(invalid.status == 400)
        #expect(invalid.errorCode == "invalid_body")
        let readBack = try await harness.request("GET", "\(base)/analytics-settings", key: ServerHarness.adminKey)
        #expect(readBack.json["reportingCurrency"] as? String == "USD")
        #expect((readBack.json["exchangeRates"] as? [[String: Any]])?.first?["rate"] as? String == "1.084200")
        #expect(readBack.json["version"] as? Int == 1)
        let secretOnly = try await harness.request("GET", "\(base)/analytics-settings", key: app.secretKey)
        #expect(secretOnly.status == 403)

        func get(_ metric: String, _ query: String) async throws -> [[String: Any]] {
            let response = try await harness.request(
                "GET", "\(base)/analytics/\(metric)?environment=Sandbox&\(query)", key: app.secretKey)
            #expect(response.status == 200, "\(response.text)")
            return response.json["points"] as? [[String: Any]] ?? []
        }
        func integers(_ object: Any?) -> [String: Int] {
            (object as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
        }

        let decemberRevenue = try await get("revenue", "from=2025-12-01&to=2025-12-31&resolution=month")
        #expect(decemberRevenue.count == 1)
        let byCurrency = decemberRevenue.first?["byCurrency"] as? [[String: Any]] ?? []
        #expect(byCurrency.map { $0["currency"] as? String } == ["EUR", "USD"])
        #expect(
            integers(byCurrency.first) == [
                "gross": 8990, "proceeds": 7192, "refunded": 0, "refundedProceeds": 0, "net": 8990,
                "netProceeds": 7192, "transactions": 1, "refundedOnDate": 0,
            ])
        #expect(
            integers(byCurrency.last) == [
                "gross": 19980, "proceeds": 13986, "refunded": 9990, "refundedProceeds": 6993, "net": 9990,
                "netProceeds": 6993, "transactions": 2, "refundedOnDate": 0,
            ])
        #expect(
            integers(decemberRevenue.first?["reporting"]) == [
                "gross": 29727, "proceeds": 21784, "refunded": 9990, "refundedProceeds": 6993, "net": 19737,
                "netProceeds": 14791, "refundedOnDate": 0,
            ])

        let januaryRevenue = try await get("revenue", "from=2026-01-01&to=2026-01-31&resolution=month")
        let january = januaryRevenue.first?["byCurrency"] as? [[String: Any]] ?? []
        #expect(january.map { $0["currency"] as? String } == ["USD"])
        #expect(integers(january.first)["refundedOnDate"] == 9990)
        #expect(integers(january.first)["gross"] == 0)

        let active = try await get("active-subscriptions", "from=2025-12-01&to=2025-12-05")
        #expect(active.map { $0["count"] as? Int } == [1, 1, 2, 2, 2])
        #expect(active.map { $0["period"] as? String }.last == "2025-12-05")

        let mrr = try await get("mrr", "from=2025-12-01&to=2025-12-03&resolution=month")
        #expect(
            (mrr.first?["byCurrency"] as? [[String: Any]] ?? []).map { integers($0) } == [
                ["gross": 8990, "proceeds": 7192], ["gross": 9990, "proceeds": 6993],
            ])
        #expect(integers(mrr.first?["reporting"]) == ["gross": 19737, "proceeds": 14791])

        let refunds = try await get("refunds", "from=2026-01-01&to=2026-01-31&resolution=month")
        #expect(refunds.first?["count"] as? Int == 1)
        #expect(integers(refunds.first?["byReason"]) == ["developerIssue": 0, "other": 1])
        #expect(refunds.first?["refundRate"] is NSNull)
        let refundRate = try await get("refunds", "from=2025-12-01&to=2026-01-31&resolution=year")
        #expect(refundRate.map { $0["refundRate"] as? Double } == [0, nil])
        #expect(refundRate.map { $0["count"] as? Int } == [0, 1])

        let newCustomers = try await get("new-customers", "from=2025-11-01&to=2025-12-31&resolution=month")
        #expect(newCustomers.map { $0["count"] as? Int } == [0, 3])
        let filtered = try await get("revenue", "from=2025-12-01&to=2025-12-31&resolution=month&storefront=DEU")
        #expect((filtered.first?["byCurrency"] as? [[String: Any]] ?? []).map { $0["currency"] as? String } == ["EUR"])

        let csv = try await harness.request(
            "GET",
            "\(base)/analytics/revenue?environment=Sandbox&from=2025-12-01&to=2025-12-31&resolution=month&format=csv",
            key: app.secretKey)
        #expect(csv.header("Content-Type") == "text/csv; charset=utf-8")
        #expect(
            csv.text == """
                period,periodEnd,currency,gross,net,netProceeds,proceeds,refunded,refundedOnDate,refundedProceeds,transactions,unconverted\r
                2025-12-01,2025-12-31,EUR,8.990,8.990,7.192,7.192,0.000,0.000,0.000,1,\r
                2025-12-01,2025-12-31,USD,19.980,9.990,6.993,13.986,9.990,0.000,6.993,2,\r
                2025-12-01,2025-12-31,reporting:USD,29.727,19.737,14.791,21.784,9.990,0.000,6.993,,\r

                """)

        let overview = try await harness.request(
            "GET", "\(base)/analytics/overview?environment=Sandbox&from=2025-12-01&to=2025-12-28", key: app.secretKey)
        #expect(overview.json["previousFrom"] as? String == "2025-11-03")
        #expect(overview.json["previousTo"] as? String == "2025-11-30")
        let cards = overview.json["cards"] as? [[String: Any]] ?? []
        #expect(
            cards.map { $0["metric"] as? String } == [
                "active-subscriptions", "active-trials", "mrr", "revenue", "proceeds", "new-customers", "refunds",
            ])
        #expect(cards.map { $0["value"] as? Int } == [2, 0, 19737, 29727, 21784, 3, 0])
        #expect(cards.map { $0["previous"] as? Int } == [0, 0, 0, 0, 0, 0, 0])
        #expect(cards.allSatisfy { $0["change"] is NSNull })
        // The overview takes neither `resolution` nor `format`: like any parameter a route does
        // not declare, they change nothing and are not refused (they were read and refused).
        let overviewIgnoring = try await harness.request(
            "GET",
            "\(base)/analytics/overview?environment=Sandbox&from=2025-12-01&to=2025-12-28&resolution=hour"
                + "&format=xml&resolution=year",
            key: app.secretKey)
        #expect(overviewIgnoring.status == 200)
        #expect(overviewIgnoring.text == overview.text)

        for (query, parameter) in [
            ("from=2025-12-05&to=2025-12-01", "from"), ("resolution=hour", "resolution"),
            ("environment=Xcode", "environment"), ("from=2025-02-30", "from"), ("format=xml", "format"),
            ("from=2000-01-01&to=2025-12-01", "from"), ("productId=" + String(repeating: "p", count: 201), "productId"),
            ("productId=a%00b", "productId"), ("storefront=US%0A", "storefront"),
            ("subscriptionGroup=%C2%85", "subscriptionGroup"),
        ] {
            let refused = try await harness.request("GET", "\(base)/analytics/revenue?\(query)", key: app.secretKey)
            #expect(refused.status == 400, "\(query)")
            #expect(refused.errorCode == "invalid_analytics_query", "\(query)")
            #expect(refused.text.contains(parameter), "\(query)")
        }
        let unknown = try await harness.request("GET", "\(base)/analytics/ltv-forever", key: app.secretKey)
        #expect(unknown.status == 400)
        let publicKey = try await harness.request("GET", "\(base)/analytics/revenue", key: app.publicKey)
        #expect(publicKey.status == 403)

        // A rebuild from the stored facts finds the aggregates as kept; a corrupted row is repaired.
        let unchanged = try await AnalyticsAggregation.rebuild(
            appId: app.appId, store: harness.store, now: Self.at(day: 40))
        #expect(unchanged.changed == false)
        #expect(unchanged.customers == 3)
        let appId = app.appId
        try await harness.store.write { transaction in
            let customer = try transaction.customerIds(appId: appId)[0]
            var bogus = AnalyticsMeasures()
            bogus.gross = 1
            try transaction.applyAnalyticsContribution(
                customerId: customer, appId: appId, environment: .sandbox,
                [
                    AnalyticsDailyKey(
                        day: CalendarDay(year: 2025, month: 12, day: 9), productId: "x", subscriptionGroup: "",
                        storefront: "", currency: "USD"): bogus
                ])
        }
        let repaired = try await AnalyticsAggregation.rebuild(
            appId: app.appId, store: harness.store, now: Self.at(day: 40))
        #expect(repaired.changed)
        let again = try await get("revenue", "from=2025-12-01&to=2025-12-31&resolution=month")
        #expect(integers(again.first?["reporting"])["gross"] == 29727)
    }
}
