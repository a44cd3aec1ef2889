import AppStoreModels
import Foundation
import StorekeeperTesting
import Testing

/// Issue 13: an analytics read covers exactly the days `from` … `to` (docs/analytics.md). Sums
/// of what happened (revenue, refunds, new customers) count the days of the range only, while
/// figures at an instant (active subscriptions, MRR) legitimately add up every earlier delta.
/// Purchases sit on both sides of `from` and of `to` (the read also fetches the day after `to`,
/// for the instant at its end), on SQLite and PostgreSQL, in December 2025 (Sandbox, USD):
/// - A: monthly, bought 12-03 (before `from`), active throughout;
/// - B: monthly, bought 12-09 23:00 (the day before `from`), refunded in full on 12-15;
/// - C: monthly, bought 12-10 12:00 (the first day); D: 12-20 12:00 (the last day);
/// - E: monthly, bought 12-21 12:00 (the day after `to`).
@Suite struct AnalyticsRangeTests {
    static let day = AnalyticsAPITests.day
    /// Day `day` of December 2025 (day 0 = 2025-12-01, a Monday) at `hour` UTC, as
    /// `AnalyticsAPITests` counts them.
    static func at(day: Int64, hour: Int64 = 12) -> Timestamp { AnalyticsAPITests.at(day: day, hour: hour) }

    @Test func sumsCountTheRangeOnlyOnSQLite() async throws { try await run(.sqlite) }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func sumsCountTheRangeOnlyOnPostgreSQL() async throws { try await run(.postgres(TestDatabase.postgresURL!)) }

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
        func monthly(_ user: String, bought: Timestamp) async throws -> String {
            let id = uniqueDigits()
            try await post(
                user,
                try signer.transaction(
                    id: id, originalId: id, purchase: bought, expires: bought.adding(milliseconds: 31 * Self.day),
                    signed: bought))
            return id
        }
        _ = try await monthly("ann", bought: Self.at(day: 2))
        let bob = try await monthly("bob", bought: Self.at(day: 8, hour: 23))
        _ = try await monthly("cat", bought: Self.at(day: 9))
        _ = try await monthly("dan", bought: Self.at(day: 19))
        _ = try await monthly("eve", bought: Self.at(day: 20))
        try await post(
            "bob",
            try signer.transaction(
                id: bob, originalId: bob, purchase: Self.at(day: 8, hour: 23),
                expires: Self.at(day: 8, hour: 23).adding(milliseconds: 31 * Self.day), signed: Self.at(day: 14),
                revocation: Self.at(day: 14)))

        func points(_ metric: String, _ resolution: String) async throws -> [[String: Any]] {
            let response = try await harness.request(
                "GET",
                "\(base)/analytics/\(metric)?environment=Sandbox&from=2025-12-10&to=2025-12-20&resolution=\(resolution)",
                key: app.secretKey)
            #expect(response.status == 200, "\(response.text)")
            return response.json["points"] as? [[String: Any]] ?? []
        }
        func usd(_ point: [String: Any]) -> [String: Int] {
            ((point["byCurrency"] as? [[String: Any]])?.first { $0["currency"] as? String == "USD" } ?? [:])
                .compactMapValues { $0 as? Int }
        }

        // The month bucket is clipped to [12-10, 12-20]: C and D bought in it; B's refund (of a
        // purchase before it) on its refund date only.
        let revenue = try await points("revenue", "month")
        #expect(revenue.map { $0["period"] as? String } == ["2025-12-10"])
        #expect(revenue.map { $0["periodEnd"] as? String } == ["2025-12-20"])
        #expect(
            revenue.map(usd) == [
                [
                    "gross": 19980, "proceeds": 13986, "refunded": 0, "refundedProceeds": 0, "net": 19980,
                    "netProceeds": 13986, "transactions": 2, "refundedOnDate": 9990,
                ]
            ])
        // Weeks: Wednesday 12-10 to Sunday 12-14, then Monday 12-15 to 12-20.
        let weekly = try await points("revenue", "week")
        #expect(weekly.map { $0["period"] as? String } == ["2025-12-10", "2025-12-15"])
        #expect(weekly.map { usd($0)["gross"] } == [9990, 9990])
        #expect(weekly.map { usd($0)["refundedOnDate"] } == [0, 9990])
        let daily = try await points("revenue", "day")
        #expect(daily.count == 11)
        #expect(daily.map { usd($0)["transactions"] ?? 0 } == [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1])

        #expect(try await points("new-customers", "month").map { $0["count"] as? Int } == [2])
        let newPerDay: [Int?] = [1, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]
        #expect(try await points("new-customers", "day").map { $0["count"] as? Int } == newPerDay)
        let refunds = try await points("refunds", "month")
        #expect(refunds.map { $0["count"] as? Int } == [1])
        #expect(refunds.map { $0["refundRate"] as? Double } == [0.5])
        #expect(
            refunds.map { ($0["byCurrency"] as? [[String: Any]])?.first?["amount"] as? Int } == [9990])

        // Instants add up everything before: at the midnight ending 12-20, A, C and D pay (B was
        // refunded in full, E starts later); at the one ending 12-10, A and C.
        #expect(try await points("active-subscriptions", "month").map { $0["count"] as? Int } == [3])
        #expect(try await points("active-subscriptions", "day").first?["count"] as? Int == 2)
        #expect(try await points("mrr", "month").map { usd($0)["gross"] } == [29970])

        let overview = try await harness.request(
            "GET", "\(base)/analytics/overview?environment=Sandbox&from=2025-12-10&to=2025-12-20",
            key: app.secretKey)
        let cards = overview.json["cards"] as? [[String: Any]] ?? []
        let values = Dictionary(
            uniqueKeysWithValues: cards.compactMap { card in
                (card["metric"] as? String).map { ($0, card["value"] as? Int) }
            })
        #expect(values["active-subscriptions"] == 3)
        #expect(values["new-customers"] == 2)
        #expect(values["refunds"] == 1)
        #expect(overview.json["previousFrom"] as? String == "2025-11-29")
        let previous = Dictionary(
            uniqueKeysWithValues: cards.compactMap { card in
                (card["metric"] as? String).map { ($0, card["previous"] as? Int) }
            })
        // 11-29 … 12-09: A and B were new then, and both paid at its end.
        #expect(previous["new-customers"] == 2)
        #expect(previous["active-subscriptions"] == 1)
        #expect(previous["refunds"] == 0)
    }
}
