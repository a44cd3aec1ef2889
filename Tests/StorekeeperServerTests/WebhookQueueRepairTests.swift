import AppStoreModels
import Foundation
import StorekeeperServer
import StorekeeperTesting
import Testing

@testable import Storage

/// A worker mends the queues before its first round: a delivery an earlier version left in a
/// drained queue (migration 0037) is sent, not stranded until the customer's next event.
@Suite struct WebhookQueueRepairTests {
    @Test(arguments: DeliveryInstances.engines)
    func aWorkerReopensAStrandedQueueWhenItStarts(_ engine: StoreEngine) async throws {
        let settings = DeliveryInstances.settings(timeout: .seconds(2), leaseMilliseconds: 9_000, batchSize: 16)
        let instances = try await DeliveryInstances.start(
            engine, count: 1, endpointURL: "http://198.51.100.8/hook", settings: settings)
        defer { Task { await instances.close() } }
        let store = instances.store(0)
        try await instances.commit("stranded/0", through: 0)
        // As an earlier version's enqueue left it: the delivery pending, its queue drained.
        try await store.write { transaction in
            _ = try (transaction as! SQLStoreTransaction).connection.query(
                "UPDATE webhook_queues SET next_attempt_at = NULL", [])
        }
        let transport = ScriptedTransport()
        let deliverer = WebhookDeliverer(
            store: store, transport: transport, clock: .system, metrics: ServerMetrics(), settings: settings)
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
