import AppStoreModels
import Entitlements
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Churn, MRR movement, refund reversals and requests, and figures at now for the bucket that
/// contains it, through the API on SQLite and PostgreSQL, against hand-computed figures.
///
/// Monthly 9.99 USD subscriptions (December 2025 = days 0…30; now is day 40, 2026-01-10 14:00):
/// ann d0 → d31 renewed to d62 (auto-renew off: voluntary); bob d2 → d33 (billing), back d38 (01-08) →
/// d69; cat d5 → d36 (auto-renew off); erin d9 18:00 → d40 18:00 (still active now, not at the
/// next midnight); dan d40 10:00 → d71.
@Suite struct AnalyticsChurnAPITests {
    /// Day `day` of December 2025 onwards at `hour` UTC, as `AnalyticsAPITests` counts them.
    static func at(day: Int64, hour: Int64 = 12) -> Timestamp { AnalyticsAPITests.at(day: day, hour: hour) }

    @Test func sqlite() async throws { try await run(.sqlite) }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func postgres() async throws { try await run(.postgres(TestDatabase.postgresURL!)) }

    func run(_ database: TestDatabase) async throws {
        let harness = try await ServerHarness(database: database)
        defer { Task { await harness.stop() } }
        harness.clock.set(Self.at(day: 40, hour: 14))
        let app = try await harness.createApp()
        let signer = AppStoreSigner(ca: harness.ca)
        let base = "/v1/apps/\(app.appId)"
        func post(_ user: String, _ jws: String) async throws {
            try await harness.postTransaction(app, user: user, jws)
        }
        func notify(_ payload: String) async throws {
            let response = try await harness.request(
                "POST", "\(base)/notifications/appstore", json: ["signedPayload": payload])
            #expect(response.status == 200, "\(response.text)")
        }
        func transaction(_ id: String, _ original: String, _ from: Timestamp, _ to: Timestamp) throws -> String {
            try signer.transaction(id: id, originalId: original, purchase: from, expires: to, signed: from)
        }
        let ann = uniqueDigits()
        let bob = uniqueDigits()
        let cat = uniqueDigits()
        let erin = uniqueDigits()
        let dan = uniqueDigits()
        let annFirst = try transaction(ann, ann, Self.at(day: 0), Self.at(day: 31))
        try await post("ann", annFirst)
        try await post("ann", try transaction(ann + "1", ann, Self.at(day: 31), Self.at(day: 62)))
        let bobFirst = try transaction(bob, bob, Self.at(day: 2), Self.at(day: 33))
        try await post("bob", bobFirst)
        let catFirst = try transaction(cat, cat, Self.at(day: 5), Self.at(day: 36))
        try await post("cat", catFirst)
        try await post("erin", try transaction(erin, erin, Self.at(day: 9, hour: 18), Self.at(day: 40, hour: 18)))
        // Reasons: ann and cat turned auto-renew off; bob's billing failed, and he came back.
        try await notify(
            try signer.notification(
                .didChangeRenewalStatus, .autoRenewDisabled,
                renewal: try signer.renewal(originalId: ann, signed: Self.at(day: 39), autoRenew: false),
                signed: Self.at(day: 39)))
        try await notify(
            try signer.notification(
                .didChangeRenewalStatus, .autoRenewDisabled,
                renewal: try signer.renewal(originalId: cat, signed: Self.at(day: 20), autoRenew: false),
                signed: Self.at(day: 20)))
        try await notify(
            try signer.notification(
                .expired, .billingRetry, transaction: bobFirst,
                renewal: try signer.renewal(originalId: bob, signed: Self.at(day: 33, hour: 13), autoRenew: false),
                signed: Self.at(day: 33, hour: 13)))
        try await post("bob", try transaction(bob + "1", bob, Self.at(day: 38), Self.at(day: 69)))
        try await post("dan", try transaction(dan, dan, Self.at(day: 40, hour: 10), Self.at(day: 71)))
        // December: a reversal, a refund request Apple declined, one without an outcome.
        try await notify(try signer.notification(.refundReversed, transaction: annFirst, signed: Self.at(day: 25)))
        try await notify(try signer.notification(.consumptionRequest, transaction: catFirst, signed: Self.at(day: 20)))
        try await notify(try signer.notification(.refundDeclined, transaction: catFirst, signed: Self.at(day: 22)))
        try await notify(try signer.notification(.consumptionRequest, transaction: annFirst, signed: Self.at(day: 21)))

        func get(_ metric: String, _ query: String) async throws -> [[String: Any]] {
            let response = try await harness.request(
                "GET", "\(base)/analytics/\(metric)?environment=Sandbox&\(query)", key: app.secretKey)
            #expect(response.status == 200, "\(response.text)")
            return response.json["points"] as? [[String: Any]] ?? []
        }
        func integers(_ object: Any?) -> [String: Int] {
            (object as? [String: Any] ?? [:]).compactMapValues { $0 as? Int }
        }

        try await expectFigures(get: get, integers: integers)

        // A rebuild from the stored facts finds everything as ingestion kept it.
        let rebuilt = try await AnalyticsAggregation.rebuild(
            appId: app.appId, store: harness.store, now: Self.at(day: 40, hour: 14))
        #expect(rebuilt.changed == false)
        #expect(rebuilt.customers == 5)
        // Periods removed behind the aggregates' back are found and put back by a rebuild.
        let appId = app.appId
        try await harness.store.write { transaction in
            for customer in try transaction.customerIds(appId: appId) {
                try transaction.applyAnalyticsPeriods(
                    customerId: customer, appId: appId, environment: .sandbox, [])
            }
        }
        #expect(try await get("churn", "from=2026-01-01&to=2026-01-31&resolution=month").first?["expired"] as? Int == 0)
        let repaired = try await AnalyticsAggregation.rebuild(
            appId: app.appId, store: harness.store, now: Self.at(day: 40, hour: 14))
        #expect(repaired.changed)
        try await expectFigures(get: get, integers: integers)
    }

    func expectFigures(
        get: (String, String) async throws -> [[String: Any]], integers: (Any?) -> [String: Int]
    ) async throws {
        // Churn: at 2026-01-01 ann, bob, cat and erin pay; bob (billing) and cat (auto-renew
        // off) expired; bob came back on 01-08; erin's period ends after now. December: none.
        let churn = try await get("churn", "from=2025-12-01&to=2026-01-31&resolution=month")
        #expect(churn.count == 2)
        #expect(
            churn.map { integers($0) } == [
                ["activeAtStart": 0, "expired": 0, "resubscribed": 0, "churned": 0],
                ["activeAtStart": 4, "expired": 2, "resubscribed": 1, "churned": 1],
            ])
        #expect(churn.map { $0["churnRate"] as? Double } == [nil, 0.25])
        #expect(
            churn.map { integers($0["byReason"]) } == [
                ["voluntary": 0, "involuntary": 0, "productUnavailable": 0, "other": 0],
                ["voluntary": 1, "involuntary": 0, "productUnavailable": 0, "other": 0],
            ])
        // By day: bob expired on 01-03 (not back by its end), cat on 01-06.
        let daily = try await get("churn", "from=2026-01-03&to=2026-01-06")
        #expect(daily.map { $0["churned"] as? Int } == [1, 0, 0, 1])
        #expect(daily.map { $0["activeAtStart"] as? Int } == [4, 3, 3, 3])
        #expect(daily.map { integers($0["byReason"])["involuntary"] } == [1, 0, 0, 0])
        // 601 days read in two statements (512 windows each at most): the same four days last.
        let long = try await get("churn", "from=2024-05-16&to=2026-01-06")
        #expect(long.count == 601)
        #expect(long.suffix(4).map { $0["churned"] as? Int } == [1, 0, 0, 1])
        #expect(long.suffix(4).map { integers($0["byReason"])["involuntary"] } == [1, 0, 0, 0])
        #expect(long.dropLast(4).allSatisfy { $0["expired"] as? Int == 0 })
        // With a filter after the windows' parameters: the product's figures, another's none.
        let product = try await get("churn", "from=2024-05-16&to=2026-01-06&productId=com.example.monthly")
        #expect(product.suffix(4).map { $0["churned"] as? Int } == [1, 0, 0, 1])
        let other = try await get("churn", "from=2024-05-16&to=2026-01-06&productId=com.example.other")
        #expect(other.count == 601)
        #expect(other.allSatisfy { $0["expired"] as? Int == 0 && $0["activeAtStart"] as? Int == 0 })

        // MRR movement: December's four new subscriptions; January to the midnight starting
        // today: bob and cat churned, bob reactivated (erin's end and dan's start are today's).
        let movement = try await get("mrr-movement", "from=2025-12-01&to=2026-01-31&resolution=month")
        let figures = movement.map { ($0["byCurrency"] as? [[String: Any]] ?? []).map { integers($0) } }
        #expect(
            figures == [
                [
                    [
                        "start": 0, "end": 39960, "new": 39960, "expansion": 0, "contraction": 0, "churned": 0,
                        "reactivation": 0,
                    ]
                ],
                [
                    [
                        "start": 39960, "end": 29970, "new": 0, "expansion": 0, "contraction": 0, "churned": 19980,
                        "reactivation": 9990,
                    ]
                ],
            ])
        #expect(movement.map { $0["movementTo"] as? String } == ["2026-01-01", "2026-01-10"])
        let byDay = try await get("mrr-movement", "from=2025-12-25&to=2026-01-10")
        for point in byDay {
            for figure in (point["byCurrency"] as? [[String: Any]] ?? []).map({ integers($0) }) {
                let explained =
                    figure["new"]! + figure["expansion"]! - figure["contraction"]! - figure["churned"]!
                    + figure["reactivation"]!
                #expect(figure["end"]! - figure["start"]! == explained, "\(point["period"] ?? "")")
            }
        }
        // MRR over the same days agrees with the movement's ends.
        let mrr = try await get("mrr", "from=2025-12-25&to=2026-01-09")
        #expect(
            mrr.map { ($0["byCurrency"] as? [[String: Any]] ?? []).first?["gross"] as? Int }
                == byDay.dropLast().map { ($0["byCurrency"] as? [[String: Any]] ?? []).first?["end"] as? Int })

        // Actives: the bucket containing now is counted at now (erin still pays, dan has started).
        let active = try await get("active-subscriptions", "from=2026-01-09&to=2026-01-10")
        #expect(active.map { $0["count"] as? Int } == [3, 4])
        let mrrNow = try await get("mrr", "from=2026-01-01&to=2026-01-31&resolution=month")
        #expect(
            (mrrNow.first?["byCurrency"] as? [[String: Any]] ?? []).map { integers($0) } == [
                ["gross": 39960, "proceeds": 27972]
            ])

        // Refunds: December's reversal and requests by outcome.
        let refunds = try await get("refunds", "from=2025-12-01&to=2025-12-31&resolution=month")
        #expect(refunds.first?["reversals"] as? Int == 1)
        #expect(
            integers(refunds.first?["consumptionRequests"]) == [
                "count": 2, "granted": 0, "declined": 1, "noOutcome": 1,
            ])
    }
}
