import AppStoreClient

/// Why a delivery attempt failed, as the category stored in the outbox's `last_error` and shown
/// by the failed-deliveries listing: never the transport's own text, which may carry
/// addresses, ports or resolver answers (the listing must not become a network scanner).
/// - Note: Immutable value; `Sendable`.
public enum WebhookDeliveryFailure: Error, Sendable, Hashable {
    /// The URL or an address its host resolves to is refused by the destination policy; the
    /// endpoint was not contacted.
    case destinationRefused
    /// The host name did not resolve.
    case dnsFailed
    /// No complete answer within the request timeout.
    case timeout
    /// The connection was refused, reset or lost.
    case connectionFailed
    /// The TLS handshake failed (certificate, protocol).
    case tlsFailed
    /// The answer's body exceeded the limit.
    case responseTooLarge
    /// The worker stopped during the attempt.
    case cancelled
    /// Anything else the transport reported.
    case transportFailed
    /// The endpoint answered with a status outside 2xx.
    case httpStatus(Int)
    /// The endpoint's sealed signing secret cannot be opened with this server's secrets key;
    /// nothing was sent.
    case signingSecretUnavailable

    public var category: String {
        switch self {
        case .destinationRefused: "destination_refused"
        case .dnsFailed: "dns_failed"
        case .timeout: "timeout"
        case .connectionFailed: "connection_failed"
        case .tlsFailed: "tls_failed"
        case .responseTooLarge: "response_too_large"
        case .cancelled: "cancelled"
        case .transportFailed: "transport_failed"
        case .httpStatus(let status): "http_status_\(status)"
        case .signingSecretUnavailable: "signing_secret_unavailable"
        }
    }

    init(_ failure: HTTPTransportFailure) {
        if failure.isTLSFailure {
            self = .tlsFailed
            return
        }
        switch failure.kind {
        case .timedOut: self = .timeout
        case .notConnected: self = .connectionFailed
        case .connectionLost: self = .connectionFailed
        case .responseTooLarge: self = .responseTooLarge
        case .cancelled: self = .cancelled
        case .other: self = .transportFailed
        }
    }

    /// What the admin listing shows for a stored `last_error`: a category as stored (lower-case
    /// letters, digits and `_`), the category of a status written by earlier versions
    /// (`HTTP 503`), or `delivery_failed` for any other text.
    public static func listedCategory(_ stored: String) -> String {
        let isCategory =
            (1...64).contains(stored.utf8.count)
            && stored.utf8.allSatisfy { ($0 >= 0x61 && $0 <= 0x7a) || ($0 >= 0x30 && $0 <= 0x39) || $0 == 0x5f }
        if isCategory { return stored }
        if stored.hasPrefix("HTTP "), let status = Int(stored.dropFirst(5)), (100...999).contains(status) {
            return WebhookDeliveryFailure.httpStatus(status).category
        }
        return "delivery_failed"
    }
}
