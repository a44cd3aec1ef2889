import AppStoreModels
import Entitlements
import Storage

/// Lifecycle events committed straight to a store with their outbox rows, as an ingestion
/// commits them (the customer locked first, one transaction) but without facts: the webhook
/// tests' way to put exactly the events they name in the queue, through any instance's store.
public enum WebhookEvents {
    /// An event for `appUserId` whose id is `id`.
    public static func event(id: String, appUserId: String, at: Timestamp) -> LifecycleEvent {
        LifecycleEvent(
            id: id, type: .renewal, customerId: appUserId, environment: .sandbox, occurredAt: at,
            productId: "com.example.monthly", entitlementIds: ["pro"], summary: "test event \(id)")
    }

    /// Commits the event `id` for `appUserId` of `appId` (the customer is created if new) with
    /// one outbox row per enabled endpoint of the app; the stored event.
    @discardableResult
    public static func commit(_ id: String, appUserId: String, appId: String, into store: any Store, at: Timestamp)
        async throws -> StoredEvent
    {
        try await store.write(retries: 20) { transaction in
            let customer = try transaction.ensureCustomer(appId: appId, appUserId: appUserId, at: at)
            let stored = try transaction.appendEvents(
                [event(id: id, appUserId: appUserId, at: at)], customerId: customer.id, at: at)
            try transaction.enqueueDeliveries(of: stored, appId: appId, at: at)
            guard let event = stored.first else { throw StoreError(.duplicate, "event \(id) exists") }
            return event
        }
    }
}
