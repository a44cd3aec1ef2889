import AppStoreModels
import Entitlements
import Foundation
import StorekeeperIngestion
import StorekeeperTesting
import Synchronization
import Testing

@testable import Storage

/// Issue 13: `AnalyticsAggregation.rebuild` runs beside ingestion. A rebuild over 300 customers
/// whose facts have no aggregates yet goes in batches of 100; purchases for the same app (a
/// customer of the batch in progress, one of a later batch, a new one) are posted when the
/// first batch commits and must be answered before the rebuild's next batch starts (on
/// SQLite they interleave with the batches on the single writer; on PostgreSQL they wait at
/// most for the batch holding their rows). The aggregates end equal to a fresh computation
/// from every customer's facts, and the daily rows to the sum of the contributions.
@Suite struct AnalyticsRebuildTests {
    static let customers = 300
    static let day = UnaggregatedCustomers.day

    @Test func ingestionProceedsDuringARebuildOnSQLite() async throws { try await run(.sqlite) }

    @Test(.enabled(if: TestDatabase.postgresURL != nil, Comment(rawValue: TestDatabase.postgresSkip)))
    func ingestionProceedsDuringARebuildOnPostgreSQL() async throws {
        let (database, drop) = try TestDatabase.ownPostgres()
        try await run(database, drop: drop)
    }

    /// What the purchases posted during the rebuild answered, and the progress reported.
    private final class Observed: Sendable {
        struct Purchases {
            var statuses: [Int] = []
            var failure: String?
        }
        let purchases = Mutex(Purchases())
        let reports = Mutex<[Int]>([])
    }

    private func run(_ database: TestDatabase, drop: @escaping @Sendable () -> Void = {}) async throws {
        let harness = try await ServerHarness(database: database)
        defer {
            Task {
                await harness.stop()
                drop()
            }
        }
        let december = UnaggregatedCustomers.december
        let now = december.adding(milliseconds: 40 * Self.day)
        harness.clock.set(now)
        let app = try await harness.createApp()
        let appId = app.appId
        try await UnaggregatedCustomers.store(Self.customers, appId: appId, idPrefix: "70", in: harness.store)
        let signer = AppStoreSigner(ca: harness.ca)
        var posts: [(user: String, jws: String)] = []
        for user in ["user-150", "user-250", "newcomer"] {
            let id = uniqueDigits()
            let purchase = december.adding(milliseconds: 12 * Self.day)
            posts.append(
                (
                    user,
                    try signer.transaction(
                        id: id, originalId: id, purchase: purchase,
                        expires: purchase.adding(milliseconds: 30 * Self.day), signed: purchase)
                ))
        }
        let sent = posts
        let observed = Observed()
        let result = try await AnalyticsAggregation.rebuild(
            appId: appId, store: harness.store, now: now,
            progress: { done, total in
                observed.reports.withLock { $0.append(done) }
                #expect(total == Self.customers)
                if done == 100 {
                    // Posted while the second batch runs; not awaited here.
                    Task {
                        for (user, jws) in sent {
                            do {
                                let response = try await harness.request(
                                    "POST", "/v1/apps/\(appId)/customers/\(user)/transactions", key: app.publicKey,
                                    json: ["signedTransaction": jws])
                                observed.purchases.withLock { $0.statuses.append(response.status) }
                            } catch {
                                observed.purchases.withLock { $0.failure = "\(error)" }
                            }
                        }
                    }
                } else if done == 200 {
                    // The rebuild waits here until the purchases are answered: ingestion is not
                    // held for the rest of the rebuild. Generous, for a loaded machine.
                    let deadline = ContinuousClock.now + .seconds(60)
                    while observed.purchases.withLock({ $0.statuses.count < sent.count && $0.failure == nil }),
                        ContinuousClock.now < deadline
                    {
                        try? await Task.sleep(for: .milliseconds(10))
                    }
                }
            })
        let answered = observed.purchases.withLock { $0 }
        #expect(answered.failure == nil)
        #expect(answered.statuses == [200, 200, 200])
        #expect(observed.reports.withLock { $0 } == [0, 100, 200, 300])
        #expect(result.customers == Self.customers)
        #expect(result.stopped == false)
        #expect(result.changed)
        #expect(result.rowsBefore == 0)
        // The contributions were kept one customer at a time: the daily rows already agreed.
        #expect(result.rowsRepaired == 0)
        // Every stored customer but the one whose purchase was ingested ahead of its batch
        // (user-250); user-150's batch ran beside its purchase, so either wrote it first.
        #expect((Self.customers - 2...Self.customers - 1).contains(result.contributionsChanged))

        let (rows, expected, customers) = try await UnaggregatedCustomers.rows(
            appId: appId, now: now, in: harness.store)
        #expect(customers == Self.customers + 1)
        #expect(rows == expected)
        // Not vacuous: five purchase days of 60 customers each, plus the three new purchases.
        let gross = rows.filter { $0.environment == "Sandbox" }.reduce(Int64(0)) { $0 + $1.measures.gross }
        #expect(gross == Int64((Self.customers + 3) * UnaggregatedCustomers.price))
        #expect(result.rowsAfter == rows.count)

        let again = try await AnalyticsAggregation.rebuild(appId: appId, store: harness.store, now: now)
        #expect(again.changed == false)
        #expect(again.customers == Self.customers + 1)
        #expect(again.rowsBefore == rows.count)
        #expect(again.rowsAfter == rows.count)

        // A daily row changed behind the contributions' back (no customer's facts say so) is
        // set back to their sum by the last step.
        try await harness.store.write { transaction in
            let sql = try #require(transaction as? SQLStoreTransaction)
            let updated = try sql.execute(
                """
                UPDATE analytics_daily SET gross = gross + 5
                WHERE app_id = $1 AND environment = 'Sandbox' AND day = $2 AND product_id = 'com.example.monthly'
                """, .text(appId), .integer(CalendarDay(containing: december).daysSince1970))
            #expect(updated == 1)
        }
        let repaired = try await AnalyticsAggregation.rebuild(appId: appId, store: harness.store, now: now)
        #expect(repaired.changed)
        #expect(repaired.contributionsChanged == 0)
        #expect(repaired.rowsRepaired == 1)
        #expect(Set(try await harness.store.read { try $0.analyticsRows(appId: appId) }) == expected)
    }
}
