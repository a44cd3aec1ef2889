import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Retention and LTV rows (0018): contributions replaced by their difference, a savepoint that
/// throws taking its differences with it, and the reconcile step repairing a changed row.
extension StoreConformanceTests {
    static let january = CalendarDay(year: 2026, month: 1, day: 1)

    static func cohorts(renewals: Int64, d7: Int64) -> CohortContribution {
        CohortContribution(
            retention: [
                RetentionCohortKey(
                    cohortMonth: january, productId: "monthly", subscriptionGroup: "premium", storefront: "USA",
                    paidRenewals: renewals): 1
            ],
            ltv: [
                LTVCohortKey(
                    cohortMonth: january, productId: "monthly", subscriptionGroup: "premium", storefront: "USA",
                    day: CalendarDay(year: 2026, month: 1, day: 5), currency: "USD"): LTVMeasures(
                        customers: 1, d7: d7, d30: d7, d90: d7, d365: d7)
            ])
    }

    @Test("cohort rows: differences applied, undone with a savepoint, reconciled", arguments: Backend.enabled)
    func cohortRows(backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let (ann, bob) = try await store.write { tx in
                (
                    try tx.ensureCustomer(appId: F.appId, appUserId: "ann", at: F.now).id,
                    try tx.ensureCustomer(appId: F.appId, appUserId: "bob", at: F.now).id
                )
            }
            let (first, again) = try await store.write { tx in
                (
                    try tx.applyAnalyticsCohorts(
                        customerId: ann, appId: F.appId, environment: .production, Self.cohorts(renewals: 0, d7: 9990)),
                    try tx.applyAnalyticsCohorts(
                        customerId: ann, appId: F.appId, environment: .production, Self.cohorts(renewals: 0, d7: 9990))
                )
            }
            #expect(first)
            #expect(again == false)
            try await store.write { tx in
                #expect(throws: Planted.self) {
                    try tx.withSavepoint { () throws in
                        try tx.applyAnalyticsCohorts(
                            customerId: bob, appId: F.appId, environment: .production,
                            Self.cohorts(renewals: 0, d7: 4990))
                        throw Planted()
                    }
                }
                // Ann renews: her row moves from 0 to 1 paid renewal.
                try tx.applyAnalyticsCohorts(
                    customerId: ann, appId: F.appId, environment: .production, Self.cohorts(renewals: 1, d7: 9990))
            }
            let rows = try await store.read { try $0.analyticsCohortRows(appId: F.appId) }
            #expect(rows.retention.map { [$0.key.paidRenewals, $0.subscriptions] } == [[1, 1]])
            #expect(rows.ltv.map(\.measures) == [LTVMeasures(customers: 1, d7: 9990, d30: 9990, d90: 9990, d365: 9990)])
            let read = try await store.read { reader in
                (
                    try reader.analyticsRetention(
                        appId: F.appId, environment: .production, fromMonth: Self.january, throughMonth: Self.january,
                        filter: AnalyticsFilter(storefront: "USA")),
                    try reader.analyticsLTV(
                        appId: F.appId, environment: .production, fromMonth: Self.january, throughMonth: Self.january,
                        filter: AnalyticsFilter(productId: "other"), dayBoundaries: [])
                )
            }
            #expect(
                read.0 == [
                    RetentionCohortTotal(
                        cohortMonth: Self.january, productId: "monthly", paidRenewals: 1, subscriptions: 1)
                ])
            #expect(read.1.isEmpty)

            // A row changed behind the contributions' back is set back to their sum.
            try await store.write { tx in
                _ = try tx.sql("UPDATE analytics_ltv SET d7 = 1")
                _ = try tx.sql("UPDATE analytics_retention SET subscriptions = 5")
            }
            let repaired = try await store.write { try $0.reconcileAnalyticsCohorts(appId: F.appId) }
            // The LTV row, Ann's row, and her former row (0 paid renewals: kept at 0, set to 5).
            #expect(repaired == 3)
            let restored = try await store.read { try $0.analyticsCohortRows(appId: F.appId) }
            #expect(restored == rows)
            let none = try await store.write { try $0.reconcileAnalyticsCohorts(appId: F.appId) }
            #expect(none == 0)
        }
    }
}
