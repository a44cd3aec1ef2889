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
}
