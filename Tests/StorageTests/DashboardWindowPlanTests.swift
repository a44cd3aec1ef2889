import AppStoreModels
import StorekeeperTesting
import Testing

@testable import Storage

/// The dashboard's windowed counts read their window through an index (migration 0040), not
/// every notification of the app or the whole audit log: with two years of a busy app that was
/// 1.5 s for the operations page's intake, 1.65 s for the overview's notifications per day and
/// 20 ms for the rejected notifications, each growing with the history. SQLite must name the
/// index; PostgreSQL, given statistics, must read neither table whole.
@Suite struct DashboardWindowPlanTests {
    typealias F = IngestionFixture
    static let rows = 3_000
    /// The windows: the last 10 of 300 days.
    static let since = F.at(290)
    static let until = F.at(300)

    /// `rows` notifications and audit entries in each of two apps, one every tenth of a day over
    /// 300 days: types, outcomes and environments alternate; every third audit entry is a
    /// rejected notification, with its rule (or none), the others admin actions.
    static func seed(_ store: any Store) async throws {
        try await F.setUp(store)
        try await store.write { tx in
            try tx.saveApp(OrderedWalkPlanTests.other, at: F.at(0))
            for appId in [F.appId, OrderedWalkPlanTests.other.id] {
                for n in 0..<Self.rows {
                    let at = SQLValue(Self.instant(n))
                    _ = try tx.sql(
                        """
                        INSERT INTO notifications (app_id, notification_uuid, notification_type, subtype, environment,
                                                   signed_date, received_at, outcome, signed_payload)
                        VALUES ($1, $2, $3, $4, $5, $6, $6, $7, 'payload')
                        """, .text(appId), .text("uuid-\(appId)-\(n)"), .text(n % 2 == 0 ? "DID_RENEW" : "EXPIRED"),
                        n % 4 == 1 ? .text("VOLUNTARY") : .null, .text(n % 5 == 0 ? "Sandbox" : "Production"), at,
                        .text(n % 7 == 0 ? "unclaimed" : "applied"))
                    _ = try tx.appendAudit(
                        NewAuditEntry(
                            at: Self.instant(n), actor: "test",
                            action: n % 3 == 0 ? "notification.rejected" : "app.updated",
                            appId: appId,
                            detail: n % 6 == 0 ? .object(["rule": .string("rule-\(n % 4)")]) : .object([:])))
                }
            }
            try tx.refreshPlannerStatistics()
        }
    }

    static func instant(_ n: Int) -> Timestamp { F.at(0).adding(milliseconds: Int64(n) * 8_640_000) }

    /// The seed's entries of the app in [`since`, `until`).
    static var window: [Int] { (0..<rows).filter { instant($0) >= since && instant($0) < until } }

    static func expectWindowRead(_ plan: String, index: String, table: String, backend: Backend) {
        if backend == .sqlite {
            #expect(plan.contains("USING INDEX \(index)") || plan.contains("USING COVERING INDEX \(index)"), "\(plan)")
        } else {
            OrderedWalkPlanTests.expectIndexRead(plan, index: index, tables: [table])
        }
    }

    @Test(arguments: Backend.enabled)
    func notificationWindowsReadTheirWindow(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.seed(store)
            let (intakePlan, dailyPlan) = try await store.read { reader in
                (
                    try reader.queryPlan(
                        SQLStoreTransaction.notificationIntakeSince, [.text(F.appId), SQLValue(Self.since)]),
                    try reader.queryPlan(
                        SQLStoreTransaction.notificationsByDayBetween,
                        [.text(F.appId), SQLValue(Self.since), SQLValue(Self.until), .text("Production")])
                )
            }
            Self.expectWindowRead(intakePlan, index: "notifications_received", table: "notifications", backend: backend)
            Self.expectWindowRead(dailyPlan, index: "notifications_received", table: "notifications", backend: backend)

            #expect(Self.window.count == 100)
            let intake = try await store.read { try $0.notificationIntake(appId: F.appId, since: Self.since) }
            let found = intake.map {
                [
                    $0.notificationType, $0.subtype ?? "-", $0.outcome ?? "-", String($0.count),
                    String($0.lastReceivedAt.millisecondsSince1970),
                ].joined(separator: "|")
            }
            // Compared as sets: the engines order a NULL subtype differently.
            #expect(found.count == Self.expectedIntake.count)
            #expect(Set(found) == Self.expectedIntake)

            let daily = try await store.read {
                try $0.notificationsByDay(appId: F.appId, environment: .production, from: Self.since, to: Self.until)
            }
            #expect(daily.map { "\($0.day):\($0.count)" } == Self.expectedDaily)
            let all = try await store.read {
                try $0.notificationsByDay(appId: F.appId, environment: nil, from: Self.since, to: Self.until)
            }
            #expect(all.map(\.count).reduce(0, +) == Self.window.count)
        }
    }

    /// The window's notifications by type, subtype and outcome: `type|subtype|outcome|count|last`.
    static var expectedIntake: Set<String> {
        var groups: [String: [Int]] = [:]
        for n in window {
            let key = [
                n % 2 == 0 ? "DID_RENEW" : "EXPIRED", n % 4 == 1 ? "VOLUNTARY" : "-",
                n % 7 == 0 ? "unclaimed" : "applied",
            ].joined(separator: "|")
            groups[key, default: []].append(n)
        }
        return Set(
            groups.map { key, ns in "\(key)|\(ns.count)|\(instant(ns.max() ?? 0).millisecondsSince1970)" })
    }

    /// The window's production notifications per day, `day:count` in day order.
    static var expectedDaily: [String] {
        var perDay: [Int64: Int] = [:]
        for n in window where n % 5 != 0 { perDay[instant(n).millisecondsSince1970 / 86_400_000, default: 0] += 1 }
        return perDay.keys.sorted().map { "\($0):\(perDay[$0] ?? 0)" }
    }

    /// The window's rejected notifications by rule, `rule:count:last` in rule order.
    static var expectedFailures: [String] {
        var rules: [String: [Int]] = [:]
        for n in window where n % 3 == 0 { rules[n % 6 == 0 ? "rule-\(n % 4)" : "unknown", default: []].append(n) }
        return rules.keys.sorted().map { rule in
            let ns = rules[rule] ?? []
            return "\(rule):\(ns.count):\(instant(ns.max() ?? 0).millisecondsSince1970)"
        }
    }

    @Test(arguments: Backend.enabled)
    func rejectedNotificationsReadTheirWindow(_ backend: Backend) async throws {
        try await withStore(backend) { store, _ in
            try await Self.seed(store)
            let plan = try await store.read { reader in
                try reader.queryPlan(
                    backend == .postgres
                        ? SQLStoreTransaction.verificationFailuresPostgres
                        : SQLStoreTransaction.verificationFailuresSQLite, [.text(F.appId), SQLValue(Self.since)])
            }
            Self.expectWindowRead(plan, index: "audit_log_app_action", table: "audit_log", backend: backend)
            let failures = try await store.read { try $0.verificationFailures(appId: F.appId, since: Self.since) }
            #expect(
                failures.map { "\($0.rule):\($0.count):\($0.lastAt.millisecondsSince1970)" } == Self.expectedFailures)
        }
    }
}
