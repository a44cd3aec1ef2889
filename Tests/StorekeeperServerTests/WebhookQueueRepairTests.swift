import AppStoreModels
import Foundation
import StorekeeperServer
import StorekeeperTesting
import Testing

@testable import Storage

/// A worker mends the queues before its first round: a delivery an earlier version left in a
/// drained queue (migration 0037) is sent, not stranded until the customer's next event.
@Suite struct WebhookQueueRepairTests {
    @Test func aWorkerReopensAStrandedQueueWhenItStarts() async throws {
        let database = try await OwnDatabase.make(.sqlite)
        let store = try await database.open()
        defer {
            Task {
                await store.close()
                database.drop()
            }
        }
        try await store.write { transaction in
            try transaction.saveApp(
                AppRecord(id: "app-stranded", bundleId: "com.example", environments: [.sandbox]), at: .now)
            try transaction.saveWebhookEndpoint(
                WebhookEndpoint(id: "hook", appId: "app-stranded", url: "http://198.51.100.8/hook", secret: "s"),
                at: .now)
        }
        try await WebhookEvents.commit("stranded/0", appUserId: "sam", appId: "app-stranded", into: store, at: .now)
        // As an earlier version's enqueue left it: the delivery pending, its queue drained.
        try await store.write { transaction in
            _ = try (transaction as! SQLStoreTransaction).connection.query(
                "UPDATE webhook_queues SET next_attempt_at = NULL", [])
        }
        let transport = ScriptedTransport()
        let deliverer = WebhookDeliverer(
            store: store, transport: transport, clock: .system, metrics: ServerMetrics(),
            settings: DeliveryInstances.settings(timeout: .seconds(2), leaseMilliseconds: 9_000, batchSize: 16))
        // A round alone does not see it.
        #expect(await deliverer.deliverDue() == 0)
        let worker = Task { await deliverer.run() }
        #expect(await DeliveryInstances.until(10) { transport.eventIds.count == 1 })
        worker.cancel()
        await worker.value
        #expect(transport.eventIds == ["stranded/0"])
        let backlog = try await store.read { try $0.outboxBacklog() }
        #expect(backlog.pending == 0)
    }
}
