import AppStoreClient
import Foundation

/// What one HTTP answer means for the retry loop.
enum GoogleAttemptVerdict<Value: Sendable>: Sendable {
    case success(Value)
    /// Worth another attempt (429, 5xx), after `retryAfter` when Google said so.
    case retry(GooglePlayClientError, retryAfter: Duration?)
    /// The access token was refused: one more attempt with a fresh one.
    case refreshCredentials(GooglePlayClientError)
    case fail(GooglePlayClientError)
}

/// The retry loop of every call to Google: exponential backoff with jitter (`RetryPolicy`),
/// `Retry-After` honoured, bounded by attempts and total time. Transport failures are retried
/// when the request never left (`notConnected`) or the method is `idempotent`.
/// - Note: Immutable; `Sendable`.
struct GoogleRetryLoop: Sendable {
    let transport: any HTTPTransport
    let policy: RetryPolicy
    let clock: any RetryClock
    let maximumResponseBytes: Int

    func run<Value: Sendable>(
        method: String, idempotent: Bool,
        makeRequest: () async throws(GooglePlayClientError) -> HTTPTransportRequest,
        refreshCredentials: () async -> Void,
        verdict: (HTTPTransportResponse) -> GoogleAttemptVerdict<Value>
    ) async throws(GooglePlayClientError) -> Value {
        let start = clock.monotonicNow()
        var attempt = 0
        var refreshed = false
        while true {
            if Task.isCancelled {
                throw GooglePlayClientError(.cancelled, "cancelled before sending", method: method, attempts: attempt)
            }
            attempt += 1
            let request = try await makeRequest()
            let failure: GooglePlayClientError
            var retryAfter: Duration?
            let outcome: Result<HTTPTransportResponse, HTTPTransportFailure>
            do {
                outcome = .success(try await transport.send(request, maximumResponseBytes: maximumResponseBytes))
            } catch {
                outcome = .failure(error)
            }
            switch outcome {
            case .success(let response):
                switch verdict(response) {
                case .success(let value): return value
                case .fail(let error): throw error.with(attempts: attempt)
                case .refreshCredentials(let error):
                    guard !refreshed else { throw error.with(attempts: attempt) }
                    // A 401 is answered before any processing: repeating it once is safe.
                    refreshed = true
                    await refreshCredentials()
                    attempt -= 1
                    continue
                case .retry(let error, let after):
                    failure = error
                    retryAfter = after
                }
            case .failure(let transportFailure):
                switch transportFailure.kind {
                case .responseTooLarge:
                    throw GooglePlayClientError(
                        .responseTooLarge, "response body is larger than \(maximumResponseBytes) bytes",
                        method: method, attempts: attempt)
                case .cancelled:
                    throw GooglePlayClientError(
                        .cancelled, "cancelled while waiting for Google", method: method, attempts: attempt)
                case .notConnected: break
                case .timedOut, .connectionLost, .other:
                    guard idempotent else {
                        throw GooglePlayClientError(
                            .transportFailed,
                            "no response (\(transportFailure.kind.rawValue)); not retried: Google may have processed it",
                            method: method, attempts: attempt)
                    }
                }
                failure = GooglePlayClientError(
                    .transportFailed, "no response from \(request.url.host ?? "Google"): \(transportFailure)",
                    method: method, attempts: attempt)
            }
            guard attempt < policy.maxAttempts else {
                throw failure.with(
                    attempts: attempt, detail: failure.detail + "; gave up after \(attempt) attempts",
                    retryAfter: retryAfter)
            }
            let pause = retryAfter ?? policy.backoff(beforeRetry: attempt)
            guard clock.monotonicNow() - start + pause <= policy.maxTotalTime else {
                throw failure.with(
                    attempts: attempt,
                    detail: failure.detail + "; gave up: a pause of \(pause) would exceed \(policy.maxTotalTime)",
                    retryAfter: retryAfter)
            }
            do {
                try await clock.sleep(for: pause)
            } catch {
                throw GooglePlayClientError(.cancelled, "cancelled during backoff", method: method, attempts: attempt)
            }
        }
    }

    /// The verdict for a non-2xx answer of a Google API: Google's error shape read when present.
    static func apiFailure<Value: Sendable>(_ response: HTTPTransportResponse, method: String, now: Date)
        -> GoogleAttemptVerdict<Value>
    {
        let body = try? JSONDecoder().decode(GoogleErrorBody.self, from: response.body)
        let error = GooglePlayClientError(
            .apiError, "Google answered HTTP \(response.status)", httpStatus: response.status,
            googleStatus: body?.error.status, googleMessage: body?.error.message, method: method)
        switch response.status {
        case 401: return .refreshCredentials(error)
        case 429, 500...599:
            return .retry(error, retryAfter: GoogleRetryAfter.parse(response.header("retry-after"), now: now))
        default: return .fail(error)
        }
    }
}

/// Google's error shape, read leniently (only what the error reports).
struct GoogleErrorBody: Decodable {
    struct Inner: Decodable {
        var status: String?
        var message: String?
    }
    var error: Inner
}

/// `Retry-After` as delay-seconds or an HTTP-date (RFC 9110 §10.2.3), capped at an hour.
enum GoogleRetryAfter {
    static func parse(_ value: String?, now: Date) -> Duration? {
        guard let value = value?.trimmingCharacters(in: .whitespaces), !value.isEmpty else { return nil }
        if let seconds = Int64(value) { return .seconds(min(max(0, seconds), 3600)) }
        let formatter = DateFormatter()
        formatter.locale = Locale(identifier: "en_US_POSIX")
        formatter.timeZone = TimeZone(identifier: "GMT")
        formatter.dateFormat = "EEE, dd MMM yyyy HH:mm:ss zzz"
        guard let date = formatter.date(from: value) else { return nil }
        let interval = min(max(0, date.timeIntervalSince(now)), 3600)
        return .milliseconds(Int64((interval * 1000).rounded(.up)))
    }
}
