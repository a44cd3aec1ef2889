import Foundation

/// Produces compact ES256 JWS tokens: App Store–shaped payloads with an `x5c` chain (the
/// simulator, tests, `storekeeper jws sign`) and plain `kid` tokens (API JWTs, signature
/// creators).
/// - Note: Immutable; `Sendable` (the key is thread-safe to sign with).
public struct JWSSigner: Sendable {
    public let key: PrivateKey
    /// DER certificates for `x5c`, leaf first; empty for a token identified by `kid` only.
    public let chain: [Certificate]

    public init(key: PrivateKey, chain: [Certificate] = []) {
        self.key = key
        self.chain = chain
    }

    /// Signs `payload` (JSON bytes, used verbatim) under a header built from `header` fields
    /// plus `alg: ES256` and, when a chain is set, `x5c`.
    public func sign(payload: [UInt8], header extra: [String: String] = ["typ": "JWT"]) throws(TrustError) -> String {
        var header: [String: JSONHeaderValue] = extra.mapValues { .string($0) }
        header["alg"] = .string("ES256")
        if !chain.isEmpty {
            header["x5c"] = .strings(chain.map { Data($0.der).base64EncodedString() })
        }
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        // A dictionary of strings always encodes.
        let headerBytes = try! encoder.encode(header)
        let signingInput = Base64URL.encode(headerBytes) + "." + Base64URL.encode(payload)
        let signature = try key.signES256(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }

    /// Signs an `Encodable` payload with Apple's conventions (sorted keys, no nulls).
    public func sign<T: Encodable>(_ payload: T, header: [String: String] = ["typ": "JWT"]) throws(TrustError) -> String
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        guard let bytes = try? encoder.encode(payload) else {
            throw TrustError(.signingFailed, "payload cannot be encoded as JSON")
        }
        return try sign(payload: [UInt8](bytes), header: header)
    }
}

enum JSONHeaderValue: Encodable {
    case string(String)
    case strings([String])

    func encode(to encoder: any Encoder) throws {
        var container = encoder.singleValueContainer()
        switch self {
        case .string(let value): try container.encode(value)
        case .strings(let value): try container.encode(value)
        }
    }
}
