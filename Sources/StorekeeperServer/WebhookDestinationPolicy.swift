/// Where webhooks may go: not to this machine, the local network, the cloud's metadata service
/// or any other special-purpose network, unless the server's allow-list says so. Each refused
/// network is a named rule with a stable code (`destination.loopback`, …); the first that
/// matches an address refuses it.
///
/// An address is checked as it is and, when it is an IPv6 address standing for an IPv4 one
/// (IPv4-mapped `::ffff:127.0.0.1`, NAT64, 6to4), as that IPv4 address too. A destination is
/// allowed only when every address its host resolves to is: a connection may use any of them.
/// - Note: Immutable value; `Sendable`.
public struct WebhookDestinationPolicy: Sendable, Hashable {
    /// A refused special-purpose network (RFC 6890 and its IPv6 counterparts).
    /// - Note: Immutable value; `Sendable`.
    public struct Rule: Sendable, Hashable {
        public let code: String
        /// What an address in it is, for the refusal's message.
        public let reason: String
        public let ranges: [IPAddressRange]

        init(_ code: String, _ reason: String, _ ranges: [String]) {
            self.code = code
            self.reason = reason
            self.ranges = ranges.map { IPAddressRange($0)! }
        }
    }

    /// In order: the first match names the refusal.
    public static let rules: [Rule] = [
        Rule("destination.loopback", "a loopback address", ["127.0.0.0/8", "::1/128"]),
        Rule("destination.unspecified", "an unspecified (this-host) address", ["0.0.0.0/8", "::/128"]),
        Rule(
            "destination.linkLocal", "a link-local address (where cloud metadata services answer)",
            ["169.254.0.0/16", "fe80::/10"]),
        Rule(
            "destination.private", "a private-network address",
            ["10.0.0.0/8", "172.16.0.0/12", "192.168.0.0/16", "fc00::/7", "fec0::/10"]),
        Rule("destination.sharedAddressSpace", "a carrier-grade NAT address", ["100.64.0.0/10"]),
        Rule(
            "destination.multicast", "a multicast or broadcast address",
            ["224.0.0.0/4", "255.255.255.255/32", "ff00::/8"]),
        Rule(
            "destination.reserved", "a reserved or special-purpose address",
            [
                "192.0.0.0/24", "198.18.0.0/15", "240.0.0.0/4", "::/96", "64:ff9b:1::/48", "100::/64",
                "2001::/32",
            ]),
    ]

    public let allowList: WebhookDestinationAllowList

    public init(allowList: WebhookDestinationAllowList = .none) {
        self.allowList = allowList
    }

    /// Refuses `destination` unless each of `addresses` (what its host resolves to) is allowed.
    public func check(_ destination: WebhookDestination, addresses: [IPAddress]) throws(WebhookDestinationRefusal) {
        if allowList.allows(host: destination.host) { return }
        for address in addresses {
            if let refusal = refusal(of: address) { throw refusal }
        }
    }

    /// The rule refusing `address`, or `nil` when it may be reached.
    public func refusal(of address: IPAddress) -> WebhookDestinationRefusal? {
        let forms = [address.embeddedIPv4, address].compactMap { $0 }
        if forms.contains(where: allowList.allows) { return nil }
        for form in forms {
            if let rule = Self.rules.first(where: { rule in rule.ranges.contains { $0.contains(form) } }) {
                return WebhookDestinationRefusal(rule: rule.code, reason: "the host is \(rule.reason)")
            }
        }
        return nil
    }
}

/// Why a webhook URL is refused: a stable rule code and a reason that names the kind of
/// destination, never an address, port or credential.
/// - Note: Immutable value; `Sendable`.
public struct WebhookDestinationRefusal: Error, Sendable, Hashable, CustomStringConvertible {
    /// `destination.loopback`, `destination.credentials`, `destination.invalidURL`, …
    public let rule: String
    public let reason: String

    public init(rule: String, reason: String) {
        self.rule = rule
        self.reason = reason
    }

    public var description: String { "\(rule): \(reason)" }
}
