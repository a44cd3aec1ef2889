import Foundation

/// The server's exceptions to the webhook destination policy (`webhookAllowedDestinations`):
/// CIDR ranges or addresses whose addresses any endpoint may reach, and host names an endpoint
/// may name whatever they resolve to. For development (the demo's listener on 127.0.0.1);
/// empty by default.
/// - Note: Immutable value; `Sendable`.
public struct WebhookDestinationAllowList: Sendable, Hashable, CustomStringConvertible {
    public let ranges: [IPAddressRange]
    /// Lower case, without a trailing dot.
    public let hosts: [String]

    /// The most entries a list holds.
    public static let maximumEntries = 64

    /// Nothing allowed beyond the policy.
    public static let none = WebhookDestinationAllowList(ranges: [], hosts: [])

    private init(ranges: [IPAddressRange], hosts: [String]) {
        self.ranges = ranges
        self.hosts = hosts
    }

    /// Each entry is a CIDR range (`127.0.0.0/8`, `::1/128`), an address (`127.0.0.1`) or a
    /// host name (`localhost`, `hooks.internal`). Throws the (1-based) position and the
    /// reason of the first invalid entry.
    public init(_ entries: [String]) throws(WebhookDestinationAllowListError) {
        guard entries.count <= Self.maximumEntries else {
            throw WebhookDestinationAllowListError(
                entry: Self.maximumEntries + 1, reason: "at most \(Self.maximumEntries) entries")
        }
        var ranges: [IPAddressRange] = []
        var hosts: [String] = []
        for (index, raw) in entries.enumerated() {
            let entry = raw.trimmingCharacters(in: .whitespaces).lowercased()
            if let range = IPAddressRange(entry) {
                if !ranges.contains(range) { ranges.append(range) }
                continue
            }
            var name = entry
            if name.hasSuffix(".") { name.removeLast() }
            if entry.contains("/") || entry.contains(":") || !WebhookDestination.isPlainHostName(name) {
                throw WebhookDestinationAllowListError(
                    entry: index + 1,
                    reason: "not a CIDR range (with no bits set beyond the prefix), an IP address or a host name")
            }
            if !hosts.contains(name) { hosts.append(name) }
        }
        self.init(ranges: ranges, hosts: hosts)
    }

    /// A comma-separated list, as in the configuration file or the environment.
    public init(parsing text: String) throws(WebhookDestinationAllowListError) {
        try self.init(text.split(separator: ",").map(String.init).filter { !$0.allSatisfy(\.isWhitespace) })
    }

    /// Whether `address` lies in one of the ranges.
    public func allows(_ address: IPAddress) -> Bool { ranges.contains { $0.contains(address) } }

    /// Whether `host` (as `WebhookDestination.host` holds it) is listed by name.
    public func allows(host: String) -> Bool { hosts.contains(host) }

    /// The entries, ranges first, as `init(_:)` takes them.
    public var entries: [String] { ranges.map(\.description) + hosts }

    public var description: String { entries.joined(separator: ",") }
}

/// Why an allow-list entry was refused; names the entry by position, not by value.
/// - Note: Immutable value; `Sendable`.
public struct WebhookDestinationAllowListError: Error, Sendable, Hashable, CustomStringConvertible {
    /// 1-based position of the entry.
    public let entry: Int
    public let reason: String

    public var description: String { "entry \(entry): \(reason)" }
}
