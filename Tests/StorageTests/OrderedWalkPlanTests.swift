import AppStoreModels
import Entitlements
import StorekeeperTesting
import Testing

@testable import Storage

/// Pages of one app's rows are read by walking an index in their order and stopping at the page
/// (migration 0034), never by reading all of the app's rows and sorting them. Before, SQLite
/// (which never analyzes a Storekeeper store) sorted every customer of the app for each analytics
/// rebuild batch, every watched Play token for each re-read claim (both in the write
/// transaction), and every notification of the app for each page of `GET …/notifications`.
/// PostgreSQL, given statistics, may walk its primary key instead: any walk in order is fine
/// there, a sort is not.
@Suite struct OrderedWalkPlanTests {
    typealias F = IngestionFixture
    static let other = AppRecord(id: "app-2", bundleId: "com.example.other", environments: [.production])
    static let rows = 3_000

    /// SQLite walks `index` with no temporary B-tree; PostgreSQL sorts nothing, and for a page
    /// (`scans: false`) reads no table whole. A claim's outer update may join back to its table
    /// as PostgreSQL's costs choose, so only its order is asserted there.
    static func expectOrderedWalk(_ plan: String, index: String, backend: Backend, scans: Bool = false) {
        if backend == .sqlite {
            #expect(plan.contains(index), "\(plan)")
            #expect(!plan.contains("TEMP B-TREE"), "\(plan)")
        }
        #expect(!plan.contains("Sort"), "\(plan)")
        if !scans { #expect(!plan.contains("Seq Scan"), "\(plan)") }
    }

    /// PostgreSQL: `index` read, and none of `tables` read whole, by a scan or by its primary
    /// key (other tables may be).
    static func expectIndexRead(_ plan: String, index: String, tables: [String]) {
        #expect(plan.contains(index), "\(plan)")
        for table in tables {
            #expect(!plan.contains("Seq Scan on \(table)"), "\(plan)")
            #expect(!plan.contains("\(table)_pkey"), "\(plan)")
        }
    }

    static func seed(_ store: any Store, _ body: @escaping @Sendable (any StoreTransaction, String, Int) throws -> Void)
        async throws
    {
        try await F.setUp(store)
        try await store.write { tx in
            try tx.saveApp(Self.other, at: F.at(0))
            for appId in [F.appId, Self.other.id] {
                for n in 0..<Self.rows { try body(tx, appId, n) }
            }
            try tx.refreshPlannerStatistics()
        }
    }

    @Test(arguments: Backend.enabled)
    func rebuildBatchesWalkTheAppsCustomers(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.seed(store) { tx, appId, n in
                _ = try tx.ensureCustomer(appId: appId, appUserId: "user-\(n)", at: F.at(0))
            }
            let (plan, page, all) = try await store.read { reader in
                let all = try reader.sql("SELECT id FROM customers WHERE app_id = $1 ORDER BY id", .text(F.appId))
                    .map { row throws(StoreError) in try row.integer(0) }
                let after = all[999]
                return (
                    try reader.queryPlan(
                        SQLStoreTransaction.customerIdsAfter, [.text(F.appId), .integer(after), .integer(100)]),
                    try (reader as! SQLStoreTransaction).customerIds(appId: F.appId, after: after, limit: 100), all
                )
            }
            Self.expectOrderedWalk(plan, index: "customers_app", backend: backend)
            #expect(all.count == Self.rows)
            #expect(page == Array(all[1000..<1100]))
        }
    }

    @Test(arguments: Backend.enabled)
    func playRereadClaimsWalkTheAppsTokensInOrder(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            // Every tenth token is on hold with no known expiry, read at day 0: due at day 400,
            // and last in the claim's order. The others expire over 300 days, with access; the 40
            // below 45 were read at day 0 (overdue at day 400), the rest read since their expiry
            // (not due). Each also has an expired purchase beside it, which expired before any of
            // them and is never due: the claim must not walk those (migration 0039).
            try await Self.seed(store) { tx, appId, n in
                let unknown = n % 10 == 0
                let insert = """
                    INSERT INTO play_subscription_watch (app_id, purchase_token, state, expires_at, last_read_at)
                    VALUES ($1, $2, $3, $4, $5)
                    """
                _ = try tx.sql(
                    insert, .text(appId), .text("t\(n)"),
                    .text((unknown ? PlaySubscriptionState.onHold : .active).rawValue),
                    unknown ? .null : SQLValue(F.at(Int64(n % 300) + 1)),
                    SQLValue(unknown || n < 45 ? F.at(0) : F.at(399).adding(milliseconds: 43_200_000)))
                _ = try tx.sql(
                    insert, .text(appId), .text("x\(n)"), .text(PlaySubscriptionState.expired.rawValue),
                    SQLValue(F.at(0).adding(milliseconds: Int64(n))), SQLValue(F.at(0)))
            }
            let now = F.at(400)
            let rules = PlayRereadRules(expiryDelayMilliseconds: 3_600_000, pendingIntervalMilliseconds: 86_400_000)
            let plan = try await store.read { reader in
                try reader.queryPlan(
                    backend == .postgres
                        ? SQLStoreTransaction.playRereadClaimPostgres : SQLStoreTransaction.playRereadClaimSQLite,
                    [
                        .text("owner"), SQLValue(now.adding(milliseconds: 60_000)), .text(F.appId), SQLValue(now),
                        SQLValue(now.adding(milliseconds: -rules.expiryDelayMilliseconds)),
                        SQLValue(now.adding(milliseconds: -rules.pendingIntervalMilliseconds)), .integer(45),
                    ])
            }
            Self.expectOrderedWalk(plan, index: "play_subscription_watch_claimable", backend: backend, scans: true)
            #expect(!plan.contains("play_subscription_watch_expires"), "\(plan)")
            #expect(!plan.contains("play_subscription_watch_due"), "\(plan)")
            // The claimable states are those of the two kinds of due token, nothing else.
            #expect(Set(PlayRereadStates.claimable) == Set(PlayRereadStates.withAccess + PlayRereadStates.pending))
            #expect(PlayRereadStates.claimable.count == 5)

            // The 40 due with a known expiry, then the first five without one, by token.
            let claimed = try await store.write { tx in
                try tx.claimPlayRereads(
                    appId: F.appId, rules: rules, owner: "owner", now: now, leaseMilliseconds: 60_000, limit: 45)
            }
            let known = (1..<45).filter { $0 % 10 != 0 }.map { "t\($0)" }
            let unknown = (0..<Self.rows).filter { $0 % 10 == 0 }.map { "t\($0)" }.sorted().prefix(5)
            #expect(known.count == 40)
            #expect(claimed.map(\.purchaseToken) == (known + unknown).sorted())
            #expect(claimed.filter { $0.expiresAt == nil }.map(\.purchaseToken).sorted() == Array(unknown))
        }
    }

    @Test(arguments: Backend.enabled)
    func notificationPagesWalkTheAppsNotifications(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.seed(store) { tx, appId, n in
                _ = try tx.sql(
                    """
                    INSERT INTO notifications (app_id, notification_uuid, notification_type, signed_date, received_at,
                                               signed_payload)
                    VALUES ($1, $2, $3, $4, $4, 'payload')
                    """, .text(appId), .text("uuid-\(appId)-\(n)"), .text(n % 2 == 0 ? "DID_RENEW" : "EXPIRED"),
                    SQLValue(F.at(Int64(n % 300))))
            }
            let newest: [SQLValue] = [.text(F.appId), .null, .null, .null, .integer(50)]
            let older: [SQLValue] = [.text(F.appId), .null, .null, .integer(1_000), .integer(50)]
            let renewals = try await store.read { reader in
                try reader.sql(
                    "SELECT id FROM notifications WHERE app_id = $1 AND notification_type = 'DID_RENEW' ORDER BY id DESC",
                    .text(F.appId)
                ).map { row throws(StoreError) in try row.integer(0) }
            }
            let (first, deeper, ids) = try await store.read { reader in
                (
                    try reader.queryPlan(SQLStoreTransaction.recentNotificationsPage, newest),
                    try reader.queryPlan(SQLStoreTransaction.recentNotificationsPage, older),
                    try reader.sql("SELECT id FROM notifications WHERE app_id = $1 ORDER BY id DESC", .text(F.appId))
                        .map { row throws(StoreError) in try row.integer(0) }
                )
            }
            Self.expectOrderedWalk(first, index: "notifications_app", backend: backend)
            Self.expectOrderedWalk(deeper, index: "notifications_app", backend: backend)

            // The newest page, then the one before an id, then the renewals of that page.
            let before = ids[49]
            let pages = try await store.read { reader in
                (
                    try reader.recentNotifications(appId: F.appId, NotificationFilter(limit: 50)).map(\.id),
                    try reader.recentNotifications(appId: F.appId, NotificationFilter(before: before, limit: 50))
                        .map(\.id),
                    try reader.recentNotifications(
                        appId: F.appId, NotificationFilter(type: "DID_RENEW", before: before, limit: 50)
                    ).map(\.id)
                )
            }
            #expect(pages.0 == Array(ids[0..<50]))
            #expect(pages.1 == Array(ids[50..<100]))
            #expect(pages.2 == Array(renewals.filter { $0 < before }.prefix(50)))
        }
    }
}
