import AppStoreTrust
import Foundation

/// A compact JWT (`header.payload.signature`) split and base64url-decoded, not yet trusted.
/// Nothing but the header may be read before the signature verifies.
struct CompactJWT {
    /// Google's OIDC tokens are about 1 KiB; anything over 16 KiB is refused before parsing.
    static let maximumLength = 16 * 1024

    let header: JWTHeader
    let payload: [UInt8]
    let signature: [UInt8]
    /// The ASCII `header.payload` the signature covers.
    let signingInput: ArraySlice<UInt8>

    init(_ token: String) throws(GooglePlayTrustError) {
        let bytes = Array(token.utf8)
        guard bytes.count <= Self.maximumLength else {
            throw GooglePlayTrustError(.tooLarge, "token of \(bytes.count) bytes exceeds \(Self.maximumLength)")
        }
        let dots = bytes.indices.filter { bytes[$0] == UInt8(ascii: ".") }
        guard dots.count == 2 else {
            throw GooglePlayTrustError(.partCount, "compact JWT has \(dots.count + 1) parts, expected 3")
        }
        let text = Substring(token)
        let parts = text.split(separator: ".", omittingEmptySubsequences: false)
        guard let headerBytes = Base64URL.decode(parts[0]), !headerBytes.isEmpty,
            let payload = Base64URL.decode(parts[1]), !payload.isEmpty,
            let signature = Base64URL.decode(parts[2])
        else {
            throw GooglePlayTrustError(.base64, "a JWT part is not unpadded base64url")
        }
        self.header = try Self.decodeObject(JWTHeader.self, from: headerBytes, rule: .headerNotJSON, part: "header")
        self.payload = payload
        self.signature = signature
        self.signingInput = bytes[..<dots[1]]
    }

    /// Decodes JSON that must be one object.
    static func decodeObject<T: Decodable>(_ type: T.Type, from bytes: [UInt8], rule: PlayTrustRule, part: String)
        throws(GooglePlayTrustError) -> T
    {
        guard bytes.first(where: { ![0x20, 0x09, 0x0A, 0x0D].contains($0) }) == UInt8(ascii: "{") else {
            throw GooglePlayTrustError(rule, "JWT \(part) is not a JSON object")
        }
        do {
            return try JSONDecoder().decode(T.self, from: Data(bytes))
        } catch {
            throw GooglePlayTrustError(rule, "JWT \(part) does not have the expected JSON shape")
        }
    }

    /// Refuses every algorithm but RS256, naming `none` on its own: it is the classic forgery.
    func requireRS256() throws(GooglePlayTrustError) {
        guard let alg = header.alg else { throw GooglePlayTrustError(.algorithmNotRS256, "JWT header has no alg") }
        if alg.lowercased() == "none" { throw GooglePlayTrustError(.algorithmNone, "JWT alg is none (unsigned)") }
        guard alg == "RS256" else {
            // The algorithm name is attacker-chosen: bounded before it reaches a log line.
            let shown = String(alg.prefix(16))
            throw GooglePlayTrustError(.algorithmNotRS256, "JWT alg is \(shown), only RS256 is accepted")
        }
    }
}

/// The JOSE header fields read here.
struct JWTHeader: Codable {
    var alg: String?
    var kid: String?
    var typ: String?
}

/// Signs compact JWTs with RS256: Google's OAuth2 assertions, and the simulator's OIDC tokens.
public enum RS256JWTSigner {
    /// `base64url(header).base64url(claims).base64url(signature)`; claims are encoded with sorted
    /// keys, the header is `{"alg":"RS256","kid":…,"typ":"JWT"}`.
    public static func sign(claims: some Encodable, key: RSAPrivateKey, kid: String?) throws(GooglePlayTrustError)
        -> String
    {
        let encoder = JSONEncoder()
        encoder.outputFormatting = [.sortedKeys, .withoutEscapingSlashes]
        let headerJSON: Data
        let claimsJSON: Data
        do {
            headerJSON = try encoder.encode(JWTHeader(alg: "RS256", kid: kid, typ: "JWT"))
            claimsJSON = try encoder.encode(claims)
        } catch {
            throw GooglePlayTrustError(.signingFailed, "JWT claims cannot be encoded as JSON")
        }
        let signingInput = Base64URL.encode(headerJSON) + "." + Base64URL.encode(claimsJSON)
        let signature = try key.signRS256(Array(signingInput.utf8))
        return signingInput + "." + Base64URL.encode(signature)
    }
}
