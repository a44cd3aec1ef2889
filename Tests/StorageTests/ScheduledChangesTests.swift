import AppStoreModels
import Entitlements
import Foundation
import StorekeeperIngestion
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// The access scheduler's claim: several instances (separate `Store`s) and several tasks each
/// run scheduler passes over the same due states at once. Every due state is re-evaluated
/// exactly once, every change gives one event and one outbox row, and the final states are the
/// engine's at that instant.
@Suite("Scheduled changes")
struct ScheduledChangesTests {
    @Test("two instances re-evaluate each due state once and never emit a change twice", arguments: Backend.enabled)
    func twoInstancesShareTheDueStates(backend: Backend) async throws {
        let customers = 40
        let notifications = F.notifications(customers: customers, perCustomer: 2, prefix: "s")
        let ingestedAt = F.at(1)
        let dueAt = F.at(100)
        try await withStore(backend, options: "pool_size=4") { first, database in
            try await F.setUp(
                first, endpoints: [WebhookEndpoint(id: "e1", appId: F.appId, url: "https://x", secret: "s")])
            for notification in notifications { try await F.ingest(notification, into: first, now: ingestedAt) }
            let before = try await F.snapshot(first)
            let due = try await first.read {
                try $0.sql(
                    "SELECT COUNT(*) FROM customer_states WHERE valid_until <= $1",
                    .integer(dueAt.millisecondsSince1970))[0].integer(0)
            }
            #expect(due == Int64(customers))

            let second = try await database.open()
            let instances: [any Store] = [first, second]
            let reevaluated = try await withThrowingTaskGroup(of: Int.self) { group in
                for worker in 0..<8 {
                    let store = instances[worker % instances.count]
                    group.addTask {
                        var total = 0
                        for _ in 0..<200 {
                            let pass = try await ScheduledChanges.commitDue(in: store, now: dueAt, limit: 3)
                            #expect(pass.failed == 0)
                            total += pass.reevaluated
                            if pass.reevaluated == 0 { break }
                        }
                        return total
                    }
                }
                return try await group.reduce(0, +)
            }
            // A pass that found nothing left while others still held locks: one more, alone.
            let last = try await ScheduledChanges.commitDue(in: second, now: dueAt, limit: 100)
            await second.close()
            #expect(reevaluated + last.reevaluated == customers)

            let after = try await F.snapshot(first)
            #expect(after["state_versions"]! - before["state_versions"]! == Int64(customers))
            #expect(after["lifecycle_events"] == after["webhook_outbox"])
            #expect(after["lifecycle_events"]! - before["lifecycle_events"]! == Int64(customers))
            let byUser = Dictionary(grouping: notifications, by: \.appUserId)
            for (appUserId, own) in byUser {
                let expected = EntitlementEngine.evaluate(
                    customerId: appUserId, environment: .production, facts: own.flatMap(\.facts), catalog: F.catalog,
                    now: dueAt)
                let (stored, events) = try await first.read { reader in
                    let customer = try #require(try reader.customer(appId: F.appId, .appUserId(appUserId)))
                    return (
                        try reader.customerInfo(customerId: customer.id, environment: .production),
                        try reader.events(customerId: customer.id, after: nil, limit: 1_000)
                    )
                }
                #expect(stored?.info == expected.customerInfo, "customer \(appUserId)")
                #expect(events.count == expected.allEvents.count, "customer \(appUserId)")
                #expect(Set(events.map(\.event.id)) == Set(expected.allEvents.map(\.id)), "customer \(appUserId)")
                #expect(events.filter { $0.event.type == .expiration }.count == 1, "customer \(appUserId)")
            }
        }
    }
}
