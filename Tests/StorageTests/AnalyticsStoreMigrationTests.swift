import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// Migration `0016_analytics_store` on aggregates stored before it: every daily row, period and
/// contribution is kept, as the App Store's (`refunds_partial` 0); a Google Play row of the
/// same day, product, storefront and currency is then a row of its own; and the rows still equal
/// the sum of the contributions (a reconciliation changes nothing).
@Suite("Migration 0016: analytics store")
struct AnalyticsStoreMigrationTests {
    static let identifier = "0016_analytics_store"
    static let previous = Array(Migration.all.prefix { $0.identifier != identifier })

    @Test("rows, periods and contributions stored before are the App Store's", arguments: Backend.enabled)
    func keepsTheAggregatesAsAppStoreOnes(backend: Backend) async throws {
        let database = try await TestDatabase.make(backend)
        defer { Task { await database.drop() } }
        let connection = try PerAppKeysMigrationTests.connect(database)
        try Migrator.migrate(connection, migrations: Self.previous, apply: true)
        let day = CalendarDay(containing: F.at(10))
        // What the binary before 0016 stored: 30 measures, keys without a store.
        let old = Array(1...30).map(Int64.init)
        let key = AnalyticsDailyKey(
            day: day, productId: "monthly", subscriptionGroup: "premium", storefront: "USA", currency: "USD")
        try connection.executeScript("BEGIN")
        let customerId = try { () throws -> Int64 in
            let tx = SQLStoreTransaction(connection: connection)
            try tx.saveApp(F.app, at: F.at(0))
            let ann = try tx.ensureCustomer(appId: F.appId, appUserId: "ann", at: F.now)
            let columns = Array(AnalyticsMeasures.columns.prefix(30)).joined(separator: ", ")
            let placeholders = (8...37).map { "$\($0)" }.joined(separator: ", ")
            _ = try connection.execute(
                """
                INSERT INTO analytics_daily (app_id, environment, day, product_id, subscription_group, storefront,
                                             currency, \(columns))
                VALUES ($1, $2, $3, $4, $5, $6, $7, \(placeholders))
                """,
                [
                    .text(F.appId), .text("Production"), .integer(day.daysSince1970), .text("monthly"),
                    .text("premium"), .text("USA"), .text("USD"),
                ] + old.map { SQLValue.integer($0) })
            try tx.execute(
                """
                INSERT INTO analytics_contributions (customer_id, environment, app_id, contribution_json)
                VALUES ($1, $2, $3, $4)
                """, .integer(ann.id), .text("Production"), .text(F.appId),
                .text(
                    #"[{"key":{"day":"\#(day.iso8601)","productId":"monthly","subscriptionGroup":"premium","storefront":"USA","currency":"USD"},"values":[\#(old.map(String.init).joined(separator: ","))]}]"#
                ))
            try tx.execute(
                """
                INSERT INTO analytics_periods (customer_id, environment, app_id, transaction_id, subscription,
                    product_id, subscription_group, storefront, currency, activity, start_at, end_at, mrr_gross,
                    mrr_proceeds)
                VALUES ($1, 'Production', $2, 't1', 'premium', 'monthly', 'premium', 'USA', 'USD', 'PAID', $3, $4,
                        9990, 6993)
                """, .integer(ann.id), .text(F.appId), SQLValue(F.at(10)), SQLValue(F.at(40)))
            return ann.id
        }()
        try connection.executeScript("COMMIT")

        try Migrator.migrate(connection, migrations: Migration.all, apply: true)
        try connection.executeScript("BEGIN")
        let tx = SQLStoreTransaction(connection: connection)
        let migrated = AnalyticsMeasures(values: old + [0])!
        #expect(
            try tx.analyticsRows(appId: F.appId)
                == [AnalyticsDailyRow(environment: "Production", key: key, measures: migrated)])
        #expect(key.store == .appStore)
        let active = try tx.analyticsActiveAt(
            appId: F.appId, environment: .production, instant: F.at(20), filter: AnalyticsFilter(store: .appStore))
        #expect(
            active == [
                AnalyticsActiveTotal(activity: .paid, currency: "USD", count: 1, mrrGross: 9990, mrrProceeds: 6993)
            ])
        #expect(
            try tx.analyticsActiveAt(
                appId: F.appId, environment: .production, instant: F.at(20),
                filter: AnalyticsFilter(store: .googlePlay)) == [])
        // The contribution stored before reads as the same row: nothing to reconcile.
        #expect(try tx.reconcileAnalyticsDaily(appId: F.appId) == 0)

        // A Google Play row with the same day, product, storefront and currency is its own row.
        var play = key
        play.store = .googlePlay
        var measures = AnalyticsMeasures()
        measures.transactions = 1
        measures.gross = 9990
        try tx.applyAnalyticsContribution(
            customerId: customerId, appId: F.appId, environment: .production,
            [key: AnalyticsMeasures(values: old)!, play: measures])
        try tx.flushAnalyticsDaily()
        #expect(
            try tx.analyticsRows(appId: F.appId) == [
                AnalyticsDailyRow(environment: "Production", key: key, measures: migrated),
                AnalyticsDailyRow(environment: "Production", key: play, measures: measures),
            ])
        #expect(try tx.reconcileAnalyticsDaily(appId: F.appId) == 0)
        try connection.executeScript("COMMIT")
    }
}
