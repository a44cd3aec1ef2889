import AppStoreClient
import AppStoreModels
import Foundation
import StorekeeperTesting
import Synchronization
import Testing

/// Retries, give-up, idempotency, token refresh, sandbox fallback and error mapping, through
/// the loopback stub with a virtual clock (no real sleeping).
@Suite(.enabled(if: Conformance.isAvailable, "\(Conformance.skipMessage)"))
struct RetryAndErrorTests {
    func expectAPIError(
        _ body: () async throws -> Void, sourceLocation: SourceLocation = #_sourceLocation
    ) async -> AppStoreClientError? {
        do {
            try await body()
            Issue.record("expected an error", sourceLocation: sourceLocation)
            return nil
        } catch let error as AppStoreClientError {
            return error
        } catch {
            Issue.record("unexpected error type \(error)", sourceLocation: sourceLocation)
            return nil
        }
    }

    @Test func rateLimitHonoursRetryAfterThenSucceeds() async throws {
        let stub = try StubAppStore([
            try .corpus("apiTooManyRequestsException.json", status: 429, headers: [("Retry-After", "2")]),
            try .corpus("transactionInfoResponse.json"),
        ])
        defer { Task { await stub.stop() } }
        let clock = VirtualRetryClock()
        let client = try ClientFixture.client(stub, clock: clock)
        let response = try await client.getTransactionInfo(transactionId: "1234")
        #expect(response.signedTransactionInfo == "signed_transaction_info_value")
        #expect(stub.requests.count == 2)
        #expect(clock.sleeps == [.seconds(2)])
        for request in stub.requests { _ = try ClientFixture.verifyToken(request) }
    }

    /// Apple's 429 carries the UNIX time in milliseconds of the next allowed request ("Identifying
    /// rate limits"); read as seconds it was a pause of 55,000 years, so the call gave up at once.
    @Test func rateLimitHonoursRetryAfterAsUnixMilliseconds() async throws {
        let wall = Date(timeIntervalSince1970: 1_764_547_200)
        let next = String(1_764_547_200_000 + 3_000)
        let stub = try StubAppStore([
            try .corpus("apiTooManyRequestsException.json", status: 429, headers: [("Retry-After", next)]),
            try .corpus("transactionInfoResponse.json"),
        ])
        defer { Task { await stub.stop() } }
        let clock = VirtualRetryClock(wall: wall)
        let client = try ClientFixture.client(stub, clock: clock)
        _ = try await client.getTransactionInfo(transactionId: "1234")
        #expect(stub.requests.count == 2)
        #expect(clock.sleeps == [.seconds(3)])
    }

    /// A call that gives up on a 429 says how long Apple asked to wait, for the shared limiter.
    @Test func givingUpOnRateLimitCarriesRetryAfter() async throws {
        let stub = try StubAppStore([
            try .corpus("apiTooManyRequestsException.json", status: 429, headers: [("Retry-After", "3600")])
        ])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub, clock: VirtualRetryClock())
        do throws(AppStoreClientError) {
            _ = try await client.getTransactionInfo(transactionId: "1234")
            Issue.record("a 429 with an hour's Retry-After succeeded")
        } catch {
            #expect(error.httpStatus == 429)
            #expect(error.retryAfter == .seconds(3600))
        }
    }

    @Test func serverErrorThenSuccessWithBackoff() async throws {
        let stub = try StubAppStore([
            try .corpus("apiException.json", status: 500), try .corpus("transactionInfoResponse.json"),
        ])
        defer { Task { await stub.stop() } }
        let clock = VirtualRetryClock()
        let client = try ClientFixture.client(stub, clock: clock)
        _ = try await client.getTransactionInfo(transactionId: "1234")
        #expect(stub.requests.count == 2)
        #expect(clock.sleeps == [.milliseconds(100)])
    }

    @Test(arguments: [(Int64(4_040_002), 404), (4_040_004, 404), (4_040_006, 404), (5_000_001, 500)])
    func retryableAPICodeThenSuccess(code: Int64, status: Int) async throws {
        let stub = try StubAppStore([
            .apiError(code, "retry me", status: status), try .corpus("getAllSubscriptionStatusesResponse.json"),
        ])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        let response = try await client.getAllSubscriptionStatuses(transactionId: "4321")
        #expect(response.appAppleId == 5454545)
        #expect(stub.requests.count == 2)
    }

    @Test func givesUpAfterTheAttemptLimitWithBackoffGrowing() async throws {
        let stub = try StubAppStore(Array(repeating: try .corpus("apiException.json", status: 500), count: 3))
        defer { Task { await stub.stop() } }
        let clock = VirtualRetryClock()
        let client = try ClientFixture.client(stub, retry: ClientFixture.retry(maxAttempts: 3), clock: clock)
        let error = try #require(
            await expectAPIError { _ = try await client.getTransactionInfo(transactionId: "1234") })
        #expect(error.code == .apiError)
        #expect(error.httpStatus == 500)
        #expect(error.typedAPIError == .generalInternal)
        #expect(error.rawAPIErrorCode == 5_000_000)
        #expect(error.appleMessage == "An unknown error occurred.")
        #expect(error.attempts == 3)
        #expect(error.isTransient)
        #expect(stub.requests.count == 3)
        #expect(clock.sleeps == [.milliseconds(100), .milliseconds(200)])
    }

    @Test func givesUpWhenRetryAfterExceedsTheTimeBudget() async throws {
        let stub = try StubAppStore([
            try .corpus("apiTooManyRequestsException.json", status: 429, headers: [("Retry-After", "3600")])
        ])
        defer { Task { await stub.stop() } }
        let clock = VirtualRetryClock()
        let client = try ClientFixture.client(
            stub, retry: ClientFixture.retry(maxTotalTime: .seconds(30)), clock: clock)
        let error = try #require(
            await expectAPIError { _ = try await client.getTransactionInfo(transactionId: "1234") })
        #expect(error.httpStatus == 429)
        #expect(error.typedAPIError == .rateLimitExceeded)
        #expect(error.detail.contains("budget"))
        #expect(clock.sleeps.isEmpty)
        #expect(stub.requests.count == 1)
    }

    @Test func nonIdempotentCallIsNotRetriedOnServerError() async throws {
        let stub = try StubAppStore([
            try .corpus("apiException.json", status: 500), try .corpus("requestTestNotificationResponse.json"),
        ])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        let error = try #require(await expectAPIError { _ = try await client.requestTestNotification() })
        #expect(error.httpStatus == 500)
        #expect(error.attempts == 1)
        #expect(stub.requests.count == 1)
    }

    @Test func nonIdempotentCallIsRetriedOnRateLimit() async throws {
        // 429 means Apple refused before processing, so even a POST may be repeated.
        let stub = try StubAppStore([
            try .corpus("apiTooManyRequestsException.json", status: 429),
            try .corpus("requestTestNotificationResponse.json"),
        ])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        let response = try await client.requestTestNotification()
        #expect(response.testNotificationToken == "ce3af791-365e-4c60-841b-1674b43c1609")
        #expect(stub.requests.count == 2)
    }

    @Test func unauthorizedRefreshesTheTokenOnce() async throws {
        let stub = try StubAppStore([.empty(status: 401), try .corpus("transactionInfoResponse.json")])
        defer { Task { await stub.stop() } }
        let clock = VirtualRetryClock()
        let client = try ClientFixture.client(stub, clock: clock)
        _ = try await client.getTransactionInfo(transactionId: "1234")
        #expect(stub.requests.count == 2)
        #expect(stub.requests[0].header("Authorization") != stub.requests[1].header("Authorization"))
        #expect(clock.sleeps.isEmpty)
    }

    @Test func unauthorizedTwiceExplainsTheCase() async throws {
        let stub = try StubAppStore([.empty(status: 401), .empty(status: 401)])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub, environment: .production)
        let error = try #require(
            await expectAPIError { _ = try await client.getTransactionInfo(transactionId: "1234") })
        #expect(error.code == .apiError)
        #expect(error.httpStatus == 401)
        #expect(error.detail.contains("never been released"))
        #expect(stub.requests.count == 2)
    }

    @Test func sandboxFallbackForTransactionNotFoundInProduction() async throws {
        let production = try StubAppStore([try .corpus("transactionIdNotFoundError.json", status: 404)])
        let sandbox = try StubAppStore([try .corpus("transactionInfoResponse.json")])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let client = try ClientFixture.client(production, environment: .production, fallback: sandbox)
        let response = try await client.getTransactionInfo(transactionId: "1234")
        #expect(response.signedTransactionInfo == "signed_transaction_info_value")
        #expect(production.requests.count == 1)
        #expect(sandbox.requests.map(\.path) == ["/inApps/v1/transactions/1234"])
        _ = try ClientFixture.verifyToken(try #require(sandbox.requests.first))
    }

    @Test func sandboxFallbackForUnreleasedAppAnswering401() async throws {
        let production = try StubAppStore([.empty(status: 401), .empty(status: 401)])
        let sandbox = try StubAppStore([try .corpus("getAllSubscriptionStatusesResponse.json")])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let client = try ClientFixture.client(production, environment: .production, fallback: sandbox)
        _ = try await client.getAllSubscriptionStatuses(transactionId: "4321")
        #expect(production.requests.count == 2)
        #expect(sandbox.requests.count == 1)
    }

    @Test func notFoundWithoutFallbackSaysWhy() async throws {
        let stub = try StubAppStore([try .corpus("transactionIdNotFoundError.json", status: 404)])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub, environment: .production)
        let error = try #require(
            await expectAPIError { _ = try await client.getTransactionInfo(transactionId: "1234") })
        #expect(error.typedAPIError == .transactionIdNotFound)
        #expect(error.detail.contains("sandbox fallback"))
        #expect(error.environment == .production)
        #expect(!error.isTransient)
    }

    @Test func notFoundInBothEnvironments() async throws {
        let production = try StubAppStore([try .corpus("transactionIdNotFoundError.json", status: 404)])
        let sandbox = try StubAppStore([try .corpus("transactionIdNotFoundError.json", status: 404)])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let client = try ClientFixture.client(production, environment: .production, fallback: sandbox)
        let error = try #require(
            await expectAPIError { _ = try await client.getTransactionInfo(transactionId: "1234") })
        #expect(error.detail.contains("neither"))
        #expect(error.environment == .sandbox)
        #expect(error.attempts == 2)
    }

    @Test func fallbackDoesNotApplyToOtherEndpoints() async throws {
        let production = try StubAppStore([try .corpus("transactionIdNotFoundError.json", status: 404)])
        let sandbox = try StubAppStore([])
        defer {
            Task {
                await production.stop(); await sandbox.stop()
            }
        }
        let client = try ClientFixture.client(production, environment: .production, fallback: sandbox)
        _ = await expectAPIError { _ = try await client.lookUpOrderId(orderId: "W002182") }
        #expect(sandbox.requests.isEmpty)
    }

    /// Error bodies read whatever the Content-Type parameters are.
    @Test(arguments: [
        (
            "apiException.json", 500, Int64(5_000_000), APIError?.some(.generalInternal),
            String?.some("An unknown error occurred."), "application/json"
        ),
        (
            "apiTooManyRequestsException.json", 429, 4_290_000, .rateLimitExceeded, "Rate limit exceeded.",
            "application/json; charset=utf-8"
        ),
        ("apiUnknownError.json", 400, 9_990_000, nil, "Testing error.", "text/plain"),
        (
            "invalidTransactionIdError.json", 400, 4_000_006, .invalidTransactionId, nil,
            "application/json;charset=UTF-8"
        ),
        ("transactionIdNotFoundError.json", 404, 4_040_010, .transactionIdNotFound, nil, "application/json"),
        ("appTransactionDoesNotExistError.json", 404, 4_040_019, .appTransactionDoesNotExist, nil, "application/json"),
        ("invalidAppAccountTokenUUIDError.json", 400, 4_000_183, .invalidAppAccountTokenUUID, nil, "application/json"),
        (
            "familyTransactionNotSupportedError.json", 400, 4_000_185, .familyTransactionNotSupported, nil,
            "application/json"
        ),
        (
            "transactionIdNotOriginalTransactionId.json", 400, 4_000_187, .transactionIdIsNotOriginalTransactionId, nil,
            "application/json"
        ),
    ])
    func errorBodiesMapToTypedErrors(
        file: String, status: Int, raw: Int64, typed: APIError?, message: String?, contentType: String
    ) async throws {
        let stub = try StubAppStore([try .corpus(file, status: status, contentType: contentType)])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub, retry: .none)
        let error = try #require(
            await expectAPIError { _ = try await client.getTransactionInfo(transactionId: "1234") })
        #expect(error.code == .apiError)
        #expect(error.httpStatus == status)
        #expect(error.rawAPIErrorCode == raw)
        #expect(error.typedAPIError == typed)
        if let message { #expect(error.appleMessage == message) }
        #expect(error.endpoint == "getTransactionInfo")
    }

    @Test func malformedSuccessBodyIsReported() async throws {
        let stub = try StubAppStore([try .corpus("transactionHistoryResponseWithMalformedAppAppleId.json")])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub)
        let error = try #require(
            await expectAPIError {
                _ = try await client.getTransactionHistory(transactionId: "1234", revision: nil)
            })
        #expect(error.code == .malformedResponse)
        #expect(error.detail.contains("appAppleId"))
    }

    @Test func oversizedBodyIsCutOff() async throws {
        let stub = try StubAppStore([.json(Data(repeating: UInt8(ascii: " "), count: 64 * 1024))])
        defer { Task { await stub.stop() } }
        let configuration = try AppStoreServerAPIConfiguration(
            bundleId: ClientFixture.bundleId, keyId: ClientFixture.keyId, issuerId: ClientFixture.issuerId,
            environment: .sandbox, baseURL: stub.baseURL, retry: .none, maximumResponseBytes: 1024)
        let client = try AppStoreServerAPIClient(
            configuration: configuration, signingKey: ClientFixture.key, clock: VirtualRetryClock())
        let error = try #require(
            await expectAPIError { _ = try await client.getTransactionInfo(transactionId: "1234") })
        #expect(error.code == .responseTooLarge)
    }

    // MARK: Network failures through an injected transport

    @Test func lostConnectionIsRetriedOnlyForIdempotentCalls() async throws {
        let stub = try StubAppStore([try .corpus("transactionInfoResponse.json")])
        defer { Task { await stub.stop() } }
        let flaky = FlakyTransport(failures: [.connectionLost])
        let client = try ClientFixture.client(stub, transport: flaky)
        _ = try await client.getTransactionInfo(transactionId: "1234")
        #expect(flaky.sent == 2)

        let again = FlakyTransport(failures: [.connectionLost])
        let postClient = try ClientFixture.client(stub, transport: again)
        let error = try #require(await expectAPIError { _ = try await postClient.requestTestNotification() })
        #expect(error.code == .transportFailed)
        #expect(error.detail.contains("not idempotent"))
        #expect(again.sent == 1)
    }

    @Test func refusedConnectionIsRetriedEvenForNonIdempotentCalls() async throws {
        let stub = try StubAppStore([try .corpus("requestTestNotificationResponse.json")])
        defer { Task { await stub.stop() } }
        let flaky = FlakyTransport(failures: [.notConnected])
        let client = try ClientFixture.client(stub, transport: flaky)
        _ = try await client.requestTestNotification()
        #expect(flaky.sent == 2)
    }

    @Test func inFlightRequestsAreLimitedPerApp() async throws {
        let slow = SlowTransport()
        let stub = try StubAppStore([])
        defer { Task { await stub.stop() } }
        let client = try ClientFixture.client(stub, transport: slow, maxConcurrentRequests: 2)
        try await withThrowingTaskGroup(of: Void.self) { group in
            for index in 0..<6 {
                group.addTask { _ = try await client.getTransactionInfo(transactionId: "\(index)") }
            }
            try await group.waitForAll()
        }
        #expect(slow.peak == 2)
        #expect(await client.limiter.peakInFlight == 2)
    }
}

/// Fails the first requests with the given transport failures, then forwards to URLSession.
final class FlakyTransport: HTTPTransport {
    private let state: Mutex<(failures: [HTTPTransportFailure.Kind], sent: Int)>
    private let real = URLSessionTransport()

    init(failures: [HTTPTransportFailure.Kind]) { state = Mutex((failures, 0)) }

    var sent: Int { state.withLock { $0.sent } }

    func send(_ request: HTTPTransportRequest, maximumResponseBytes: Int) async throws(HTTPTransportFailure)
        -> HTTPTransportResponse
    {
        let failure: HTTPTransportFailure.Kind? = state.withLock {
            $0.sent += 1
            return $0.failures.isEmpty ? nil : $0.failures.removeFirst()
        }
        if let failure { throw HTTPTransportFailure(failure, "injected") }
        return try await real.send(request, maximumResponseBytes: maximumResponseBytes)
    }
}

/// Answers every request after a short pause, counting how many overlap.
final class SlowTransport: HTTPTransport {
    private let state = Mutex<(current: Int, peak: Int)>((0, 0))
    var peak: Int { state.withLock { $0.peak } }

    func send(_ request: HTTPTransportRequest, maximumResponseBytes: Int) async throws(HTTPTransportFailure)
        -> HTTPTransportResponse
    {
        state.withLock {
            $0.current += 1
            $0.peak = max($0.peak, $0.current)
        }
        try? await Task.sleep(for: .milliseconds(20))
        state.withLock { $0.current -= 1 }
        return HTTPTransportResponse(status: 200, body: Data(#"{"signedTransactionInfo":"x"}"#.utf8))
    }
}
