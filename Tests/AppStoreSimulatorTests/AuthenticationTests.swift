import AppStoreModels
import AppStoreSimulator
import AppStoreTrust
import Foundation
import HTTPServer
import Testing

/// The Server API refuses bearer tokens the way Apple does (401), and rate-limits with 429.
@Suite struct AuthenticationTests {
    func get(_ fixture: SimulatorFixture, _ path: String, token: String?) async -> HTTPResponse {
        let responder = SimulatorServer.responder(mounts: [("", fixture.simulator)])
        var headers: HTTPHeaders = [:]
        if let token { headers["Authorization"] = "Bearer " + token }
        return await responder.respond(to: HTTPRequest(method: .get, target: path, headers: headers))
    }

    @Test func refusesMissingExpiredWrongAudienceAndUnknownKeys() async throws {
        let fixture = try await SimulatorFixture()
        let id = try #require(try await fixture.act(.purchase, "alice", "lifetime").transactionId)
        let path = "/inApps/v1/transactions/\(id)"
        #expect(await get(fixture, path, token: nil).status.code == 401)
        #expect(await get(fixture, path, token: try fixture.token(expiresIn: -600)).status.code == 401)
        #expect(await get(fixture, path, token: try fixture.token(audience: "someone-else")).status.code == 401)
        #expect(await get(fixture, path, token: try fixture.token(keyId: "NOPE")).status.code == 401)
        #expect(await get(fixture, path, token: try fixture.token(bundleId: "com.other")).status.code == 401)
        #expect(
            await get(fixture, path, token: try fixture.token(key: try PrivateKey.generateP256())).status.code == 401)
        #expect(await get(fixture, path, token: try fixture.token(expiresIn: 7200)).status.code == 401)
        // Apple's Python library sends no `iat`: accepted.
        let accepted = await get(fixture, path, token: try fixture.token(issuedAt: nil))
        #expect(accepted.status.code == 200)
        let body = try AppStoreJSON.decode(TransactionInfoResponse.self, from: accepted.body)
        #expect(body.signedTransactionInfo != nil)
    }

    @Test func answersAppleErrorCodes() async throws {
        let fixture = try await SimulatorFixture()
        let token = try fixture.token()
        let missing = await get(fixture, "/inApps/v1/transactions/2000000000000099", token: token)
        #expect(missing.status.code == 404)
        #expect(missing.headers["Content-Type"] == "application/json")
        let payload = try AppStoreJSON.decode(ErrorPayload.self, from: missing.body)
        #expect(payload.errorCode == .transactionIdNotFound)
        let invalid = await get(fixture, "/inApps/v1/transactions/abc", token: token)
        #expect(invalid.status.code == 400)
        #expect(try AppStoreJSON.decode(ErrorPayload.self, from: invalid.body).errorCode == .invalidTransactionId)
    }

    /// The outage switch of the admin API: Apple's APIs answer 503 / 21005 while the store goes
    /// on, then answer again once it ends.
    @Test func outageMakesTheAPIsUnavailableUntilItEnds() async throws {
        let fixture = try await SimulatorFixture()
        let id = try #require(try await fixture.act(.purchase, "alice", "lifetime").transactionId)
        let responder = SimulatorServer.responder(mounts: [("", fixture.simulator)])
        func admin(_ method: HTTPMethod, _ body: String? = nil) async -> HTTPResponse {
            await responder.respond(
                to: HTTPRequest(
                    method: method, target: "/simulator/v1/settings/outage",
                    headers: ["Content-Type": "application/json"], body: Data((body ?? "").utf8)))
        }
        let path = "/inApps/v1/transactions/\(id)"
        let token = try fixture.token()
        #expect(await get(fixture, path, token: token).status.code == 200)
        #expect(await admin(.put, #"{"active":true}"#).status.code == 204)
        #expect(String(decoding: await admin(.get).body, as: UTF8.self) == #"{"active":true}"#)
        let down = await get(fixture, path, token: token)
        #expect(down.status.code == 503)
        #expect(try AppStoreJSON.decode(ErrorPayload.self, from: down.body).errorCode == .generalInternalRetryable)
        // Even an unauthenticated call: the gateway is down before any check.
        #expect(await get(fixture, path, token: nil).status.code == 503)
        #expect(await fixture.simulator.verifyReceipt(body: Data("{}".utf8)).status == .receiptServerUnavailable)
        // The store itself goes on.
        #expect(try await fixture.act(.purchase, "bob", "coins").transactionId != nil)
        #expect(await admin(.put, #"{"active":"yes"}"#).status.code == 400)
        #expect(await admin(.put, #"{"active":false}"#).status.code == 204)
        #expect(await get(fixture, path, token: token).status.code == 200)
    }

    @Test func rateLimitAnswers429WithRetryAfter() async throws {
        let fixture = try await SimulatorFixture()
        let id = try #require(try await fixture.act(.purchase, "alice", "lifetime").transactionId)
        await fixture.simulator.setRateLimit(RateLimit(requests: 2, seconds: 10))
        let token = try fixture.token()
        let path = "/inApps/v1/transactions/\(id)"
        #expect(await get(fixture, path, token: token).status.code == 200)
        #expect(await get(fixture, path, token: token).status.code == 200)
        let limited = await get(fixture, path, token: token)
        #expect(limited.status.code == 429)
        #expect(limited.headers["Retry-After"] == "10")
        #expect(try AppStoreJSON.decode(ErrorPayload.self, from: limited.body).errorCode == .rateLimitExceeded)
        fixture.clock.advance(milliseconds: 10_001)
        #expect(await get(fixture, path, token: token).status.code == 200)
    }

    /// Issue 12: by default each endpoint of each app is held to Apple's documented rate (Sandbox:
    /// a tenth), with a burst; `ServerAPIRateLimits` scales or lifts it, also through the admin API.
    @Test func serverAPIHoldsEachEndpointToApplesRateUnlessLifted() async throws {
        let fixture = try await SimulatorFixture()
        #expect(await fixture.simulator.currentServerAPIRateLimits == .apple)
        let id = try #require(try await fixture.act(.purchase, "alice", "lifetime").transactionId)
        let responder = SimulatorServer.responder(mounts: [("", fixture.simulator)])
        func admin(_ method: HTTPMethod, _ body: String = "") async -> HTTPResponse {
            await responder.respond(
                to: HTTPRequest(
                    method: method, target: "/simulator/v1/settings/server-api-rate-limits",
                    headers: ["Content-Type": "application/json"], body: Data(body.utf8)))
        }
        let token = try fixture.token()
        let info = "/inApps/v1/transactions/\(id)"
        // Sandbox's Get Transaction Info: 5 a second; with a one-second burst, 5 at once.
        await fixture.simulator.setServerAPIRateLimits(ServerAPIRateLimits(percent: 100, burstSeconds: 1))
        for _ in 0..<5 { #expect(await get(fixture, info, token: token).status.code == 200) }
        let limited = await get(fixture, info, token: token)
        #expect(limited.status.code == 429)
        #expect(limited.headers["Retry-After"] == "1")
        #expect(try AppStoreJSON.decode(ErrorPayload.self, from: limited.body).errorCode == .rateLimitExceeded)
        // Another endpoint has its own budget; a fifth of a second later one more call passes.
        #expect(await get(fixture, "/inApps/v2/history/\(id)", token: token).status.code == 200)
        fixture.clock.advance(milliseconds: 200)
        #expect(await get(fixture, info, token: token).status.code == 200)
        #expect(await get(fixture, info, token: token).status.code == 429)

        // Twenty times Apple's: 100 a second.
        #expect(await admin(.put, #"{"percent": 2000, "burstSeconds": 1}"#).status.code == 204)
        #expect(
            try AppStoreJSON.decode(ServerAPIRateLimits.self, from: await admin(.get).body)
                == ServerAPIRateLimits(percent: 2000, burstSeconds: 1))
        var passed = 0
        for _ in 0..<101 where await get(fixture, info, token: token).status.code == 200 { passed += 1 }
        #expect(passed == 100)
        // Lifted: no limit at all.
        #expect(await admin(.put, #"{"percent": null}"#).status.code == 204)
        for _ in 0..<300 { #expect(await get(fixture, info, token: token).status.code == 200) }
        #expect(await admin(.put, #"{"percent": 0}"#).status.code == 400)
        #expect(await fixture.simulator.currentServerAPIRateLimits == .unlimited)
    }
}
