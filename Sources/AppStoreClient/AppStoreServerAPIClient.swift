import AppStoreModels
import AppStoreTrust
import Foundation

/// A client of the App Store Server API (and the Retention Messaging API on the same host) for
/// one app: every endpoint (see `AppStoreServerAPIEndpoint`), ES256 bearer tokens from the
/// trust core, retries with backoff by each endpoint's `RetrySafety`, a per-app limit on
/// requests in flight, an optional sandbox fallback, and paginated history as async sequences
/// of verified items.
///
/// Tokens: `AppStoreConnectTokenSigner` reuses one token until shortly before it expires; a 401
/// drops it and the request is repeated once with a fresh one.
/// - Note: Thread-safe: immutable configuration, a `Mutex`-guarded token signer and an actor
///   limiter; share one instance per app.
public final class AppStoreServerAPIClient: Sendable {
    public let configuration: AppStoreServerAPIConfiguration
    /// The per-app in-flight limit (shared with the sandbox fallback).
    public let limiter: ConcurrencyLimiter
    let signer: AppStoreConnectTokenSigner
    let executor: RetryingExecutor

    /// - Parameters:
    ///   - signingKey: the `.p8` In-App Purchase key.
    ///   - transport: `URLSessionTransport` in production; tests inject failures.
    ///   - clock: pauses and budgets of the retry loop.
    ///   - tokenClock: the instant tokens are issued at.
    public init(
        configuration: AppStoreServerAPIConfiguration, signingKey: PrivateKey,
        transport: any HTTPTransport = URLSessionTransport(), clock: any RetryClock = SystemRetryClock(),
        tokenClock: @escaping @Sendable () -> Timestamp = { Timestamp(Date()) }
    ) throws(AppStoreClientError) {
        self.configuration = configuration
        do throws(TrustError) {
            signer = try AppStoreConnectTokenSigner(
                key: signingKey, keyId: configuration.keyId, issuerId: configuration.issuerId,
                bundleId: configuration.bundleId, clock: tokenClock)
        } catch {
            throw AppStoreClientError(.invalidConfiguration, "cannot create the token signer: \(error.rule.rawValue)")
        }
        limiter = ConcurrencyLimiter(limit: configuration.maxConcurrentRequests)
        executor = RetryingExecutor(
            transport: transport, policy: configuration.retry, clock: clock, limiter: limiter,
            maximumResponseBytes: configuration.maximumResponseBytes)
    }

    // MARK: One call

    /// A request before a base URL and a token are chosen.
    struct Call: Sendable {
        var endpoint: AppStoreServerAPIEndpoint
        var path: String
        var query: [(name: String, value: String)] = []
        var body: Data? = nil
        var contentType: String? = nil
    }

    /// A 2xx body and the environment whose server sent it.
    struct Answer: Sendable {
        var body: Data
        var environment: AppStoreEnvironment
    }

    private struct Target {
        var baseURL: URL
        var environment: AppStoreEnvironment
    }

    /// Sends a call with retries; for endpoints that allow it, falls back to the sandbox when
    /// production does not know the transaction (or refuses a pre-release app with 401).
    /// `pinnedEnvironment` sends later pages to the environment that answered the first one.
    func perform(_ call: Call, pinnedEnvironment: AppStoreEnvironment? = nil) async throws(AppStoreClientError)
        -> Answer
    {
        let primary = Target(baseURL: configuration.baseURL, environment: configuration.environment)
        let fallback = configuration.sandboxFallbackBaseURL.map { Target(baseURL: $0, environment: .sandbox) }
        if let pinnedEnvironment, pinnedEnvironment != primary.environment, let fallback,
            pinnedEnvironment == fallback.environment
        {
            return try await send(call, to: fallback)
        }
        do throws(AppStoreClientError) {
            return try await send(call, to: primary)
        } catch {
            guard let fallback, call.endpoint.allowsSandboxFallback, Self.warrantsSandboxFallback(error) else {
                throw error
            }
            do throws(AppStoreClientError) {
                return try await send(call, to: fallback, attemptsSoFar: error.attempts)
            } catch let second {
                if Self.isTransactionNotFound(second) {
                    throw second.with(detail: "transaction ID is known neither to Production nor to Sandbox")
                }
                throw second.with(detail: second.detail + " (after Production answered HTTP \(error.httpStatus ?? 0))")
            }
        }
    }

    static func isTransactionNotFound(_ error: AppStoreClientError) -> Bool {
        error.code == .apiError && error.httpStatus == 404 && error.apiError == .transactionIdNotFound
    }

    static func warrantsSandboxFallback(_ error: AppStoreClientError) -> Bool {
        isTransactionNotFound(error) || (error.code == .apiError && error.httpStatus == 401)
    }

    private func send(_ call: Call, to target: Target, attemptsSoFar: Int = 0) async throws(AppStoreClientError)
        -> Answer
    {
        let url = try Self.url(base: target.baseURL, path: call.path, query: call.query, endpoint: call.endpoint)
        let endpointName = call.endpoint.rawValue
        let hasFallback = configuration.sandboxFallbackBaseURL != nil
        let body = try await executor.run(
            endpoint: endpointName, environment: target.environment, safety: call.endpoint.retrySafety,
            attemptsSoFar: attemptsSoFar,
            makeRequest: { () throws(AppStoreClientError) -> HTTPTransportRequest in
                let token: String
                do throws(TrustError) {
                    token = try signer.token()
                } catch {
                    throw AppStoreClientError(
                        .tokenSigningFailed, "cannot sign the API token: \(error.rule.rawValue)", endpoint: endpointName
                    )
                }
                var headers: [(name: String, value: String)] = [
                    ("Authorization", "Bearer \(token)"), ("Accept", "application/json"),
                    ("User-Agent", configuration.userAgent),
                ]
                if let contentType = call.contentType { headers.append(("Content-Type", contentType)) }
                return HTTPTransportRequest(
                    method: call.endpoint.method, url: url, headers: headers, body: call.body,
                    timeout: configuration.requestTimeout)
            },
            refreshCredentials: { signer.invalidate() },
            verdict: { response in
                Self.verdict(
                    response, endpoint: endpointName, environment: target.environment, hasFallback: hasFallback,
                    now: executor.clock.wallNow())
            })
        return Answer(body: body, environment: target.environment)
    }

    /// Maps one HTTP answer of the Server API to success, retry or failure.
    static func verdict(
        _ response: HTTPTransportResponse, endpoint: String, environment: AppStoreEnvironment, hasFallback: Bool,
        now: Date
    ) -> AttemptVerdict<Data> {
        if (200..<300).contains(response.status) { return .success(response.body) }
        let payload = ErrorBody.parse(response.body)
        let status = response.status
        let error = AppStoreClientError(
            .apiError, explain(status: status, payload: payload, environment: environment, hasFallback: hasFallback),
            httpStatus: status, apiError: payload?.errorCode, appleMessage: payload?.errorMessage,
            endpoint: endpoint, environment: environment)
        let retryAfter = RetryAfter.parse(response.header("Retry-After"), now: now)
        if status == 401 { return .refreshCredentials(error) }
        if status == 429 { return .retry(error, retryAfter: retryAfter, requiresIdempotent: false) }
        if status >= 500 || payload?.isRetryable == true {
            return .retry(error, retryAfter: retryAfter, requiresIdempotent: true)
        }
        return .fail(error)
    }

    static func explain(status: Int, payload: ErrorPayload?, environment: AppStoreEnvironment, hasFallback: Bool)
        -> String
    {
        if status == 401 {
            var text =
                "Apple refused the API token (a freshly signed one too): check the key ID, issuer ID, bundle ID and that the .p8 is an In-App Purchase key"
            if environment == .production {
                text += "; an app that has never been released answers 401 in Production"
                text +=
                    hasFallback
                    ? " (the sandbox fallback was tried)"
                    : ": use the Sandbox environment or enable the sandbox fallback"
            }
            return text
        }
        if status == 404, payload?.errorCode == .transactionIdNotFound {
            var text = "transaction ID not found in \(environment.rawValue)"
            if environment == .production, !hasFallback {
                text +=
                    "; a sandbox purchase (TestFlight, Xcode, sandbox account) exists only in Sandbox: enable the sandbox fallback or use the Sandbox environment"
            }
            return text
        }
        if status == 429 { return "Apple's rate limit for this endpoint was exceeded" }
        if payload?.errorCode == nil, status >= 500 { return "Apple answered HTTP \(status) without an error code" }
        return "Apple answered HTTP \(status)"
    }

    // MARK: URLs and bodies

    /// Base URL (its own path kept, e.g. a simulator mounted under `/apple`) + percent-encoded
    /// path + query. Query names and values are encoded strictly: `+`, `&`, `=` never leak.
    static func url(
        base: URL, path: String, query: [(name: String, value: String)], endpoint: AppStoreServerAPIEndpoint
    ) throws(AppStoreClientError) -> URL {
        guard var components = URLComponents(url: base, resolvingAgainstBaseURL: false) else {
            throw AppStoreClientError(.invalidConfiguration, "base URL is not a URL", endpoint: endpoint.rawValue)
        }
        var basePath = components.percentEncodedPath
        while basePath.hasSuffix("/") { basePath.removeLast() }
        components.percentEncodedPath = basePath + path
        components.percentEncodedQuery =
            query.isEmpty
            ? nil
            : query.map {
                "\(AppStoreServerAPIEndpoint.encodeSegment($0.name))=\(AppStoreServerAPIEndpoint.encodeSegment($0.value))"
            }
            .joined(separator: "&")
        guard let url = components.url else {
            throw AppStoreClientError(.invalidRequest, "cannot form a URL", endpoint: endpoint.rawValue)
        }
        return url
    }

    static func decode<T: Decodable>(_ type: T.Type, _ answer: Answer, endpoint: AppStoreServerAPIEndpoint)
        throws(AppStoreClientError) -> T
    {
        do {
            return try AppStoreJSON.decode(T.self, from: answer.body)
        } catch {
            throw AppStoreClientError(
                .malformedResponse, "unexpected response body: \(error.description)", httpStatus: 200,
                endpoint: endpoint.rawValue, environment: answer.environment)
        }
    }

    static func json<T: Encodable>(_ value: T) -> Data { AppStoreJSON.encode(value) }
}

/// Reads Apple's `{"errorCode": …, "errorMessage": …}` from an error response, whatever its
/// `Content-Type` says (Apple has sent `application/json;charset=utf-8` and `text/plain`).
enum ErrorBody {
    static func parse(_ body: Data) -> ErrorPayload? {
        guard let first = body.first(where: { !($0 == 0x20 || $0 == 0x0A || $0 == 0x0D || $0 == 0x09) }),
            first == UInt8(ascii: "{")
        else { return nil }
        guard let payload = try? AppStoreJSON.decode(ErrorPayload.self, from: body) else { return nil }
        return payload.errorCode == nil && payload.errorMessage == nil ? nil : payload
    }
}
