import AppStoreModels
import Entitlements
import Foundation
import StorekeeperTesting
import Testing

@testable import Storage

private typealias F = IngestionFixture

/// `reviseEvents`: standing events whose content a later fact changed are rewritten in place;
/// nothing else is touched.
extension StoreConformanceTests {
    @Test(
        "revising events rewrites only standing ones whose stored text differs, none that is retracted or absent",
        arguments: Backend.enabled)
    func reviseEventsRewritesOnlyChangedStandingEvents(backend: Backend) async throws {
        @Sendable func event(_ id: String, day: Int64, summary: String = "as first derived") -> LifecycleEvent {
            LifecycleEvent(
                id: id, type: .renewal, customerId: "reviser", environment: .sandbox, occurredAt: F.at(day),
                productId: "monthly", entitlementIds: ["pro"], summary: summary)
        }
        try await withStore(backend) { store, _ in
            try await F.setUp(store)
            let outcome = try await store.write { tx -> (revised: Int, again: Int, stored: [StoredEvent]) in
                let customer = try tx.ensureCustomer(appId: F.appId, appUserId: "reviser", at: F.at(0))
                let standing = [event("a", day: 1), event("b", day: 2), event("c", day: 3)]
                _ = try tx.appendEvents(standing, customerId: customer.id, at: F.at(3))
                _ = try tx.retractEvents(ids: ["c"], customerId: customer.id, at: F.at(4))
                // "a" moved to another instant, "b" unchanged, "c" retracted (left as it was
                // retracted), "d" never stored (not inserted by a revision).
                let revised = try tx.reviseEvents(
                    [
                        event("a", day: 5, summary: "moved"), event("b", day: 2), event("c", day: 6, summary: "late"),
                        event("d", day: 7),
                    ],
                    customerId: customer.id)
                // The same list again finds nothing left to change.
                let again = try tx.reviseEvents(
                    [event("a", day: 5, summary: "moved"), event("b", day: 2)], customerId: customer.id)
                return (revised, again, try tx.events(customerId: customer.id, after: nil, limit: 10))
            }
            #expect(outcome.revised == 1)
            #expect(outcome.again == 0)
            #expect(outcome.stored.map(\.event.id) == ["a", "b", "c"])
            #expect(
                outcome.stored.map(\.event) == [
                    event("a", day: 5, summary: "moved"), event("b", day: 2), event("c", day: 3),
                ])
            #expect(outcome.stored.map { $0.retractedAt != nil } == [false, false, true])
        }
    }
}
