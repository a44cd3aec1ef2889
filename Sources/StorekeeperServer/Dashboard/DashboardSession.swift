import AppStoreModels
import AppStoreTrust
import Foundation

/// A signed-in dashboard user: who signed in (an app's secret key or an admin key, named by
/// the key's id, never the key), until when, and a random nonce the CSRF token derives from.
///
/// The cookie holds `v1.<base64url(payload)>.<base64url(HMAC-SHA256)>`, signed with the
/// `DashboardSessionKey` every instance derives from the same configured secret, so a session
/// begun on one instance is honoured by the others. Nothing is stored server side; each request
/// still checks the key has not been revoked since (`DashboardAuthenticator`).
/// - Note: Immutable value; `Sendable`.
struct DashboardSession: Sendable, Hashable {
    enum Kind: String, Sendable {
        /// An app's secret key: this app only.
        case app
        /// An admin key: every app.
        case admin
    }

    var kind: Kind
    /// The app of an app session; `nil` for admin.
    var appId: String?
    /// The API key's id (`config-admin:` and the key's fingerprint for the configured admin key).
    var keyId: String
    var expiresAt: Timestamp
    /// 16 random bytes, base64url: what makes two sessions of one key different.
    var nonce: String

    static let version = "v1"
    /// Cookies past this size are refused unread.
    static let maximumTokenLength = 1024

    /// What a configured-admin session's key id starts with.
    static let configuredAdminPrefix = "config-admin:"

    /// The principal the session acts as, for the audit log of its actions (`config-admin`,
    /// as the API names the configured admin key).
    var actor: String { keyId.hasPrefix(Self.configuredAdminPrefix) ? "config-admin" : keyId }

    /// May this session look at and act on `appId`?
    func allows(appId: String) -> Bool { kind == .admin || self.appId == appId }

    /// A new session for a verified key, lasting `lifetimeSeconds` from `now`.
    static func begin(kind: Kind, appId: String?, keyId: String, now: Timestamp, lifetimeSeconds: Int)
        -> DashboardSession
    {
        DashboardSession(
            kind: kind, appId: appId, keyId: keyId, expiresAt: now.adding(milliseconds: Int64(lifetimeSeconds) * 1000),
            nonce: Base64URL.encode(DashboardSessionKey.randomBytes(16)))
    }

    /// The cookie value.
    func token(key: DashboardSessionKey) -> String {
        let fields = [kind.rawValue, appId ?? "", keyId, String(expiresAt.millisecondsSince1970), nonce]
        let payload = Base64URL.encode(Array(fields.joined(separator: "\n").utf8))
        let signed = Self.version + "." + payload
        return signed + "." + Base64URL.encode(key.sign(purpose: "session", Array(signed.utf8)))
    }

    /// The session a cookie value holds, when its signature is right and it has not expired;
    /// `nil` for anything else (which the caller answers with the sign-in page).
    static func open(token: String, key: DashboardSessionKey, now: Timestamp) -> DashboardSession? {
        guard token.utf8.count <= maximumTokenLength else { return nil }
        let parts = token.split(separator: ".", omittingEmptySubsequences: false)
        guard parts.count == 3, parts[0] == version, let signature = Base64URL.decode(parts[2]) else { return nil }
        let signed = Array("\(parts[0]).\(parts[1])".utf8)
        guard Digest.constantTimeEqual(signature, key.sign(purpose: "session", signed)),
            let payload = Base64URL.decode(parts[1]), let text = String(bytes: payload, encoding: .utf8)
        else { return nil }
        let fields = text.split(separator: "\n", omittingEmptySubsequences: false).map(String.init)
        guard fields.count == 5, let kind = Kind(rawValue: fields[0]), let expires = Int64(fields[3]),
            !fields[2].isEmpty, !fields[4].isEmpty
        else { return nil }
        let session = DashboardSession(
            kind: kind, appId: fields[1].isEmpty ? nil : fields[1], keyId: fields[2],
            expiresAt: Timestamp(millisecondsSince1970: expires), nonce: fields[4])
        guard now < session.expiresAt, (kind == .app) == (session.appId != nil) else { return nil }
        return session
    }

    /// The token every form of this session carries: a MAC of the session's nonce, so it
    /// cannot be made without the key nor reused by another session.
    func csrfToken(key: DashboardSessionKey) -> String {
        Base64URL.encode(key.sign(purpose: "csrf", Array(nonce.utf8)))
    }

    /// Whether `presented` is this session's CSRF token (constant-time).
    func acceptsCSRF(_ presented: String?, key: DashboardSessionKey) -> Bool {
        guard let presented, presented.utf8.count <= 128 else { return false }
        return Digest.constantTimeEqual(Array(presented.utf8), Array(csrfToken(key: key).utf8))
    }
}

/// The key dashboard sessions and CSRF tokens are signed with: HMAC-SHA256 under a key derived
/// from the server's configured secret material, the secrets key when there is one, otherwise
/// the configured admin key, so every instance configured alike derives the same key. With
/// neither, a random key for this process: sessions then end with it and hold on this instance
/// only (docs/dashboard.md).
/// - Note: Immutable value; `Sendable`.
struct DashboardSessionKey: Sendable {
    private let bytes: [UInt8]
    /// Whether the key comes from configuration (shared by instances) or is this process's own.
    let isShared: Bool

    init(bytes: [UInt8], isShared: Bool) {
        self.bytes = bytes
        self.isShared = isShared
    }

    /// The key for `configuration` (see the type's comment).
    init(configuration: ServerConfiguration) {
        let material: String?
        if let secretsKey = try? configuration.loadSecretsKey() {
            material = "secrets:" + secretsKey.base64
        } else if let adminKey = configuration.adminKey {
            material = "admin:" + adminKey
        } else {
            material = nil
        }
        if let material {
            // A key of its own, derived one way, so a session MAC never reveals or equals a use
            // of the secret it comes from.
            self.init(
                bytes: Digest.hmacSHA256(
                    key: Array(material.utf8), message: Array("storekeeper dashboard session key v1".utf8)),
                isShared: true)
        } else {
            self.init(bytes: Self.randomBytes(32), isShared: false)
        }
    }

    /// HMAC-SHA256 of `message`, domain-separated by `purpose`.
    func sign(purpose: String, _ message: [UInt8]) -> [UInt8] {
        Digest.hmacSHA256(key: bytes, message: Array((purpose + "\u{0}").utf8) + message)
    }

    static func randomBytes(_ count: Int) -> [UInt8] {
        var generator = SystemRandomNumberGenerator()
        return (0..<count).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
    }
}
