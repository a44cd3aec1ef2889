import AppStoreTrust

/// What names one CustomerInfo text: the hex of the first 16 bytes of its SHA-256. A read's
/// strong ETag is this in quotes. Worked out once when the state is saved and stored beside
/// the JSON (`customer_states.info_digest`), so that a GET hashes nothing.
/// - Note: Stateless; `Sendable`.
public enum CustomerInfoDigest {
    public static func of(_ json: some Collection<UInt8>) -> String {
        Digest.hex(Digest.sha256(json).prefix(16))
    }
}
