import AppStoreModels
import Foundation

/// Why a call to the App Store Server API or to `verifyReceipt` failed.
///
/// `code` is stable (log it, alert on it, map it to an exit code or HTTP status at the edge).
/// When Apple answered, `httpStatus`, `apiError` (typed through `.value`, raw through
/// `.rawValue`) and Apple's `appleMessage` say what Apple said; `attempts` says how many
/// requests were made before giving up. Descriptions never contain the bearer token, the shared
/// secret or receipt data.
/// - Note: Immutable value; `Sendable`.
public struct AppStoreClientError: Error, Sendable, CustomStringConvertible {
    /// The stable identifier of a failure class.
    public enum Code: String, Sendable, Hashable, CaseIterable {
        /// Apple answered with an HTTP error status (see `httpStatus`, `apiError`).
        case apiError = "appstore.apiError"
        /// No usable HTTP response: connection refused, timed out, reset.
        case transportFailed = "appstore.transportFailed"
        /// The response body exceeded the configured limit; it was not read further.
        case responseTooLarge = "appstore.responseTooLarge"
        /// A 2xx body that is not the JSON Apple documents (or pagination that does not advance).
        case malformedResponse = "appstore.malformedResponse"
        /// A signed item in a response failed verification by the `SignedDataVerifier`.
        case signedDataRejected = "appstore.signedDataRejected"
        /// The API bearer token could not be signed.
        case tokenSigningFailed = "appstore.tokenSigningFailed"
        /// The client configuration cannot work (environment without URL, bad limits, …).
        case invalidConfiguration = "appstore.invalidConfiguration"
        /// The caller's arguments cannot form a valid request.
        case invalidRequest = "appstore.invalidRequest"
        /// The calling task was cancelled.
        case cancelled = "appstore.cancelled"
        /// verifyReceipt 21002, 21003, 21010: the receipt cannot be used.
        case receiptInvalid = "receipt.invalid"
        /// verifyReceipt 21004: the shared secret in our configuration is wrong.
        case receiptSharedSecretMismatch = "receipt.sharedSecretMismatch"
        /// verifyReceipt 21005, 21009, 21100–21199 still failing after the retries.
        case receiptServiceUnavailable = "receipt.serviceUnavailable"
        /// verifyReceipt 21000, 21001, or a 21007/21008 loop: the request itself is wrong.
        case receiptBadRequest = "receipt.badRequest"
        /// A verifyReceipt status Apple never documented.
        case receiptUnknownStatus = "receipt.unknownStatus"
    }

    public let code: Code
    /// The HTTP status of Apple's answer, when there was one.
    public let httpStatus: Int?
    /// Apple's `errorCode`; `apiError?.value` is nil for a code this build does not know.
    public let apiError: RawEnum<APIError>?
    /// Apple's `errorMessage`, verbatim.
    public let appleMessage: String?
    /// The legacy `status` for verifyReceipt failures.
    public let receiptStatus: VerifyReceiptStatus?
    /// The endpoint (`AppStoreServerAPIEndpoint.rawValue` or `verifyReceipt`).
    public let endpoint: String?
    /// The environment whose server gave the final answer.
    public let environment: AppStoreEnvironment?
    /// Requests sent for this call (all environments), 0 when none was sent.
    public let attempts: Int
    /// What happened, for humans; never contains secrets.
    public let detail: String
    /// How long Apple asked us to wait (its `Retry-After`) when the call gave up on a 429 or a
    /// retryable error: a shared rate limiter holds the endpoint back that long.
    public internal(set) var retryAfter: Duration?

    public init(
        _ code: Code, _ detail: String, httpStatus: Int? = nil, apiError: RawEnum<APIError>? = nil,
        appleMessage: String? = nil, receiptStatus: VerifyReceiptStatus? = nil, endpoint: String? = nil,
        environment: AppStoreEnvironment? = nil, attempts: Int = 0
    ) {
        self.code = code
        self.detail = detail
        self.httpStatus = httpStatus
        self.apiError = apiError
        self.appleMessage = appleMessage
        self.receiptStatus = receiptStatus
        self.endpoint = endpoint
        self.environment = environment
        self.attempts = attempts
    }

    /// Apple's raw error number (kept even when this build does not know it).
    public var rawAPIErrorCode: Int64? { apiError?.rawValue }
    /// Apple's error as a typed case, nil when absent or unknown to this build.
    public var typedAPIError: APIError? { apiError?.value }

    /// Whether the same call may succeed later without any change on our side (a job queue
    /// uses this to reschedule instead of dead-lettering).
    public var isTransient: Bool {
        switch code {
        case .transportFailed, .receiptServiceUnavailable: return true
        case .apiError:
            if httpStatus == 429 { return true }
            if let status = httpStatus, status >= 500 { return true }
            return apiError?.value?.isRetryable ?? false
        default: return false
        }
    }

    public var description: String {
        var parts = ["\(code.rawValue)"]
        if let endpoint { parts.append("endpoint=\(endpoint)") }
        if let environment { parts.append("environment=\(environment.rawValue)") }
        if let httpStatus { parts.append("http=\(httpStatus)") }
        if let apiError {
            parts.append("apiError=\(apiError.rawValue)" + (apiError.value.map { "(\($0))" } ?? "(unknown)"))
        }
        if let receiptStatus { parts.append("status=\(receiptStatus.rawValue)") }
        if attempts > 1 { parts.append("attempts=\(attempts)") }
        var text = parts.joined(separator: " ") + ": " + detail
        if let appleMessage, !appleMessage.isEmpty { text += " (Apple: \(appleMessage))" }
        return text
    }

    func with(
        attempts: Int? = nil, detail: String? = nil, environment: AppStoreEnvironment? = nil,
        retryAfter: Duration? = nil
    ) -> AppStoreClientError {
        var copy = AppStoreClientError(
            code, detail ?? self.detail, httpStatus: httpStatus, apiError: apiError, appleMessage: appleMessage,
            receiptStatus: receiptStatus, endpoint: endpoint, environment: environment ?? self.environment,
            attempts: attempts ?? self.attempts)
        copy.retryAfter = retryAfter ?? self.retryAfter
        return copy
    }
}
