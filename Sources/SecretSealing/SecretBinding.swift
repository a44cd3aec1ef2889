/// What a sealed value is (`apps`, `demo`, `sharedSecret`): sealed into the value as AES-GCM
/// associated data, so a value copied to another app, endpoint or field fails to open instead
/// of becoming that field's secret.
/// - Note: Immutable value; `Sendable`.
public struct SecretBinding: Sendable, Hashable, CustomStringConvertible {
    public let components: [String]

    public init(_ components: String...) {
        self.components = components
    }

    public init(components: [String]) {
        self.components = components
    }

    /// `apps/demo/sharedSecret`: how messages and logs name the secret (never its value).
    public var description: String { components.joined(separator: "/") }

    /// The format version, the key id and each component length-prefixed, so no two
    /// different bindings (or key ids) give the same bytes.
    func associatedData(keyId: String) -> [UInt8] {
        var bytes: [UInt8] = []
        for part in [SealedSecret.version, keyId] + components {
            let utf8 = Array(part.utf8)
            let length = UInt32(utf8.count)
            bytes += [UInt8(length >> 24), UInt8(length >> 16 & 0xFF), UInt8(length >> 8 & 0xFF), UInt8(length & 0xFF)]
            bytes += utf8
        }
        return bytes
    }
}
