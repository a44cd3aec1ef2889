/// A CIDR range (`10.0.0.0/8`, `fc00::/7`); a bare address is its own /32 or /128.
/// - Note: Immutable value; `Sendable`.
public struct IPAddressRange: Sendable, Hashable, CustomStringConvertible {
    public let network: IPAddress
    public let prefixLength: Int

    /// Parses `ADDRESS/PREFIX` or `ADDRESS`. `nil` when the address or prefix is invalid or
    /// when bits beyond the prefix are set (`10.0.0.1/8` is refused, not silently widened).
    public init?(_ text: String) {
        let parts = text.split(separator: "/", omittingEmptySubsequences: false)
        guard parts.count <= 2, let address = IPAddress(String(parts[0])) else { return nil }
        let maximum = address.bytes.count * 8
        var length = maximum
        if parts.count == 2 {
            guard parts[1].count <= 3, parts[1].allSatisfy(\.isASCII), let value = Int(parts[1]),
                (0...maximum).contains(value)
            else { return nil }
            length = value
        }
        guard Self.masked(address.bytes, to: length) == address.bytes else { return nil }
        network = address
        prefixLength = length
    }

    public var description: String { "\(network)/\(prefixLength)" }

    /// Whether `address` (of the same family) lies in the range.
    public func contains(_ address: IPAddress) -> Bool {
        address.bytes.count == network.bytes.count && Self.masked(address.bytes, to: prefixLength) == network.bytes
    }

    private static func masked(_ bytes: [UInt8], to length: Int) -> [UInt8] {
        bytes.enumerated().map { index, byte in
            let kept = min(8, max(0, length - index * 8))
            return kept == 8 ? byte : byte & ~(UInt8(0xff) >> kept)
        }
    }
}
