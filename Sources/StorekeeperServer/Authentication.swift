import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import Storage

/// Who is calling, as proven by the API key in `Authorization: Bearer …`.
/// - Note: Immutable value; `Sendable`.
public enum Principal: Sendable, Hashable {
    /// The configured bootstrap admin key or a stored admin key.
    case admin(keyId: String)
    /// A stored key of one app.
    case app(appId: String, kind: APIKeyRecord.Kind, keyId: String)

    /// For the audit log: the key's id, never the key.
    public var actor: String {
        switch self {
        case .admin(let keyId): return keyId
        case .app(_, _, let keyId): return keyId
        }
    }
}

/// The principal a request was authenticated as, attached by `AuthenticationMiddleware`.
public enum PrincipalKey: RequestContextKey {
    public typealias Value = Principal
}

/// What a route asks of its caller.
/// - Note: Immutable value; `Sendable`.
public enum RouteAccess: String, Sendable, Hashable {
    /// Anyone (health, metrics, the OpenAPI document).
    case open
    /// The App Store: no key; the payload's signature (V2) or shared secret (V1) is the proof.
    case appStore
    /// Google Play's Pub/Sub push: no key; the push's OIDC token (RS256, signed by Google) is the proof.
    case googlePlayPush
    /// The app's public or secret key (or an admin key).
    case appPublic
    /// The app's secret key (or an admin key).
    case appSecret
    /// An admin key.
    case admin
}

/// API keys: generation and the hash that is stored instead of the key.
/// - Note: Stateless; thread-safe.
public enum APIKeys {
    /// A new random key: `sk_<kind>_` plus 32 random bytes in base64url.
    public static func generate(kind: APIKeyRecord.Kind) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<32).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return prefix(of: kind) + Base64URL.encode(bytes)
    }

    /// How every key of `kind` begins (`sk_pub_`, `sk_sec_`, `sk_adm_`): all a listing can show
    /// of a key, since only its hash is stored.
    public static func prefix(of kind: APIKeyRecord.Kind) -> String {
        switch kind {
        case .public: "sk_pub_"
        case .secret: "sk_sec_"
        case .admin: "sk_adm_"
        }
    }

    /// Lowercase hex SHA-256 of the key: what the store keeps.
    public static func hash(_ key: String) -> String {
        Digest.hex(Digest.sha256(Array(key.utf8)))
    }

    /// A short random id for a key or endpoint.
    public static func identifier(prefix: String) -> String {
        var generator = SystemRandomNumberGenerator()
        let bytes = (0..<9).map { _ in UInt8.random(in: .min ... .max, using: &generator) }
        return prefix + Base64URL.encode(bytes)
    }
}

/// Authenticates the API key of every request and enforces the matched route's `RouteAccess`:
/// keys are looked up by their SHA-256 and the hashes compared in constant time; an app's key
/// only reaches routes whose `{appId}` is that app.
///
/// 401 `unauthorized` when a required key is missing, unknown or revoked; 403 `forbidden`
/// when the key is valid but not for this route or app.
/// - Note: Immutable and `Sendable`.
public struct AuthenticationMiddleware: ImmediateMiddleware {
    private let access: [String: RouteAccess]
    private let store: any Store
    private let adminKeyHash: [UInt8]?
    private let keys: APIKeyCache

    /// - Parameters:
    ///   - access: the access of each route, keyed by `"METHOD pattern"`.
    ///   - keys: valid stored keys read recently (none kept by default).
    public init(
        access: [String: RouteAccess], store: any Store, adminKey: String?,
        keys: APIKeyCache = APIKeyCache(refreshInterval: .zero)
    ) {
        self.access = access
        self.store = store
        self.adminKeyHash = adminKey.map { Array(APIKeys.hash($0).utf8) }
        self.keys = keys
    }

    public func handle(_ request: HTTPRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        guard let required = requirement(request, context) else { return try await next(request, context) }
        let principal: Principal
        switch try check(request) {
        case .known(let known): principal = known
        case .stored(let hash):
            var record = keys.record(hash: hash)
            if record == nil {
                let checkedAt = ContinuousClock.now
                do {
                    record = try await store.read { reader in try reader.apiKey(hash: hash) }
                } catch {
                    throw ErrorMapping.storeFailure(error)
                }
                keys.remember(record, hash: hash, checkedAt: checkedAt)
            }
            principal = try Self.principal(record, hash: hash)
        }
        return try await next(request, try authorized(principal, required, context))
    }

    /// The same on the HTTP thread: the key's row is read there (one indexed read, no hop).
    public func handleImmediately(_ request: HTTPRequest, context: RequestContext, next: ImmediateNext) throws
        -> HTTPResponse?
    {
        guard let required = requirement(request, context) else { return try next(request, context) }
        let principal: Principal
        switch try check(request) {
        case .known(let known): principal = known
        case .stored(let hash):
            var record = keys.record(hash: hash)
            if record == nil {
                let checkedAt = ContinuousClock.now
                do {
                    record = try store.readBlocking { reader in try reader.apiKey(hash: hash) }
                } catch {
                    throw ErrorMapping.storeFailure(error)
                }
                keys.remember(record, hash: hash, checkedAt: checkedAt)
            }
            principal = try Self.principal(record, hash: hash)
        }
        return try next(request, try authorized(principal, required, context))
    }

    /// What the matched route asks for; `nil` when it needs no key.
    private func requirement(_ request: HTTPRequest, _ context: RequestContext) -> RouteAccess? {
        guard let route = context.route else { return nil }
        let method = request.method == .head ? HTTPMethod.get : request.method
        let required = access["\(method.rawValue) \(route)"] ?? .admin
        return required == .open || required == .appStore || required == .googlePlayPush ? nil : required
    }

    /// What the presented key is: the configured admin key, or a key to look up by its hash.
    private enum KeyCheck {
        case known(Principal)
        case stored(hash: String)
    }

    private func check(_ request: HTTPRequest) throws -> KeyCheck {
        guard let header = request.headers["Authorization"], header.hasPrefix("Bearer ") else {
            throw HTTPError.unauthorized("An API key is required: Authorization: Bearer <key>.")
        }
        let key = Self.trimmed(header.dropFirst("Bearer ".count))
        guard !key.isEmpty, key.utf8.count <= 256 else { throw HTTPError.unauthorized("The API key is not valid.") }
        let hash = APIKeys.hash(key)
        if let adminKeyHash, Digest.constantTimeEqual(adminKeyHash, Array(hash.utf8)) {
            return .known(.admin(keyId: "config-admin"))
        }
        return .stored(hash: hash)
    }

    /// `value` without leading and trailing whitespace (`CharacterSet.whitespaces`). A key as
    /// clients send it has none: that case is decided from its first and last bytes, without
    /// Foundation's trimming (4% of a GET).
    static func trimmed(_ value: Substring) -> String {
        func plain(_ byte: UInt8?) -> Bool {
            guard let byte else { return true }
            return byte < 0x80 && byte != UInt8(ascii: " ") && byte != UInt8(ascii: "\t")
        }
        if plain(value.utf8.first) && plain(value.utf8.last) { return String(value) }
        return value.trimmingCharacters(in: .whitespaces)
    }

    /// The context with the principal attached, once it may use the route.
    private func authorized(_ principal: Principal, _ required: RouteAccess, _ context: RequestContext) throws
        -> RequestContext
    {
        try authorize(principal, required: required, appId: context.parameters["appId"])
        var context = context
        context[PrincipalKey.self] = principal
        return context
    }

    private static func principal(_ record: APIKeyRecord?, hash: String) throws -> Principal {
        guard let record, record.revokedAt == nil, Digest.constantTimeEqual(Array(record.hash.utf8), Array(hash.utf8))
        else { throw HTTPError.unauthorized("The API key is not valid.") }
        switch record.kind {
        case .admin: return .admin(keyId: record.id)
        case .public, .secret:
            guard let appId = record.appId else { throw HTTPError.unauthorized("The API key is not valid.") }
            return .app(appId: appId, kind: record.kind, keyId: record.id)
        }
    }

    private func authorize(_ principal: Principal, required: RouteAccess, appId: String?) throws {
        switch principal {
        case .admin: return
        case .app(let keyApp, let kind, _):
            guard required != .admin else { throw HTTPError.forbidden("This route needs an admin key.") }
            guard let appId, appId == keyApp else { throw HTTPError.forbidden("The API key belongs to another app.") }
            if required == .appSecret && kind != .secret {
                throw HTTPError.forbidden("This route needs the app's secret key.")
            }
        }
    }
}
