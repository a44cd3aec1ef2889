import Foundation

/// A webhook endpoint URL taken apart: what to connect to and what to tell the server.
///
/// Built only by `WebhookDestination.parse`, which refuses what no policy may allow: other
/// schemes, a missing host, a port out of range, credentials in the URL, IPv6 zone ids and
/// hosts that are neither an address nor a plain ASCII name.
/// - Note: Immutable value; `Sendable`.
public struct WebhookDestination: Sendable, Hashable {
    /// `http` or `https`.
    public let scheme: String
    /// Lower case, without IPv6 brackets or a trailing dot.
    public let host: String
    public let port: Int
    /// Set when the host is an address literal in standard notation.
    public let literalAddress: IPAddress?
    /// The `Host` header: the host as written in the URL (brackets kept), with a non-default port.
    public let hostHeader: String
    /// The percent-encoded path (at least `/`) and query.
    public let pathAndQuery: String

    /// The longest URL accepted.
    public static let maximumURLLength = 2048

    /// The URL as registered, normalized: what a delivery requests (its host names TLS SNI, the
    /// certificate check and `Host`) while connecting to a checked address.
    public var url: URL? { URL(string: "\(scheme)://\(hostHeader)\(pathAndQuery)") }

    /// Parses and checks the parts of `text` that do not depend on where the host resolves.
    public static func parse(_ text: String) throws(WebhookDestinationRefusal) -> WebhookDestination {
        guard text.utf8.count <= maximumURLLength, let components = URLComponents(string: text),
            let scheme = components.scheme?.lowercased(), scheme == "http" || scheme == "https"
        else {
            throw WebhookDestinationRefusal(
                rule: "destination.invalidURL", reason: "url must be an absolute http or https URL")
        }
        if components.percentEncodedUser != nil || components.percentEncodedPassword != nil {
            throw WebhookDestinationRefusal(
                rule: "destination.credentials",
                reason: "url must not carry credentials; authenticate webhooks by their signature")
        }
        guard var host = components.percentEncodedHost, !host.isEmpty else {
            throw WebhookDestinationRefusal(rule: "destination.invalidURL", reason: "url must name a host")
        }
        let bracketed = host.hasPrefix("[") && host.hasSuffix("]")
        if bracketed { host = String(host.dropFirst().dropLast()) }
        host = host.lowercased()
        if !bracketed && host.hasSuffix(".") { host.removeLast() }
        let literal = IPAddress(host)
        let wellFormed = bracketed ? literal.map { !$0.isIPv4 } ?? false : literal != nil || isPlainHostName(host)
        guard wellFormed else {
            throw WebhookDestinationRefusal(
                rule: "destination.invalidURL",
                reason: "the host must be an IP address or an ASCII host name (IDN as xn--, no zone id)")
        }
        let defaultPort = scheme == "https" ? 443 : 80
        let port = components.port ?? defaultPort
        guard (1...65_535).contains(port) else {
            throw WebhookDestinationRefusal(rule: "destination.invalidURL", reason: "the port must be 1 to 65535")
        }
        let writtenHost = bracketed ? "[\(host)]" : host
        var pathAndQuery = components.percentEncodedPath.isEmpty ? "/" : components.percentEncodedPath
        if let query = components.percentEncodedQuery { pathAndQuery += "?" + query }
        return WebhookDestination(
            scheme: scheme, host: host, port: port, literalAddress: literal,
            hostHeader: port == defaultPort ? writtenHost : "\(writtenHost):\(port)", pathAndQuery: pathAndQuery)
    }

    /// A URL being registered holds no space or control character: Foundation's parser lets them
    /// through into the path (RFC 3986 allows neither; a NUL cannot even be stored). Checked at
    /// registration only, so that an endpoint registered before keeps its deliveries.
    static func refuseUnprintable(_ text: String) throws(WebhookDestinationRefusal) {
        if text.utf8.contains(where: { $0 <= 0x20 || $0 == 0x7F }) {
            throw WebhookDestinationRefusal(
                rule: "destination.invalidURL", reason: "url must not contain spaces or control characters")
        }
    }

    /// Letters, digits, `-`, `_` and dots between non-empty labels; at most 253 characters.
    static func isPlainHostName(_ host: String) -> Bool {
        guard host.utf8.count <= 253 else { return false }
        let labels = host.split(separator: ".", omittingEmptySubsequences: false)
        return labels.allSatisfy { label in
            (1...63).contains(label.utf8.count)
                && label.utf8.allSatisfy { byte in
                    (byte >= 0x61 && byte <= 0x7a) || (byte >= 0x30 && byte <= 0x39) || byte == 0x2d || byte == 0x5f
                }
        }
    }

    /// `localhost` and its subdomains always mean this machine (RFC 6761), whatever DNS says.
    var isLocalhostName: Bool { host == "localhost" || host.hasSuffix(".localhost") }
}
