import AppStoreModels
import Foundation
import Synchronization

/// Settings of the legacy `verifyReceipt` client.
/// - Note: Immutable value; `Sendable`. `description` of the secret is never printed.
public struct VerifyReceiptConfiguration: Sendable {
    public static let productionURL = URL(string: "https://buy.itunes.apple.com/verifyReceipt")!
    public static let sandboxURL = URL(string: "https://sandbox.itunes.apple.com/verifyReceipt")!

    public var productionURL: URL
    public var sandboxURL: URL
    /// The app-specific (or primary) shared secret; required for auto-renewable subscriptions.
    public var sharedSecret: String?
    /// Default for `exclude-old-transactions` when a call does not say.
    public var excludeOldTransactions: Bool
    public var retry: RetryPolicy
    public var maxConcurrentRequests: Int
    public var requestTimeout: Duration
    /// Receipts of long-lived subscribers run to megabytes; Apple's answer is larger still.
    public var maximumResponseBytes: Int

    public init(
        sharedSecret: String? = nil, excludeOldTransactions: Bool = false,
        productionURL: URL = VerifyReceiptConfiguration.productionURL,
        sandboxURL: URL = VerifyReceiptConfiguration.sandboxURL,
        retry: RetryPolicy = RetryPolicy(), maxConcurrentRequests: Int = 8, requestTimeout: Duration = .seconds(30),
        maximumResponseBytes: Int = 32 << 20
    ) {
        self.sharedSecret = sharedSecret
        self.excludeOldTransactions = excludeOldTransactions
        self.productionURL = productionURL
        self.sandboxURL = sandboxURL
        self.retry = retry
        self.maxConcurrentRequests = max(1, maxConcurrentRequests)
        self.requestTimeout = requestTimeout
        self.maximumResponseBytes = max(1, maximumResponseBytes)
    }
}

/// A successful verifyReceipt answer (status 0, or 21006 for an expired iOS 6 style
/// subscription receipt) and which environment gave it.
/// - Note: Immutable value; `Sendable`.
public struct VerifyReceiptResult: Sendable {
    /// The environment whose URL answered (after any 21007/21008 redirection).
    public let environment: AppStoreEnvironment
    public let status: VerifyReceiptStatus
    public let response: VerifyReceiptResponseBody
    /// `latest_receipt_info` sorted by purchase date here, oldest first: Apple's order is
    /// not something to rely on.
    public let latestReceiptInfo: [LegacyInAppPurchase]
    /// Requests sent, both environments and retries counted.
    public let attempts: Int
}

/// The deprecated `verifyReceipt` endpoint, for apps still on StoreKit 1.
///
/// Posts to production first; 21007 (a sandbox receipt) is re-sent to the sandbox, 21008 (a
/// production receipt sent to the sandbox) to production, once each way. 21005, 21009 and
/// 21100–21199 (or Apple's `is-retryable`) are retried with backoff, as are 429, 5xx and
/// network failures: verifyReceipt only reads, so every retry is safe. 21004 is a
/// configuration error (our shared secret), 21002/21003/21010 a receipt that cannot be used.
/// - Note: Thread-safe: immutable configuration and an actor limiter.
public final class VerifyReceiptClient: Sendable {
    public let configuration: VerifyReceiptConfiguration
    let executor: RetryingExecutor

    public init(
        configuration: VerifyReceiptConfiguration, transport: any HTTPTransport = URLSessionTransport(),
        clock: any RetryClock = SystemRetryClock()
    ) {
        self.configuration = configuration
        executor = RetryingExecutor(
            transport: transport, policy: configuration.retry, clock: clock,
            limiter: ConcurrencyLimiter(limit: configuration.maxConcurrentRequests),
            maximumResponseBytes: configuration.maximumResponseBytes)
    }

    /// Verifies base64 receipt data.
    /// - Parameter startingEnvironment: where to post first; production unless the caller
    ///   already knows the receipt is a sandbox one (a 21008 then sends it to production).
    public func verify(
        receiptData: String, excludeOldTransactions: Bool? = nil, startingEnvironment: AppStoreEnvironment = .production
    ) async throws(AppStoreClientError) -> VerifyReceiptResult {
        let requestBody = VerifyReceiptRequestBody(
            receiptData: receiptData, password: configuration.sharedSecret,
            excludeOldTransactions: excludeOldTransactions ?? configuration.excludeOldTransactions)
        let body = AppStoreJSON.encode(requestBody)
        var environment: AppStoreEnvironment = startingEnvironment == .sandbox ? .sandbox : .production
        var attempts = 0
        var redirected = false
        while true {
            let url = environment == .production ? configuration.productionURL : configuration.sandboxURL
            let (response, used) = try await post(body, to: url, environment: environment, attemptsSoFar: attempts)
            attempts = used
            let status = response.status ?? VerifyReceiptStatus(rawValue: -1)
            func failure(_ code: AppStoreClientError.Code, _ detail: String) -> AppStoreClientError {
                AppStoreClientError(
                    code, detail, httpStatus: 200, receiptStatus: status, endpoint: "verifyReceipt",
                    environment: environment, attempts: attempts)
            }
            switch status.kind {
            case .valid, .validButSubscriptionExpired:
                return VerifyReceiptResult(
                    environment: environment, status: status, response: response,
                    latestReceiptInfo: (response.latestReceiptInfo ?? []).sortedByPurchaseDate(), attempts: attempts)
            case .sandboxReceiptSentToProduction where environment == .production && !redirected:
                environment = .sandbox
                redirected = true
            case .productionReceiptSentToSandbox where environment == .sandbox && !redirected:
                environment = .production
                redirected = true
            case .sandboxReceiptSentToProduction, .productionReceiptSentToSandbox:
                throw failure(
                    .receiptBadRequest,
                    "Apple sent the receipt back and forth between production and sandbox: \(status.meaning)")
            case .configurationError:
                throw failure(
                    .receiptSharedSecretMismatch,
                    "configuration error: the shared secret does not match the app's; set the app-specific shared secret from App Store Connect (\(status.meaning))"
                )
            case .badReceipt:
                throw failure(.receiptInvalid, "the receipt cannot be used: \(status.meaning)")
            case .badRequest:
                throw failure(.receiptBadRequest, status.meaning)
            case .retryable:
                // `post` only returns a retryable status once its retries are used up.
                throw failure(
                    .receiptServiceUnavailable,
                    "Apple could not verify the receipt now, retries used up: \(status.meaning)")
            case .unknown:
                throw failure(.receiptUnknownStatus, "status \(status.rawValue) is not one Apple documents")
            }
        }
    }

    /// One environment, retried; returns the decoded body (maybe a retryable status when the
    /// budget ran out) and the attempts used so far.
    private func post(_ body: Data, to url: URL, environment: AppStoreEnvironment, attemptsSoFar: Int)
        async throws(AppStoreClientError) -> (VerifyReceiptResponseBody, Int)
    {
        let timeout = configuration.requestTimeout
        let maxAttempts = configuration.retry.maxAttempts
        // The executor counts attempts itself; mirror it so a give-up on a retryable *status*
        // (which arrives as HTTP 200) still reports how many requests were made.
        let counter = AttemptCounter()
        return try await executor.run(
            endpoint: "verifyReceipt", environment: environment, safety: .idempotent, attemptsSoFar: attemptsSoFar,
            makeRequest: { () throws(AppStoreClientError) -> HTTPTransportRequest in
                counter.increment()
                return HTTPTransportRequest(
                    method: "POST", url: url,
                    headers: [("Content-Type", "application/json"), ("Accept", "application/json")],
                    body: body, timeout: timeout)
            },
            refreshCredentials: {},
            verdict: { response -> AttemptVerdict<(VerifyReceiptResponseBody, Int)> in
                let attempts = attemptsSoFar + counter.value
                guard (200..<300).contains(response.status) else {
                    let transient = response.status == 429 || response.status >= 500
                    let error = AppStoreClientError(
                        transient ? .receiptServiceUnavailable : .receiptBadRequest,
                        "verifyReceipt answered HTTP \(response.status)", httpStatus: response.status,
                        endpoint: "verifyReceipt", environment: environment, attempts: attempts)
                    guard transient else { return .fail(error) }
                    let after = RetryAfter.parse(response.header("Retry-After"), now: executor.clock.wallNow())
                    return .retry(error, retryAfter: after, requiresIdempotent: false)
                }
                let decoded: VerifyReceiptResponseBody
                do throws(ModelDecodingError) {
                    decoded = try AppStoreJSON.decode(VerifyReceiptResponseBody.self, from: response.body)
                } catch {
                    return .fail(
                        AppStoreClientError(
                            .malformedResponse, "verifyReceipt body: \(error.description)", httpStatus: response.status,
                            endpoint: "verifyReceipt", environment: environment, attempts: attempts))
                }
                let status = decoded.status ?? VerifyReceiptStatus(rawValue: -1)
                let retryable = status.isRetryable || (decoded.isRetryable == true && status.rawValue != 0)
                if retryable, counter.value < maxAttempts {
                    return .retry(
                        AppStoreClientError(
                            .receiptServiceUnavailable, status.meaning, httpStatus: 200, receiptStatus: status,
                            endpoint: "verifyReceipt", environment: environment, attempts: attempts),
                        retryAfter: nil, requiresIdempotent: false)
                }
                return .success((decoded, attempts))
            })
    }
}

/// Counts the requests of one `post` call from inside the executor's non-escaping closures.
/// - Note: Thread-safe: the count sits behind a `Mutex`.
private final class AttemptCounter: Sendable {
    private let count = Mutex(0)
    func increment() { count.withLock { $0 += 1 } }
    var value: Int { count.withLock { $0 } }
}
