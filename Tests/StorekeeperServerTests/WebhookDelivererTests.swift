import AppStoreClient
import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Synchronization
import Testing

/// A webhook transport whose answers the test scripts.
final class ScriptedTransport: HTTPTransport {
    let statuses = Mutex<[Int]>([])
    let sent = Mutex<[HTTPTransportRequest]>([])

    func send(_ request: HTTPTransportRequest, maximumResponseBytes: Int) async throws(HTTPTransportFailure)
        -> HTTPTransportResponse
    {
        sent.withLock { $0.append(request) }
        let status = statuses.withLock { $0.isEmpty ? 200 : $0.removeFirst() }
        return HTTPTransportResponse(status: status)
    }

    var eventIds: [String] { sent.withLock { $0.compactMap { $0.header("Storekeeper-Event-Id") } } }
}

/// Retries with backoff, order per customer, dead-lettering after the maximum age, and the
/// admin listing of failed deliveries.
@Suite(.serialized) struct WebhookDelivererTests {
    @Test func retriesKeepOrderAndDeadLetter() async throws {
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"])
        defer { Task { await harness.stop() } }
        let app = try await harness.createApp()
        _ = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks", key: app.secretKey, json: ["url": "http://127.0.0.1:9/hooks"])
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let id = uniqueDigits()
        harness.clock.set(t0.plus(days: 31))
        let renewal = uniqueDigits()
        // Two events for one customer: INITIAL_PURCHASE then RENEWAL.
        _ = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/hank/transactions", key: app.publicKey,
            json: [
                "signedTransaction": try signer.transaction(
                    id: id, originalId: id, purchase: t0, expires: t0.plus(days: 30), signed: t0)
            ])
        _ = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/hank/transactions", key: app.publicKey,
            json: [
                "signedTransaction": try signer.transaction(
                    id: renewal, originalId: id, purchase: t0.plus(days: 30), expires: t0.plus(days: 60),
                    signed: t0.plus(days: 30), reason: .renewal)
            ])

        let transport = ScriptedTransport()
        let clock = ServerClock(now: harness.clock.function)
        let deliverer = WebhookDeliverer(
            store: harness.store, transport: transport, clock: clock, metrics: ServerMetrics(),
            settings: WebhookDeliverer.Settings(random: { 0.5 }),
            destinations: .standard(allowList: try WebhookDestinationAllowList(["127.0.0.1"])), secrets: harness.secrets
        )
        let listed = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/hank/events", key: app.secretKey)
        let expected = (listed.json["events"] as? [[String: Any]] ?? []).compactMap {
            ($0["event"] as? [String: Any])?["id"] as? String
        }
        #expect(expected.count >= 2)
        // The first (oldest) delivery fails: every later one of the customer must wait.
        transport.statuses.withLock { $0 = [500] }
        #expect(await deliverer.deliverDue() == expected.count)
        #expect(transport.eventIds == [expected[0]])
        // Nothing is due until the backoff (10 s, no jitter at random 0.5) has passed.
        #expect(await deliverer.deliverDue() == 0)
        harness.clock.advance(milliseconds: 10_002)
        #expect(await deliverer.deliverDue() == expected.count)
        #expect(transport.eventIds == [expected[0]] + expected)
        #expect(await deliverer.deliverDue() == 0)

        // A delivery failing past three days is dead-lettered and listed.
        let late = uniqueDigits()
        _ = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/customers/ivy/transactions", key: app.publicKey,
            json: [
                "signedTransaction": try signer.transaction(
                    id: late, originalId: late, purchase: t0.plus(days: 31), expires: t0.plus(days: 61),
                    signed: t0.plus(days: 31))
            ])
        transport.statuses.withLock { $0 = Array(repeating: 503, count: 100) }
        var rounds = 0
        while rounds < 40 {
            rounds += 1
            _ = await deliverer.deliverDue()
            harness.clock.advance(milliseconds: 6 * 3_600_000)
        }
        let failed = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/webhooks/deliveries/failed", key: app.secretKey)
        #expect(failed.status == 200)
        let deliveries = failed.json["deliveries"] as? [[String: Any]] ?? []
        #expect(deliveries.count == 1)
        #expect(deliveries.first?["lastError"] as? String == "http_status_503")
        #expect(deliveries.first?["deadLetteredAt"] != nil)
        let attempts = deliveries.first?["attempts"] as? Int ?? 0
        #expect(attempts > 5 && attempts < 40)

        // Replay puts it back in the queue; once the endpoint answers it is delivered and no
        // longer listed. Another app's key cannot replay it; an unknown id is 404.
        let deliveryId = try #require(deliveries.first?["deliveryId"] as? Int)
        let other = try await harness.createApp()
        let foreign = try await harness.request(
            "POST", "/v1/apps/\(other.appId)/webhooks/deliveries/\(deliveryId)/replay", key: other.secretKey)
        #expect(foreign.status == 404)
        let unknown = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks/deliveries/999999999/replay", key: app.secretKey)
        #expect(unknown.status == 404)
        let replay = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks/deliveries/\(deliveryId)/replay", key: app.secretKey)
        #expect(replay.status == 202)
        // The backlog gauge reads the outbox: exactly the replayed delivery waits.
        let metrics = try await harness.request("GET", "/metrics")
        #expect(metrics.text.contains("storekeeper_outbox_backlog 1\n"))
        #expect(replay.json["deliveryId"] as? Int == deliveryId)
        transport.statuses.withLock { $0 = [200] }
        let deliveredBefore = transport.eventIds.count
        #expect(await deliverer.deliverDue() == 1)
        #expect(transport.eventIds.count == deliveredBefore + 1)
        let after = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/webhooks/deliveries/failed", key: app.secretKey)
        #expect((after.json["deliveries"] as? [[String: Any]] ?? []).isEmpty)
        let again = try await harness.request(
            "POST", "/v1/apps/\(app.appId)/webhooks/deliveries/\(deliveryId)/replay", key: app.secretKey)
        #expect(again.status == 404)
    }

    @Test func backoffGrowsAndIsCapped() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let sent = ScriptedTransport()
        let deliverer = WebhookDeliverer(
            store: harness.store, transport: sent, clock: ServerClock(now: harness.clock.function),
            metrics: ServerMetrics(), settings: WebhookDeliverer.Settings(random: { 1 }))
        _ = deliverer
        let low = WebhookDeliverer.Settings(random: { 0 })
        #expect(low.initialBackoffMilliseconds == 10_000)
        #expect(WebhookSignature.header(body: Data("{}".utf8), secret: "s", unixSeconds: 10).hasPrefix("t=10,v1="))
        let header = WebhookSignature.header(body: Data("{}".utf8), secret: "secret-value-123", unixSeconds: 1000)
        #expect(
            WebhookSignature.isValid(
                header: header, body: Data("{}".utf8), secret: "secret-value-123", nowUnixSeconds: 1100))
        #expect(
            !WebhookSignature.isValid(
                header: header, body: Data("{}".utf8), secret: "secret-value-123", nowUnixSeconds: 2000))
        #expect(
            !WebhookSignature.isValid(
                header: header, body: Data("{ }".utf8), secret: "secret-value-123", nowUnixSeconds: 1000))
    }
}
