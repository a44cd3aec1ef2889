import Foundation

/// The destination policy applied where it matters: when an endpoint is registered (a clear
/// refusal for the operator) and again before every delivery (DNS may have changed since, and
/// endpoints may predate the policy).
///
/// At delivery the host is resolved here, every address is checked, and the delivery connects
/// to a checked address (`Connection.address`, through `PinnedHTTPTransport`), `http` and
/// `https` alike: the URL keeps its host name for TLS (SNI, certificate verification) and
/// `Host`, but nothing resolves the name again between the check and the connection, so a DNS
/// server answering differently to a second lookup (rebinding) has nothing to steer. See
/// docs/server.md.
/// - Note: Immutable and `Sendable`.
public struct WebhookDestinationGuard: Sendable {
    /// Where a delivery connects: the URL as registered (normalized), whose host names TLS SNI,
    /// the certificate check and `Host`, and the checked address the connection must go to.
    /// - Note: Immutable value; `Sendable`.
    public struct Connection: Sendable, Hashable {
        public let url: URL
        public let address: IPAddress
    }

    public let policy: WebhookDestinationPolicy
    public let resolver: any HostResolver

    public init(policy: WebhookDestinationPolicy = WebhookDestinationPolicy(), resolver: any HostResolver) {
        self.policy = policy
        self.resolver = resolver
    }

    /// The default policy (nothing allowed beyond it) over the system resolver.
    public static func standard(allowList: WebhookDestinationAllowList = .none) -> WebhookDestinationGuard {
        WebhookDestinationGuard(policy: WebhookDestinationPolicy(allowList: allowList), resolver: SystemHostResolver())
    }

    /// Checks a URL an operator registers. A host name that does not resolve now is accepted:
    /// it may exist later, and every delivery checks it again.
    public func checkRegistration(_ url: String) async throws(WebhookDestinationRefusal) -> WebhookDestination {
        try WebhookDestination.refuseUnprintable(url)
        let destination = try WebhookDestination.parse(url)
        if let addresses = try? await addresses(of: destination) {
            try policy.check(destination, addresses: addresses)
        }
        return destination
    }

    /// Where to connect to deliver to `url`, every address of its host checked.
    public func connection(for url: String) async -> Result<Connection, WebhookDeliveryFailure> {
        let destination: WebhookDestination
        let addresses: [IPAddress]
        do {
            destination = try WebhookDestination.parse(url)
        } catch {
            return .failure(.destinationRefused)
        }
        do {
            addresses = try await self.addresses(of: destination)
        } catch {
            return .failure(.dnsFailed)
        }
        do {
            try policy.check(destination, addresses: addresses)
        } catch {
            return .failure(.destinationRefused)
        }
        guard let target = destination.url else { return .failure(.destinationRefused) }
        return .success(Connection(url: target, address: addresses[0]))
    }

    /// A literal is its own address; `localhost` names are loopback whatever a resolver says
    /// (RFC 6761); anything else asks the resolver. Never empty.
    func addresses(of destination: WebhookDestination) async throws(HostResolutionFailure) -> [IPAddress] {
        if let literal = destination.literalAddress { return [literal] }
        if destination.isLocalhostName { return [IPAddress("127.0.0.1")!, IPAddress("::1")!] }
        let addresses = try await resolver.resolve(destination.host)
        guard !addresses.isEmpty else { throw .notFound }
        return addresses
    }
}
