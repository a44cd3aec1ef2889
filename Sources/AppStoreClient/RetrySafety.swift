/// Whether a request may be sent again when its outcome is unknown.
///
/// - `idempotent`: repeating it has the same effect as sending it once (reads, and `PUT`/
///   `DELETE` that set or remove a whole resource). Retried on 429, 5xx, Apple's retryable
///   error codes, timeouts and lost connections.
/// - `notIdempotent`: a repeat may act twice (another test notification, another extension,
///   a duplicate upload). Retried only when Apple provably did not process it: 429
///   (rate-limited before processing), 401 answered before processing (retried once with a
///   fresh token) and connection failures before the request left this process.
public enum RetrySafety: String, Sendable, Hashable {
    case idempotent
    case notIdempotent
}
