import AppStoreClient
import Foundation
import GooglePlayModels
import GooglePlayTrust

/// Access tokens for the Play Developer API, from a service-account key: a signed RS256
/// assertion POSTed to the key's `token_uri` as
/// `grant_type=urn:ietf:params:oauth:grant-type:jwt-bearer&assertion=…` (RFC 7523), the token
/// cached until `refreshMargin` before its `expires_in` ends.
///
/// Under concurrency one exchange runs at a time and every caller waiting for a token shares
/// it. Time comes from the injected `RetryClock`'s wall clock.
/// - Note: An actor; the token and the key never appear in errors or descriptions.
public actor AccessTokenProvider {
    public static let grantType = "urn:ietf:params:oauth:grant-type:jwt-bearer"

    public let key: ServiceAccountKey
    public let scope: String
    /// Tokens are renewed this long before they expire (Google's last a hour).
    public let refreshMargin: TimeInterval
    private let loop: GoogleRetryLoop

    private var cached: (token: String, expiresAt: Date)?
    private var inFlight: Task<Result<(token: String, expiresAt: Date), GooglePlayClientError>, Never>?
    /// Exchanges started so far (tests read it to see caching and sharing).
    public private(set) var exchangeCount = 0

    public init(
        key: ServiceAccountKey, scope: String = ServiceAccountAssertion.androidPublisherScope,
        transport: any HTTPTransport = URLSessionTransport(), retryPolicy: RetryPolicy = RetryPolicy(),
        clock: any RetryClock = SystemRetryClock(), refreshMargin: TimeInterval = 300
    ) {
        self.key = key
        self.scope = scope
        self.refreshMargin = refreshMargin
        self.loop = GoogleRetryLoop(
            transport: transport, policy: retryPolicy, clock: clock, maximumResponseBytes: 64 * 1024)
    }

    /// A token valid for at least `refreshMargin` more seconds.
    public func accessToken() async throws(GooglePlayClientError) -> String {
        if let cached, loop.clock.wallNow().addingTimeInterval(refreshMargin) < cached.expiresAt {
            return cached.token
        }
        let task: Task<Result<(token: String, expiresAt: Date), GooglePlayClientError>, Never>
        if let inFlight {
            task = inFlight
        } else {
            exchangeCount += 1
            let loop = self.loop
            let key = self.key
            let scope = self.scope
            task = Task {
                do throws(GooglePlayClientError) {
                    return .success(try await Self.exchange(key: key, scope: scope, loop: loop))
                } catch {
                    return .failure(error)
                }
            }
            inFlight = task
        }
        let result = await task.value
        if inFlight == task {
            inFlight = nil
            if case .success(let token) = result { cached = token }
        }
        return try result.get().token
    }

    /// Forgets the cached token (Google answered 401 with it).
    public func invalidate() { cached = nil }

    private static func exchange(key: ServiceAccountKey, scope: String, loop: GoogleRetryLoop)
        async throws(GooglePlayClientError) -> (token: String, expiresAt: Date)
    {
        let method = "oauth2.token"
        return try await loop.run(
            method: method, idempotent: true,
            makeRequest: { () throws(GooglePlayClientError) -> HTTPTransportRequest in
                let assertion: String
                do throws(GooglePlayTrustError) {
                    assertion = try ServiceAccountAssertion.sign(key: key, scope: scope, now: loop.clock.wallNow())
                } catch {
                    throw GooglePlayClientError(
                        .assertionSigningFailed, "cannot sign the service-account assertion: \(error.rule.rawValue)",
                        method: method)
                }
                let body =
                    "grant_type=" + FormEncoding.encode(grantType) + "&assertion=" + FormEncoding.encode(assertion)
                return HTTPTransportRequest(
                    method: "POST", url: key.tokenURI,
                    headers: [
                        ("Content-Type", "application/x-www-form-urlencoded"), ("Accept", "application/json"),
                    ], body: Data(body.utf8))
            },
            refreshCredentials: {},
            verdict: { response in
                let now = loop.clock.wallNow()
                guard (200..<300).contains(response.status) else {
                    let body = try? JSONDecoder().decode(OAuthErrorResponse.self, from: response.body)
                    let error = GooglePlayClientError(
                        .tokenRefused, "the token endpoint answered HTTP \(response.status)",
                        httpStatus: response.status, oauthError: body?.error, googleMessage: body?.errorDescription,
                        method: method)
                    if response.status == 429 || response.status >= 500 {
                        return .retry(
                            error, retryAfter: GoogleRetryAfter.parse(response.header("retry-after"), now: now))
                    }
                    return .fail(error)
                }
                guard let token = try? JSONDecoder().decode(OAuthTokenResponse.self, from: response.body),
                    !token.accessToken.isEmpty, token.expiresIn > 0, token.accessToken.utf8.count <= 4096
                else {
                    return .fail(
                        GooglePlayClientError(
                            .malformedResponse, "the token endpoint's answer has no access_token and expires_in",
                            httpStatus: response.status, method: method))
                }
                return .success((token.accessToken, now.addingTimeInterval(TimeInterval(token.expiresIn))))
            })
    }
}

/// `application/x-www-form-urlencoded` values: everything but unreserved characters escaped.
enum FormEncoding {
    static let unreserved = CharacterSet(
        charactersIn: "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-._~")

    static func encode(_ value: String) -> String {
        value.addingPercentEncoding(withAllowedCharacters: unreserved) ?? ""
    }
}
