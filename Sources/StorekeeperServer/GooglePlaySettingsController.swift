import AppStoreModels
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// Admin: an app's Google Play side (docs/googleplay.md): package name, service-account key,
/// the RTDN push's audience and service-account email, whether purchases are acknowledged, and
/// whether each new order is read from the orders API for its exact revenue (`readOrderRevenue`).
/// The key goes in and never comes out (sealed at rest; the view says only whether it is set).
///
/// `PUT` merges like the app's own `PUT`: fields sent replace the stored ones, omitted ones keep
/// their value, under the app row's lock, with `If-Match` against the Play side's version (0
/// while there is none). The package name is claimed in each of the app's environments: 409
/// `package_name_taken` when another app holds it in one of them.
/// - Note: Immutable and `Sendable`.
struct GooglePlaySettingsController: Sendable {
    let apps: AppDirectory
    let clock: ServerClock
    /// Forgotten on a change so that the next push or purchase uses the new key and audience.
    let playRuntimes: PlayRuntimes

    static let maximumKeyBytes = 16 * 1024
    static let maximumTextBytes = 2048

    struct Input: Decodable {
        var packageName: String?
        /// The service account's key file (JSON) as Google issued it.
        var serviceAccountKey: String?
        var rtdnAudience: String?
        var pushServiceAccountEmail: String?
        var acknowledgePurchases: Bool?
        var readOrderRevenue: Bool?
    }

    struct View: Encodable {
        var appId: String
        var packageName: String
        var hasServiceAccountKey: Bool
        var rtdnAudience: String?
        var pushServiceAccountEmail: String?
        var acknowledgePurchases: Bool
        var readOrderRevenue: Bool
        var version: Int64

        init(_ settings: PlayAppSettings) {
            appId = settings.appId
            packageName = settings.packageName
            hasServiceAccountKey = settings.serviceAccountKey != nil
            rtdnAudience = settings.rtdnAudience
            pushServiceAccountEmail = settings.pushServiceAccountEmail
            acknowledgePurchases = settings.acknowledgePurchases
            readOrderRevenue = settings.readOrderRevenue
            version = settings.version
        }
    }

    var routes: [APIRoute] {
        let errors: [Int: String?] = [
            400: "Error", 401: "Error", 403: "Error", 404: "Error", 415: "Error", 503: "Error",
        ]
        return [
            APIRoute(
                .get, "/v1/admin/apps/{appId}/googleplay", access: .admin, operationId: "getGooglePlaySettings",
                summary: "The app's Google Play side (never the service-account key); 404 when it has none.",
                tag: "admin", responses: errors.merging([200: "GooglePlaySettings"]) { $1 }, handler: get
            ).versioned(ifMatch: false, etagStatuses: [200]),
            APIRoute(
                .put, "/v1/admin/apps/{appId}/googleplay", access: .admin, operationId: "putGooglePlaySettings",
                summary: "Set the app's Google Play side: the fields sent replace the stored ones (packageName "
                    + "required the first time); 409 package_name_taken when another app holds the package.",
                tag: "admin", request: "GooglePlaySettingsInput",
                responses: errors.merging([200: "GooglePlaySettings", 409: "Error", 412: "Error"]) { $1 }, handler: put
            ).versioned(ifMatch: true, etagStatuses: [200, 412]),
        ]
    }

    @Sendable func get(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let appId = try await apps.record(context).id
        guard let settings = try await apps.read({ reader in try reader.playAppSettings(appId: appId) }) else {
            throw HTTPError(
                status: .notFound, code: "not_found", message: "The app has no Google Play side.")
        }
        return Self.respond(settings)
    }

    @Sendable func put(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let input = try RequestBody.decode(Input.self, from: request)
        try Self.validate(input)
        let precondition = try VersionPrecondition(request)
        let appId = try context.parameter("appId")
        let now = clock.now()
        let actor = context[PrincipalKey.self]?.actor ?? "admin"
        // Sealed before the transaction (no secret in clear reaches the store); an unchanged
        // key keeps its stored (sealed) text.
        let sealedKey = try input.serviceAccountKey.map { key in
            try apps.sealed(PlayAppSettings(appId: appId, packageName: "", serviceAccountKey: key)).serviceAccountKey
        }
        let saved: PlayAppSettings
        do {
            saved = try await apps.store.write(retries: 2) { transaction -> PlayAppSettings in
                guard let app = try transaction.lockApp(id: appId) else {
                    throw ErrorMapping.ingestionFailure(.appNotFound)
                }
                let existing = try transaction.playAppSettings(appId: appId)
                try precondition.check(current: existing?.version ?? 0, resource: "Google Play settings")
                guard let packageName = input.packageName ?? existing?.packageName else {
                    throw HTTPError.badRequest("packageName is required.", code: "invalid_body")
                }
                var settings = PlayAppSettings(
                    appId: appId, packageName: packageName,
                    serviceAccountKey: sealedKey ?? existing?.serviceAccountKey,
                    rtdnAudience: input.rtdnAudience ?? existing?.rtdnAudience,
                    pushServiceAccountEmail: input.pushServiceAccountEmail ?? existing?.pushServiceAccountEmail,
                    acknowledgePurchases: input.acknowledgePurchases ?? existing?.acknowledgePurchases ?? true,
                    readOrderRevenue: input.readOrderRevenue ?? existing?.readOrderRevenue ?? false)
                do {
                    settings.version = try transaction.savePlayAppSettings(
                        settings, environments: app.environments, at: now)
                } catch let error as StoreError where error.code == .duplicate {
                    throw HTTPError(
                        status: .conflict, code: "package_name_taken",
                        message: "Another app holds this package name in one of this app's environments.")
                }
                try transaction.appendAudit(
                    NewAuditEntry(
                        at: now, actor: actor, action: "app.googleplay.update", appId: appId,
                        detail: .object(["version": .integer(settings.version)])))
                return settings
            }
        } catch let error as HTTPError {
            throw error
        } catch {
            throw ErrorMapping.storeFailure(error)
        }
        apps.runtimes.invalidate(appId: appId)
        playRuntimes.invalidate(appId: appId)
        return Self.respond(saved)
    }

    static func respond(_ settings: PlayAppSettings) -> HTTPResponse {
        var response = JSONResponse.make(View(settings))
        response.headers["ETag"] = VersionPrecondition.etag(settings.version)
        return response
    }

    /// Bounds and shapes; the key must be a service account's key file (JSON object with
    /// `type` `service_account`, `client_email` and `private_key`).
    static func validate(_ input: Input) throws {
        if let name = input.packageName, !isPackageName(name) {
            throw HTTPError.badRequest(
                "packageName must be an Android application id (com.example.app).", code: "invalid_body")
        }
        if let key = input.serviceAccountKey {
            guard key.utf8.count <= maximumKeyBytes,
                case .object(let object)? = try? JSONDecoder().decode(JSONValue.self, from: Data(key.utf8)),
                object["type"] == .string("service_account"), case .string? = object["client_email"],
                case .string? = object["private_key"]
            else {
                throw HTTPError.badRequest(
                    "serviceAccountKey must be a service account's JSON key file.", code: "invalid_body")
            }
        }
        for (name, value) in [
            ("rtdnAudience", input.rtdnAudience), ("pushServiceAccountEmail", input.pushServiceAccountEmail),
        ] {
            if let value, value.isEmpty || value.utf8.count > maximumTextBytes {
                throw HTTPError.badRequest("\(name) must be 1 to \(maximumTextBytes) bytes.", code: "invalid_body")
            }
        }
    }

    /// Dot-separated segments, at least two, each a letter then letters, digits or `_`.
    static func isPackageName(_ name: String) -> Bool {
        guard (3...255).contains(name.utf8.count) else { return false }
        let segments = name.split(separator: ".", omittingEmptySubsequences: false)
        return segments.count >= 2
            && segments.allSatisfy { segment in
                guard let first = segment.utf8.first, (first | 0x20) >= 0x61 && (first | 0x20) <= 0x7A else {
                    return false
                }
                return segment.utf8.allSatisfy { byte in
                    (byte >= 0x30 && byte <= 0x39) || ((byte | 0x20) >= 0x61 && (byte | 0x20) <= 0x7A) || byte == 0x5F
                }
            }
    }
}
