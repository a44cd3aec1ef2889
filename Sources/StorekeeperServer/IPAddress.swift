#if canImport(Glibc)
    import Glibc
#elseif canImport(Darwin)
    import Darwin
#endif

/// An IPv4 or IPv6 address as its network-order bytes (4 or 16), parsed and printed by the C
/// library's `inet_pton` / `inet_ntop`: only the standard notations (`127.0.0.1`, `::1`,
/// `::ffff:10.0.0.1`), never the legacy shorthands such as `127.1` (a resolver turns those
/// into a standard address before anything here looks at them).
/// - Note: Immutable value; `Sendable`.
public struct IPAddress: Sendable, Hashable, CustomStringConvertible {
    /// 4 bytes (IPv4) or 16 (IPv6), network order.
    public let bytes: [UInt8]

    public var isIPv4: Bool { bytes.count == 4 }

    /// `nil` unless `bytes` has 4 or 16 bytes.
    public init?(bytes: [UInt8]) {
        guard bytes.count == 4 || bytes.count == 16 else { return nil }
        self.bytes = bytes
    }

    /// `nil` for anything but a standard IPv4 or IPv6 notation (no zone id, no brackets).
    public init?(_ text: String) {
        guard text.utf8.count <= 64 else { return nil }
        var v4 = in_addr()
        if inet_pton(AF_INET, text, &v4) == 1 {
            bytes = withUnsafeBytes(of: &v4) { Array($0) }
            return
        }
        var v6 = in6_addr()
        if inet_pton(AF_INET6, text, &v6) == 1 {
            bytes = withUnsafeBytes(of: &v6) { Array($0) }
            return
        }
        return nil
    }

    public var description: String {
        var buffer = [CChar](repeating: 0, count: Int(INET6_ADDRSTRLEN))
        let family = isIPv4 ? AF_INET : AF_INET6
        let printed = bytes.withUnsafeBytes { raw in
            inet_ntop(family, raw.baseAddress, &buffer, socklen_t(buffer.count)) != nil
        }
        guard printed else { return "?" }
        return String(decoding: buffer.prefix { $0 != 0 }.map { UInt8(bitPattern: $0) }, as: UTF8.self)
    }

    /// How to write the address as a URL host: IPv6 in brackets.
    public var urlHost: String { isIPv4 ? description : "[\(description)]" }

    /// The IPv4 address an IPv6 address stands for, where connecting to the IPv6 address
    /// reaches (or may reach, through a translator) that IPv4 address: IPv4-mapped
    /// (`::ffff:a.b.c.d`), IPv4-compatible (`::a.b.c.d`), NAT64 (`64:ff9b::a.b.c.d`) and 6to4
    /// (`2002:AABB:CCDD::/48`). `nil` for IPv4 addresses and other IPv6 addresses.
    public var embeddedIPv4: IPAddress? {
        guard bytes.count == 16 else { return nil }
        let zeros = bytes[0..<10].allSatisfy { $0 == 0 }
        let mapped = zeros && bytes[10] == 0xff && bytes[11] == 0xff
        // `::` and `::1` are IPv6's own unspecified and loopback addresses, not IPv4-compatible.
        let compatible = zeros && bytes[10] == 0 && bytes[11] == 0 && bytes[12..<15].contains { $0 != 0 }
        let nat64 = bytes[0..<12] == [0x00, 0x64, 0xff, 0x9b, 0, 0, 0, 0, 0, 0, 0, 0]
        if mapped || compatible || nat64 { return IPAddress(bytes: Array(bytes[12..<16])) }
        if bytes[0] == 0x20 && bytes[1] == 0x02 { return IPAddress(bytes: Array(bytes[2..<6])) }
        return nil
    }
}
