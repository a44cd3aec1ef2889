import AppStoreClient
import Foundation
import StorekeeperIngestion
import StorekeeperServer
import StorekeeperTesting
import Testing

/// https webhooks connect to the address the destination check approved (issue 11, defect 6):
/// `PinnedHTTPTransport` never resolves the endpoint's name itself, while TLS still verifies
/// the certificate against that name. `webhook.test` exists only in the test's resolver
/// (`.test` is reserved, RFC 6761), so a delivery that resolved the name again would fail.
@Suite(.serialized) struct PinnedWebhookDeliveryTests {
    /// A server whose webhooks may reach 127.0.0.2 only, a resolver the test answers, an
    /// endpoint registered for `url`, a purchase queued for it, and a deliverer trusting the
    /// test CA.
    struct Setup {
        let harness: ServerHarness
        let resolver: FixedResolver
        let transport: RecordingTransport
        let deliverer: WebhookDeliverer
        let app: ServerHarness.AppKeys

        init(certificates: TestTLSCertificates, resolver: FixedResolver = FixedResolver()) async throws {
            self.resolver = resolver
            harness = try await ServerHarness(webhookAllowedDestinations: ["127.0.0.2"], webhookResolver: resolver)
            app = try await harness.createApp()
            transport = RecordingTransport(
                PinnedHTTPTransport(settings: PinnedHTTPTransport.Settings(caBundlePath: certificates.caBundlePath)))
            deliverer = WebhookDeliverer(
                store: harness.store, transport: transport, clock: ServerClock(now: harness.clock.function),
                metrics: ServerMetrics(),
                settings: WebhookDeliverer.Settings(requestTimeout: .seconds(5), random: { 0.5 }),
                destinations: WebhookDestinationGuard(
                    policy: WebhookDestinationPolicy(allowList: try WebhookDestinationAllowList(["127.0.0.2"])),
                    resolver: resolver), secrets: harness.secrets)
        }
    }

    @Test func httpsDeliveryConnectsToTheCheckedAddressAndVerifiesTheName() async throws {
        let certificates = try TestTLSCertificates.make(names: ["webhook.test"])
        let receiver = try TLSWebhookReceiver(address: "127.0.0.2", certificates: certificates, name: "webhook.test")
        let setup = try await Setup(certificates: certificates)
        defer {
            receiver.stop()
            certificates.remove()
            Task { await setup.harness.stop() }
        }
        setup.resolver.set("webhook.test", ["127.0.0.2"])
        let url = "https://webhook.test:\(receiver.port)/hooks?source=storekeeper"
        _ = try await setup.harness.addEndpoint(setup.app, url: url)
        try await setup.harness.purchase(setup.app, appUserId: "pinned-tls")

        #expect(await setup.deliverer.deliverDue() == 1)
        #expect(try await setup.harness.failedErrors(setup.app) == [:])
        #expect(setup.transport.urls == [url])
        #expect(setup.transport.connectAddresses == ["127.0.0.2"])
        let delivery = try #require(receiver.deliveries.first)
        #expect(receiver.deliveries.count == 1)
        #expect(receiver.connections == 1)
        #expect(delivery.requestLine == "POST /hooks?source=storekeeper HTTP/1.1")
        #expect(delivery.headers["Host"] == "webhook.test:\(receiver.port)")
        #expect(delivery.headers["Content-Type"] == "application/json")
        #expect(delivery.headers["Expect"] == nil)
        let eventId = try #require(delivery.headers["Storekeeper-Event-Id"])
        let payload = try #require(try JSONSerialization.jsonObject(with: delivery.body) as? [String: Any])
        #expect((payload["event"] as? [String: Any])?["id"] as? String == eventId)
        #expect(delivery.headers[WebhookSignature.headerName]?.isEmpty == false)
    }

    /// The connection goes to the checked address, and the peer there must still prove the
    /// endpoint's name: a certificate for another name fails the handshake, nothing is sent.
    @Test func aCertificateForAnotherNameIsTLSFailed() async throws {
        let certificates = try TestTLSCertificates.make(names: ["other.test"])
        let receiver = try TLSWebhookReceiver(address: "127.0.0.2", certificates: certificates, name: "other.test")
        let setup = try await Setup(certificates: certificates)
        defer {
            receiver.stop()
            certificates.remove()
            Task { await setup.harness.stop() }
        }
        setup.resolver.set("webhook.test", ["127.0.0.2"])
        let endpoint = try await setup.harness.addEndpoint(
            setup.app, url: "https://webhook.test:\(receiver.port)/hooks")
        try await setup.harness.purchase(setup.app, appUserId: "wrong-name")

        #expect(await setup.deliverer.deliverDue() == 1)
        #expect(try await setup.harness.failedErrors(setup.app) == [endpoint: "tls_failed"])
        #expect(receiver.connections == 1)
        #expect(receiver.deliveries.isEmpty)
    }

    /// A name registered while it pointed at a public address and resolving to a refused one at
    /// delivery (DNS rebinding): the https endpoint is not contacted at all.
    @Test func anHTTPSNameRebindingToARefusedAddressIsNotContacted() async throws {
        let certificates = try TestTLSCertificates.make(names: ["webhook.test"])
        let receiver = try TLSWebhookReceiver(address: "127.0.0.1", certificates: certificates, name: "webhook.test")
        let setup = try await Setup(certificates: certificates)
        defer {
            receiver.stop()
            certificates.remove()
            Task { await setup.harness.stop() }
        }
        setup.resolver.set("webhook.test", ["93.184.216.34"])
        let endpoint = try await setup.harness.addEndpoint(
            setup.app, url: "https://webhook.test:\(receiver.port)/hooks")
        setup.resolver.set("webhook.test", ["127.0.0.1"])
        try await setup.harness.purchase(setup.app, appUserId: "rebound")

        #expect(await setup.deliverer.deliverDue() == 1)
        #expect(try await setup.harness.failedErrors(setup.app) == [endpoint: "destination_refused"])
        #expect(setup.transport.urls == [])
        #expect(receiver.connections == 0)
    }

    /// What the transport refuses before any connection: no checked address, a header that
    /// would split the request, a scheme other than http(s).
    @Test func theTransportRefusesUncheckedOrMalformedRequests() async throws {
        let transport = PinnedHTTPTransport()
        let url = try #require(URL(string: "https://webhook.test/hooks"))
        let cases: [(HTTPTransportRequest, String)] = [
            (HTTPTransportRequest(method: "POST", url: url), "a checked address to connect to is required"),
            (
                HTTPTransportRequest(method: "POST", url: url, connectAddress: "webhook.test"),
                "a checked address to connect to is required"
            ),
            (
                HTTPTransportRequest(
                    method: "POST", url: url, headers: [("X-Test", "a\r\nInjected: yes")], connectAddress: "127.0.0.2"),
                "a request header field is malformed"
            ),
            (
                HTTPTransportRequest(
                    method: "POST", url: try #require(URL(string: "ftp://webhook.test/")), connectAddress: "127.0.0.2"),
                "the URL must be an absolute http or https URL"
            ),
            (
                HTTPTransportRequest(method: "post", url: url, connectAddress: "127.0.0.2"),
                "the method must be 1 to 16 upper-case letters"
            ),
        ]
        for (request, detail) in cases {
            do {
                _ = try await transport.send(request, maximumResponseBytes: 1024)
                Issue.record("\(detail): sent")
            } catch {
                #expect(error.kind == .notConnected)
                #expect(error.detail == detail)
                #expect(!error.isTLSFailure)
            }
        }
        // URLSession resolves names itself: it refuses a request that must go to a checked address.
        do {
            _ = try await URLSessionTransport().send(
                HTTPTransportRequest(method: "POST", url: url, connectAddress: "127.0.0.2"), maximumResponseBytes: 1024)
            Issue.record("URLSessionTransport sent a pinned request")
        } catch {
            #expect(error.kind == .notConnected)
            #expect(error.detail == "URLSession cannot connect to a given address")
        }
    }

    /// The answer is read whole up to the limit and refused beyond it; headers come back with
    /// lower-cased names. Against this server's own `/openapi.json`, reached by a name only the
    /// connect address makes reachable.
    @Test func answersAreBoundedAndHeadersRead() async throws {
        let harness = try await ServerHarness()
        defer { Task { await harness.stop() } }
        let transport = PinnedHTTPTransport()
        let url = try #require(URL(string: "http://storekeeper.test:\(harness.server.port)/openapi.json"))
        let expected = try await harness.request("GET", "/openapi.json")
        #expect(expected.body.count > 1024)
        let request = HTTPTransportRequest(method: "GET", url: url, connectAddress: "127.0.0.1")
        let whole = try await transport.send(request, maximumResponseBytes: expected.body.count)
        #expect(whole.status == 200)
        #expect(whole.body == expected.body)
        #expect(whole.header("Content-Type") == expected.header("Content-Type"))
        #expect(whole.headers["content-length"] == String(expected.body.count))
        do {
            _ = try await transport.send(request, maximumResponseBytes: expected.body.count - 1)
            Issue.record("a body over the limit was accepted")
        } catch {
            #expect(error.kind == .responseTooLarge)
            #expect(WebhookDeliveryFailure.responseTooLarge.category == "response_too_large")
        }
    }

    /// Cancelling the caller aborts a transfer that is waiting for an answer, well before its
    /// timeout.
    @Test func cancellationAbortsAWaitingTransfer() async throws {
        let hanging = try HangingListener()
        defer { hanging.close() }
        let transport = PinnedHTTPTransport()
        let url = try #require(URL(string: "http://hanging.test:\(hanging.port)/hang"))
        let started = ContinuousClock.now
        let task = Task { () -> HTTPTransportFailure.Kind? in
            do {
                _ = try await transport.send(
                    HTTPTransportRequest(
                        method: "POST", url: url, body: Data("{}".utf8), timeout: .seconds(60),
                        connectAddress: "127.0.0.1"), maximumResponseBytes: 1024)
                return nil
            } catch let failure as HTTPTransportFailure {
                return failure.kind
            } catch {
                return nil
            }
        }
        try await Task.sleep(for: .milliseconds(200))
        task.cancel()
        #expect(await task.value == .cancelled)
        #expect(ContinuousClock.now - started < .seconds(30))
    }
}
