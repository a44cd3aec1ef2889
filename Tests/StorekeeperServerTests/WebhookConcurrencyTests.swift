import AppStoreClient
import AppStoreModels
import Foundation
import Storage
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// Endpoints are independent: a hanging one holds only its own slots, bounded per endpoint,
/// while each customer's events still reach an endpoint one at a time, in order.
@Suite(.serialized) struct WebhookConcurrencyTests {
    /// Waits (up to 10 s) until `condition` holds; whether it did.
    static func eventually(_ condition: () -> Bool) async -> Bool {
        for _ in 0..<1000 {
            if condition() { return true }
            try? await Task.sleep(for: .milliseconds(10))
        }
        return condition()
    }

    /// The case: endpoints that never answer (more of them than this machine has cores:
    /// blocked transfers on Dispatch's pool once delayed every other one by about a second); the
    /// healthy one still receives each event within a second of its commit (it used to wait a
    /// whole request timeout per round).
    @Test func hangingEndpointDoesNotDelayAHealthyOne() async throws {
        let harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.1"])
        let receiver = try WebhookReceiver()
        let hanging = try HangingListener()
        let app = try await harness.createApp()
        for index in 0..<(ProcessInfo.processInfo.activeProcessorCount + 2) {
            _ = try await harness.addEndpoint(app, url: hanging.url + "?endpoint=\(index)")
        }
        _ = try await harness.addEndpoint(app, url: receiver.url)
        let deliverer = WebhookDeliverer(
            store: harness.store, transport: PinnedHTTPTransport(), clock: ServerClock(now: harness.clock.function),
            metrics: ServerMetrics(),
            settings: WebhookDeliverer.Settings(
                pollInterval: .milliseconds(50), requestTimeout: .seconds(20), random: { 0.5 }),
            destinations: .standard(allowList: try WebhookDestinationAllowList(["127.0.0.1"])), secrets: harness.secrets
        )
        let worker = Task { await deliverer.run() }

        var failure: (any Error)?
        do {
            var latencies: [Duration] = []
            for index in 0..<3 {
                let customer = "healthy-\(index)"
                try await harness.purchase(app, appUserId: customer)
                let committed = ContinuousClock.now
                let received = await Self.eventually {
                    receiver.deliveries.contains { delivery in
                        (delivery.json["customer"] as? [String: Any])?["appUserId"] as? String == customer
                    }
                }
                latencies.append(ContinuousClock.now - committed)
                #expect(received, "\(customer) never reached the healthy endpoint")
            }
            #expect(latencies.allSatisfy { $0 < .seconds(1) }, "latencies after commit: \(latencies)")
        } catch {
            failure = error
        }
        worker.cancel()
        await worker.value
        hanging.close()
        await receiver.stop()
        await harness.stop()
        if let failure { throw failure }
    }

    /// At most `maxInFlightPerEndpoint` requests wait on a slow endpoint while a fast one gets
    /// everything; a customer's second event goes only after its first was answered; no event
    /// is ever in flight twice to the same endpoint.
    @Test func inFlightIsBoundedPerEndpointAndCustomerOrderHolds() async throws {
        let harness = try await ServerHarness()
        let app = try await harness.createApp()
        _ = try await harness.addEndpoint(app, url: "http://198.51.100.1/slow")
        _ = try await harness.addEndpoint(app, url: "http://198.51.100.2/fast")
        for index in 0..<4 { try await harness.purchase(app, appUserId: "bounded-\(index)") }
        // One customer with two events: a purchase, then its renewal.
        let signer = AppStoreSigner(ca: harness.ca)
        let t0 = TestSigning.signedDate
        let first = uniqueDigits()
        for (id, purchase, reason) in [
            (first, t0, TransactionReason.purchase), (uniqueDigits(), t0.plus(days: 30), .renewal),
        ] {
            let posted = try await harness.request(
                "POST", "/v1/apps/\(app.appId)/customers/ordered/transactions", key: app.publicKey,
                json: [
                    "signedTransaction": try signer.transaction(
                        id: id, originalId: first, purchase: purchase, expires: purchase.plus(days: 30),
                        signed: purchase, reason: reason)
                ])
            #expect(posted.status == 200)
        }
        let listed = try await harness.request(
            "GET", "/v1/apps/\(app.appId)/customers/ordered/events", key: app.secretKey)
        let ordered = (listed.json["events"] as? [[String: Any]] ?? []).compactMap {
            ($0["event"] as? [String: Any])?["id"] as? String
        }
        try #require(ordered.count >= 2)
        let backlog = try await harness.store.read { try $0.outboxBacklog() }.pending
        let perEndpoint = backlog / 2

        let transport = GatedTransport(gatedHost: "198.51.100.1")
        let deliverer = WebhookDeliverer(
            store: harness.store, transport: transport, clock: ServerClock(now: harness.clock.function),
            metrics: ServerMetrics(),
            settings: WebhookDeliverer.Settings(
                maxInFlightPerEndpoint: 2, pollInterval: .milliseconds(20), random: { 0.5 }), secrets: harness.secrets)
        let worker = Task { await deliverer.run() }

        var failure: (any Error)?
        do {
            #expect(await Self.eventually { transport.started(host: "198.51.100.2").count == perEndpoint })
            #expect(await Self.eventually { transport.started(host: "198.51.100.1").count == 2 })
            // Give the worker time to (wrongly) start more on the slow endpoint.
            try await Task.sleep(for: .milliseconds(300))
            #expect(transport.started(host: "198.51.100.1").count == 2)
            transport.open()
            #expect(await Self.eventually { transport.started(host: "198.51.100.1").count == perEndpoint })
            var drained = false
            for _ in 0..<1000 where !drained {
                drained = try await harness.store.read { try $0.outboxBacklog() }.pending == 0
                if !drained { try await Task.sleep(for: .milliseconds(10)) }
            }
            #expect(drained)
        } catch {
            failure = error
        }
        worker.cancel()
        await worker.value
        if let failure {
            await harness.stop()
            throw failure
        }

        let state = transport.state.withLock { $0 }
        #expect(state.maximumInFlight["198.51.100.1"] == 2)
        #expect(state.duplicates == 0)
        #expect(transport.started(host: "198.51.100.2").count == perEndpoint)
        for host in ["198.51.100.1", "198.51.100.2"] {
            let firstEnded = try #require(state.log.firstIndex(of: "end \(host) \(ordered[0])"))
            let secondStarted = try #require(state.log.firstIndex(of: "start \(host) \(ordered[1])"))
            #expect(firstEnded < secondStarted, "\(host): the renewal went before the purchase was answered")
        }
        await harness.stop()
    }
}
