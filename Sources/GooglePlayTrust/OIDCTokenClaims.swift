import Foundation

/// The claims of a Google-signed OIDC identity token as Pub/Sub push sends it:
/// `iss`, `aud` (the configured audience), `email` of the push service account with
/// `email_verified`, `sub`, `iat`, `exp` (seconds since 1970).
/// - Note: Immutable value; `Sendable`.
public struct OIDCTokenClaims: Sendable, Hashable, Codable {
    public var iss: String?
    /// A string in Google's tokens; an array is accepted as RFC 7519 allows.
    public var aud: [String]?
    public var azp: String?
    public var sub: String?
    public var email: String?
    public var emailVerified: Bool?
    public var iat: Int64?
    public var exp: Int64?

    public init(
        iss: String?, aud: [String]?, azp: String? = nil, sub: String? = nil, email: String? = nil,
        emailVerified: Bool? = nil, iat: Int64? = nil, exp: Int64? = nil
    ) {
        self.iss = iss
        self.aud = aud
        self.azp = azp
        self.sub = sub
        self.email = email
        self.emailVerified = emailVerified
        self.iat = iat
        self.exp = exp
    }

    enum CodingKeys: String, CodingKey {
        case iss, aud, azp, sub, email, iat, exp
        case emailVerified = "email_verified"
    }

    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        iss = try container.decodeIfPresent(String.self, forKey: .iss)
        if let single = try? container.decodeIfPresent(String.self, forKey: .aud) {
            aud = [single]
        } else {
            aud = try container.decodeIfPresent([String].self, forKey: .aud)
        }
        azp = try container.decodeIfPresent(String.self, forKey: .azp)
        sub = try container.decodeIfPresent(String.self, forKey: .sub)
        email = try container.decodeIfPresent(String.self, forKey: .email)
        emailVerified = try container.decodeIfPresent(Bool.self, forKey: .emailVerified)
        iat = try container.decodeIfPresent(Int64.self, forKey: .iat)
        exp = try container.decodeIfPresent(Int64.self, forKey: .exp)
    }

    public func encode(to encoder: any Encoder) throws {
        var container = encoder.container(keyedBy: CodingKeys.self)
        try container.encodeIfPresent(iss, forKey: .iss)
        if let aud {
            if aud.count == 1 {
                try container.encode(aud[0], forKey: .aud)
            } else {
                try container.encode(aud, forKey: .aud)
            }
        }
        try container.encodeIfPresent(azp, forKey: .azp)
        try container.encodeIfPresent(sub, forKey: .sub)
        try container.encodeIfPresent(email, forKey: .email)
        try container.encodeIfPresent(emailVerified, forKey: .emailVerified)
        try container.encodeIfPresent(iat, forKey: .iat)
        try container.encodeIfPresent(exp, forKey: .exp)
    }
}
