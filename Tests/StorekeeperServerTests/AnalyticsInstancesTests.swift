import AppStoreModels
import Foundation
import SecretSealing
import Storage
import StorekeeperIngestion
import StorekeeperTesting
import Testing

/// Two server instances on one database ingesting purchases of one app at the same time: the
/// aggregates each keeps in its commits add up exactly (no update lost to a concurrent one, a
/// deadlock retried), and a rebuild from the facts finds nothing to change.
struct AnalyticsInstancesTests {
    static let customers = 40

    @Test func twoInstancesOnSQLite() async throws { try await run(.sqlite) }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func twoInstancesOnPostgreSQL() async throws { try await run(.postgres) }

    private func run(_ engine: StoreEngine) async throws {
        let database = try await OwnDatabase.make(engine)
        let secrets = StoredSecrets(sealer: SecretSealer(key: try SecretsKey.generate()))
        let first = try await ServerHarness(secrets: secrets, opened: (try await database.open(), {}))
        let second = try await ServerHarness(ca: first.ca, secrets: secrets, opened: (try await database.open(), {}))
        defer {
            Task {
                await second.stop()
                await first.stop()
                database.drop()
            }
        }
        for harness in [first, second] {
            harness.clock.set(TestSigning.signedDate.adding(milliseconds: 9 * 86_400_000))
        }
        let app = try await first.createApp()
        let signer = AppStoreSigner(ca: first.ca)
        let december = TestSigning.signedDate
        // Every customer buys on one of the first three days of December: the same daily rows
        // are updated by both instances at once.
        try await withThrowingTaskGroup(of: Int.self) { group in
            for customer in 0..<Self.customers {
                let harness = customer % 2 == 0 ? first : second
                let id = uniqueDigits()
                let purchase = december.adding(milliseconds: Int64(customer % 3) * 86_400_000 + 3_600_000)
                let jws = try signer.transaction(
                    id: id, originalId: id, purchase: purchase, expires: purchase.adding(milliseconds: 30 * 86_400_000),
                    signed: purchase)
                group.addTask {
                    try await harness.request(
                        "POST", "/v1/apps/\(app.appId)/customers/user-\(customer)/transactions", key: app.publicKey,
                        json: ["signedTransaction": jws]
                    ).status
                }
            }
            for try await status in group { #expect(status == 200) }
        }
        let revenue = try await second.request(
            "GET", "/v1/apps/\(app.appId)/analytics/revenue?environment=Sandbox&from=2025-12-01&to=2025-12-03",
            key: app.secretKey)
        let points = revenue.json["points"] as? [[String: Any]] ?? []
        let gross = points.map { (($0["byCurrency"] as? [[String: Any]])?.first?["gross"] as? Int) ?? 0 }
        #expect(gross == [14 * 9990, 13 * 9990, 13 * 9990])
        let active = try await first.request(
            "GET",
            "/v1/apps/\(app.appId)/analytics/active-subscriptions?environment=Sandbox&from=2025-12-03&to=2025-12-03",
            key: app.secretKey)
        #expect((active.json["points"] as? [[String: Any]])?.first?["count"] as? Int == Self.customers)
        let rebuilt = try await AnalyticsAggregation.rebuild(appId: app.appId, store: first.store, now: december)
        #expect(rebuilt.changed == false)
        #expect(rebuilt.customers == Self.customers)
    }
}
