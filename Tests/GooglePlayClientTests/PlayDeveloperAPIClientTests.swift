import AppStoreClient
import Foundation
import GooglePlayModels
import GooglePlayTrust
import Testing

@testable import GooglePlayClient

/// RSA key generation is slow: one service-account key for the suite.
enum ClientTestKeys {
    static let account = ServiceAccountKey(
        clientEmail: "play@test.iam.gserviceaccount.com", privateKeyId: "kid-1",
        privateKey: try! RSAPrivateKey.generate(), tokenURI: URL(string: "https://oauth2.test/token")!)
}

struct PlayDeveloperAPIClientTests {
    static let tokenOK = #"{"access_token":"ya29.first","expires_in":3599,"token_type":"Bearer"}"#
    static let noJitter = RetryPolicy(
        maxAttempts: 4, initialBackoff: .milliseconds(500), multiplier: 2, jitter: 0, maxTotalTime: .seconds(60))

    static func client(_ transport: ScriptedTransport, clock: SteppedClock, policy: RetryPolicy = noJitter)
        -> PlayDeveloperAPIClient
    {
        let tokens = AccessTokenProvider(
            key: ClientTestKeys.account, transport: transport, retryPolicy: policy, clock: clock)
        return PlayDeveloperAPIClient(
            baseURL: URL(string: "https://play.test/")!, tokens: tokens, transport: transport, retryPolicy: policy,
            clock: clock)
    }

    @Test func pathsAreThoseOfTheDiscoveryDocument() async throws {
        let transport = ScriptedTransport([
            .respond(200, Self.tokenOK), .respond(200, "{}"), .respond(200, ""), .respond(200, "{}"), .respond(200, ""),
            .respond(200, ""), .respond(200, "{}"),
        ])
        let client = Self.client(transport, clock: SteppedClock())
        _ = try await client.subscriptionV2(packageName: "com.app", token: "tok/en")
        try await client.acknowledgeSubscription(packageName: "com.app", subscriptionId: "premium", token: "t1")
        _ = try await client.product(packageName: "com.app", productId: "coins", token: "t2")
        try await client.acknowledgeProduct(packageName: "com.app", productId: "coins", token: "t2")
        try await client.consumeProduct(packageName: "com.app", productId: "coins", token: "t2")
        _ = try await client.voidedPurchases(
            packageName: "com.app",
            query: VoidedPurchasesQuery(startTime: EpochMillisString(milliseconds: 1000), maxResults: 50, token: "p 2"))
        let sent = transport.sent
        #expect(sent.map(\.method) == ["POST", "GET", "POST", "GET", "POST", "POST", "GET"])
        #expect(
            sent.map(\.url.absoluteString) == [
                "https://oauth2.test/token",
                "https://play.test/androidpublisher/v3/applications/com.app/purchases/subscriptionsv2/tokens/tok%2Fen",
                "https://play.test/androidpublisher/v3/applications/com.app/purchases/subscriptions/premium/tokens/t1:acknowledge",
                "https://play.test/androidpublisher/v3/applications/com.app/purchases/products/coins/tokens/t2",
                "https://play.test/androidpublisher/v3/applications/com.app/purchases/products/coins/tokens/t2:acknowledge",
                "https://play.test/androidpublisher/v3/applications/com.app/purchases/products/coins/tokens/t2:consume",
                "https://play.test/androidpublisher/v3/applications/com.app/purchases/voidedpurchases?includeQuantityBasedPartialRefund=true&maxResults=50&startTime=1000&token=p%202&type=1",
            ])
        #expect(sent[1].header("Authorization") == "Bearer ya29.first")
        #expect(sent[2].body.map { String(decoding: $0, as: UTF8.self) } == "{}")
        let form = String(decoding: sent[0].body ?? Data(), as: UTF8.self)
        #expect(form.hasPrefix("grant_type=urn%3Aietf%3Aparams%3Aoauth%3Agrant-type%3Ajwt-bearer&assertion=ey"))
        #expect(sent[0].header("Content-Type") == "application/x-www-form-urlencoded")
    }

    /// `.` and `..` are unreserved, so they went out unencoded and a resolver read them as
    /// dot segments: `tokens/..` named the collection, `products/../tokens/t` another product's
    /// path. Each is refused before anything is sent (the access token is not even fetched).
    @Test func dotSegmentsAreRefusedBeforeAnythingIsSent() async throws {
        let transport = ScriptedTransport([
            .respond(200, Self.tokenOK), .respond(200, "{}"), .respond(200, "{}"), .respond(200, ""),
        ])
        let client = Self.client(transport, clock: SteppedClock())
        for token in [".", ".."] {
            let error = await #expect(throws: GooglePlayClientError.self) {
                _ = try await client.subscriptionV2(packageName: "com.app", token: token)
            }
            #expect(error?.code == .invalidRequest)
            #expect(error?.detail == #"path parameter must not be "." or "..""#)
        }
        await #expect(throws: GooglePlayClientError.self) {
            _ = try await client.product(packageName: "com.app", productId: "..", token: "t1")
        }
        await #expect(throws: GooglePlayClientError.self) {
            try await client.acknowledgeSubscription(packageName: "..", subscriptionId: "premium", token: "t1")
        }
        #expect(transport.sent.isEmpty)
        // A token that merely contains dots is an ordinary segment.
        _ = try await client.subscriptionV2(packageName: "com.app", token: "a..b")
        #expect(
            transport.sent.last?.url.absoluteString
                == "https://play.test/androidpublisher/v3/applications/com.app/purchases/subscriptionsv2/tokens/a..b")
    }

    @Test func retriesOn503And429HonouringRetryAfter() async throws {
        let clock = SteppedClock()
        let transport = ScriptedTransport([
            .respond(200, Self.tokenOK),
            .respond(503, #"{"error":{"code":503,"message":"Backend Error","status":"UNAVAILABLE"}}"#),
            .respond(429, #"{"error":{"code":429,"status":"RESOURCE_EXHAUSTED"}}"#, headers: ["Retry-After": "7"]),
            .fail(.notConnected),
            .respond(200, #"{"subscriptionState":"SUBSCRIPTION_STATE_ACTIVE"}"#),
        ])
        let purchase = try await Self.client(transport, clock: clock).subscriptionV2(packageName: "p", token: "t")
        #expect(purchase.subscriptionState == .active)
        #expect(clock.sleeps == [.milliseconds(500), .seconds(7), .seconds(2)])
    }

    @Test func givesUpAfterMaxAttemptsWithGooglesError() async throws {
        let clock = SteppedClock()
        let body = #"{"error":{"code":500,"message":"Internal error.","status":"INTERNAL"}}"#
        let transport = ScriptedTransport(
            [.respond(200, Self.tokenOK)] + Array(repeating: .respond(500, body), count: 4))
        do {
            _ = try await Self.client(transport, clock: clock).subscriptionV2(packageName: "p", token: "t")
            Issue.record("500s did not fail the call")
        } catch {
            #expect(error.code == .apiError)
            #expect(error.httpStatus == 500)
            #expect(error.googleStatus == "INTERNAL")
            #expect(error.googleMessage == "Internal error.")
            #expect(error.attempts == 4)
            #expect(error.isTransient)
        }
        #expect(clock.sleeps == [.milliseconds(500), .seconds(1), .seconds(2)])
    }

    @Test func clientErrorsAreNotRetriedAndConsumeIsNotRepeatedAfterATimeout() async throws {
        let clock = SteppedClock()
        let notFound = #"{"error":{"code":404,"message":"The purchase token was not found.","status":"NOT_FOUND"}}"#
        let transport = ScriptedTransport([.respond(200, Self.tokenOK), .respond(404, notFound), .fail(.timedOut)])
        let client = Self.client(transport, clock: clock)
        do {
            _ = try await client.product(packageName: "p", productId: "x", token: "t")
            Issue.record("404 did not fail")
        } catch {
            #expect(error.code == .apiError)
            #expect(error.httpStatus == 404)
            #expect(error.googleStatus == "NOT_FOUND")
            #expect(error.attempts == 1)
            #expect(!error.isTransient)
            #expect(
                error.description
                    == "play.apiError method=purchases.products.get http=404 status=NOT_FOUND: Google answered HTTP 404 (Google: The purchase token was not found.)"
            )
        }
        do {
            try await client.consumeProduct(packageName: "p", productId: "x", token: "t")
            Issue.record("a timed-out consume succeeded")
        } catch {
            #expect(error.code == .transportFailed)
            #expect(error.attempts == 1)
        }
        #expect(transport.sent.count == 3)
        #expect(clock.sleeps == [])
    }

    @Test func unauthorizedRefreshesTheTokenOnce() async throws {
        let second = #"{"access_token":"ya29.second","expires_in":3599,"token_type":"Bearer"}"#
        let unauthorized =
            #"{"error":{"code":401,"message":"Request had invalid authentication credentials.","status":"UNAUTHENTICATED"}}"#
        let transport = ScriptedTransport([
            .respond(200, Self.tokenOK), .respond(401, unauthorized), .respond(200, second), .respond(200, "{}"),
            .respond(401, unauthorized), .respond(200, Self.tokenOK), .respond(401, unauthorized),
        ])
        let client = Self.client(transport, clock: SteppedClock())
        _ = try await client.subscriptionV2(packageName: "p", token: "t")
        #expect(transport.sent[3].header("Authorization") == "Bearer ya29.second")
        do {
            _ = try await client.subscriptionV2(packageName: "p", token: "t")
            Issue.record("a second 401 succeeded")
        } catch {
            #expect(error.httpStatus == 401)
            #expect(error.googleStatus == "UNAUTHENTICATED")
        }
        #expect(transport.sent.count == 7)
    }

    @Test func oversizedAndMalformedAnswersAreNamed() async throws {
        let transport = ScriptedTransport([
            .respond(200, Self.tokenOK), .respond(200, String(repeating: " ", count: 2000)),
            .respond(200, #"{"lineItems":[{"expiryTime":"yesterday"}]}"#),
        ])
        let tokens = AccessTokenProvider(key: ClientTestKeys.account, transport: transport, clock: SteppedClock())
        let client = PlayDeveloperAPIClient(
            baseURL: URL(string: "https://play.test/")!, tokens: tokens, transport: transport, clock: SteppedClock(),
            maximumResponseBytes: 1000)
        await #expect(throws: GooglePlayClientError.self) {
            try await client.subscriptionV2(packageName: "p", token: "t")
        }
        do {
            _ = try await client.subscriptionV2(packageName: "p", token: "t")
        } catch {
            #expect(error.code == .malformedResponse)
            #expect(
                error.detail
                    == "the answer is not a SubscriptionPurchaseV2: play.model.invalidValue SubscriptionPurchaseV2: field 'lineItems[0].expiryTime' has an invalid value"
            )
        }
        do {
            _ = try await client.subscriptionV2(packageName: "p", token: String(repeating: "x", count: 1001))
        } catch {
            #expect(error.code == .invalidRequest)
        }
    }

    @Test func voidedPurchasePagingFollowsTokensAndRefusesALoop() async throws {
        let transport = ScriptedTransport([
            .respond(200, Self.tokenOK),
            .respond(200, #"{"voidedPurchases":[{"orderId":"A"}],"tokenPagination":{"nextPageToken":"n1"}}"#),
            .respond(200, #"{"voidedPurchases":[{"orderId":"B"}],"tokenPagination":{"nextPageToken":"n2"}}"#),
            .respond(200, #"{"voidedPurchases":[{"orderId":"C"}]}"#),
            .respond(200, #"{"voidedPurchases":[],"tokenPagination":{"nextPageToken":"same"}}"#),
            .respond(200, #"{"voidedPurchases":[],"tokenPagination":{"nextPageToken":"same"}}"#),
        ])
        let client = Self.client(transport, clock: SteppedClock())
        let all = try await client.allVoidedPurchases(packageName: "p", query: VoidedPurchasesQuery())
        #expect(all.map(\.orderId) == ["A", "B", "C"])
        #expect(transport.sent[3].url.query == "includeQuantityBasedPartialRefund=true&token=n2&type=1")
        do {
            _ = try await client.allVoidedPurchases(packageName: "p", query: VoidedPurchasesQuery())
            Issue.record("a repeating page token was followed")
        } catch {
            #expect(error.code == .malformedResponse)
        }
    }
}
