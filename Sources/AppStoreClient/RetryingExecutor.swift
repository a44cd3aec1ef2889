import AppStoreModels
import Foundation

/// What one HTTP answer means for the retry loop.
enum AttemptVerdict<Value: Sendable>: Sendable {
    case success(Value)
    /// Worth another attempt; `requiresIdempotent` when Apple may have processed the request.
    case retry(AppStoreClientError, retryAfter: Duration?, requiresIdempotent: Bool)
    /// Apple refused the credentials; one more attempt with a freshly signed token.
    case refreshCredentials(AppStoreClientError)
    case fail(AppStoreClientError)
}

/// The retry loop shared by the Server API and verifyReceipt clients: sends through the
/// concurrency limiter, classifies the answer with the caller's verdict function, pauses with
/// backoff (or Apple's `Retry-After`) and stops at the attempt or time budget.
/// - Note: Immutable; `Sendable`.
struct RetryingExecutor: Sendable {
    let transport: any HTTPTransport
    let policy: RetryPolicy
    let clock: any RetryClock
    let limiter: ConcurrencyLimiter
    let maximumResponseBytes: Int

    /// Runs one call. `attemptsSoFar` carries attempts of an earlier environment (fallback).
    func run<Value: Sendable>(
        endpoint: String, environment: AppStoreEnvironment?, safety: RetrySafety, attemptsSoFar: Int = 0,
        makeRequest: () throws(AppStoreClientError) -> HTTPTransportRequest,
        refreshCredentials: () -> Void,
        verdict: (HTTPTransportResponse) -> AttemptVerdict<Value>
    ) async throws(AppStoreClientError) -> Value {
        let start = clock.monotonicNow()
        var attempt = 0
        var refreshed = false
        while true {
            if Task.isCancelled {
                throw AppStoreClientError(
                    .cancelled, "cancelled before sending", endpoint: endpoint, environment: environment,
                    attempts: attemptsSoFar + attempt)
            }
            attempt += 1
            let request = try makeRequest()
            await limiter.acquire()
            let outcome: Result<HTTPTransportResponse, HTTPTransportFailure>
            do {
                outcome = .success(try await transport.send(request, maximumResponseBytes: maximumResponseBytes))
            } catch {
                outcome = .failure(error)
            }
            await limiter.release()
            let total = attemptsSoFar + attempt

            let failure: AppStoreClientError
            var retryAfter: Duration?
            var retryable: Bool
            switch outcome {
            case .success(let response):
                switch verdict(response) {
                case .success(let value):
                    return value
                case .fail(let error):
                    throw error.with(attempts: total)
                case .refreshCredentials(let error):
                    guard !refreshed else { throw error.with(attempts: total) }
                    // A 401 is answered before processing, so any endpoint may repeat it once.
                    refreshed = true
                    refreshCredentials()
                    attempt -= 1  // the refresh attempt does not use up the retry budget
                    continue
                case .retry(let error, let after, let requiresIdempotent):
                    failure = error
                    retryAfter = after
                    retryable = !requiresIdempotent || safety == .idempotent
                }
            case .failure(let transportFailure):
                switch transportFailure.kind {
                case .responseTooLarge:
                    throw AppStoreClientError(
                        .responseTooLarge, "response body is larger than \(maximumResponseBytes) bytes",
                        endpoint: endpoint, environment: environment, attempts: total)
                case .cancelled:
                    throw AppStoreClientError(
                        .cancelled, "cancelled while waiting for Apple", endpoint: endpoint, environment: environment,
                        attempts: total)
                case .notConnected:
                    retryable = true
                case .timedOut, .connectionLost, .other:
                    retryable = safety == .idempotent
                }
                var detail = "no response from \(request.url.host ?? "server"): \(transportFailure)"
                if !retryable {
                    detail += "; not retried because \(endpoint) is not idempotent and Apple may have processed it"
                }
                failure = AppStoreClientError(
                    .transportFailed, detail, endpoint: endpoint, environment: environment, attempts: total)
            }

            guard retryable else { throw failure.with(attempts: total) }
            guard attempt < policy.maxAttempts else {
                throw failure.with(
                    attempts: total, detail: failure.detail + "; gave up after \(attempt) attempts",
                    retryAfter: retryAfter)
            }
            let pause = retryAfter ?? policy.backoff(beforeRetry: attempt)
            let elapsed = clock.monotonicNow() - start
            guard elapsed + pause <= policy.maxTotalTime else {
                let reason = retryAfter != nil ? "Apple asked to retry after \(pause)" : "the next pause of \(pause)"
                throw failure.with(
                    attempts: total,
                    detail: failure.detail + "; gave up: \(reason) would exceed the \(policy.maxTotalTime) budget",
                    retryAfter: retryAfter)
            }
            do {
                try await clock.sleep(for: pause)
            } catch {
                throw AppStoreClientError(
                    .cancelled, "cancelled during backoff", endpoint: endpoint, environment: environment,
                    attempts: total)
            }
        }
    }
}
