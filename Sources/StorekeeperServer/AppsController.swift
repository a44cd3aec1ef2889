import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// Admin: apps (bundle id, appAppleId, environments, App Store Connect key, shared secret,
/// root certificates, policies) and API keys. Secrets go in and never come out: views say
/// only whether they are set; a new API key is shown once, and only its hash is stored (a key
/// listing shows its id, kind, prefix, label and dates).
///
/// An app carries a version (`version`, and its `ETag`). `POST` with an id that exists is 409
/// `app_exists` and changes nothing (the insert itself decides, so two instances creating the
/// same id at once get one 201 and one 409). `PUT` is a merge: the fields it names replace the
/// stored ones, the others keep their stored value; it is applied to the row as it is at that
/// moment, read and written under the row's lock in one transaction, so concurrent PUTs that
/// change different fields all survive. With `If-Match` it applies only to the version named
/// (else 412 `version_mismatch`): what a client that sends back a whole view it read needs, so
/// that a root certificate removed meanwhile does not come back.
/// - Note: Immutable and `Sendable`.
struct AppsController: Sendable {
    let apps: AppDirectory
    let clock: ServerClock
    /// Forgotten after each revocation, so that the key is refused here at once.
    let keys: APIKeyCache

    /// The body of create and update. On update, omitted fields keep their value.
    struct AppInput: Decodable {
        var id: String?
        var bundleId: String?
        var appAppleId: Int64?
        var environments: [String]?
        var sharedSecret: String?
        var rootCertificatesPEM: [String]?
        var appStoreConnect: AppStoreConnectCredentials?
        var transferPolicy: String?
        var legacyReceiptFlow: Bool?
        var answerConsumptionRequests: Bool?
        var onlineVerification: Bool?
        var verifyReceiptProductionURL: String?
        var verifyReceiptSandboxURL: String?
        /// Per-worker switches; an omitted switch keeps its value (`null` inside: the default).
        var recovery: RecoverySwitches?
        /// The consumption policy, replaced whole (its omitted fields take their defaults).
        var consumption: ConsumptionPolicy?
    }

    /// An app as the admin API shows it: no secrets.
    struct AppView: Encodable {
        var id: String
        var bundleId: String
        var appAppleId: Int64?
        var environments: [String]
        var hasSharedSecret: Bool
        var rootCertificates: [String]
        var appStoreConnect: ConnectView?
        var transferPolicy: String
        var legacyReceiptFlow: Bool
        var answerConsumptionRequests: Bool
        var onlineVerification: Bool
        /// The stored row's version; the `ETag` is this number in quotes.
        var version: Int64
        /// Whether each recovery worker runs for the app (its switch or the default).
        var recovery: RecoveryView
        /// The consumption policy in force (the defaults when none was set).
        var consumption: ConsumptionPolicy

        struct RecoveryView: Encodable {
            var historyReplay: Bool
            var statusPolling: Bool
            var onDemandSync: Bool
            /// The Play workers' switches (on unless turned off); they run while the app's
            /// Play side has a service-account key.
            var playVoidedPolling: Bool
            var playReread: Bool
        }

        struct ConnectView: Encodable {
            var keyId: String
            var issuerId: String
            var baseURL: String?
        }

        init(_ app: AppRecord) throws {
            let settings: AppSettings
            do {
                settings = try AppSettings(record: app.settings)
            } catch {
                throw ErrorMapping.ingestionFailure(error)
            }
            id = app.id
            bundleId = app.bundleId
            appAppleId = app.appAppleId
            environments = app.environments.map(\.rawValue)
            hasSharedSecret = app.sharedSecret != nil
            rootCertificates = settings.rootCertificatesPEM.map {
                (try? Certificate(derOrPEM: Array($0.utf8)))?.subject ?? "unreadable"
            }
            appStoreConnect = settings.appStoreConnect.map {
                ConnectView(keyId: $0.keyId, issuerId: $0.issuerId, baseURL: $0.baseURL)
            }
            transferPolicy = settings.transferPolicy.rawValue
            legacyReceiptFlow = settings.legacyReceiptFlow
            answerConsumptionRequests = settings.answerConsumptionRequests
            onlineVerification = settings.onlineVerification
            version = app.version
            recovery = RecoveryView(
                historyReplay: settings.runs(.historyReplay), statusPolling: settings.runs(.statusPolling),
                onDemandSync: settings.runs(.onDemandSync),
                playVoidedPolling: settings.runs(.playVoidedPolling, hasPlaySide: true),
                playReread: settings.runs(.playReread, hasPlaySide: true))
            consumption = settings.consumption ?? ConsumptionPolicy()
        }
    }

    struct AppList: Encodable {
        var apps: [AppView]
    }

    struct KeyInput: Decodable {
        var kind: String
        var label: String?
    }

    struct KeyCreated: Encodable {
        var id: String
        var appId: String?
        var kind: String
        var label: String
        /// Shown once; only its SHA-256 is stored.
        var key: String
    }

    var routes: [APIRoute] {
        let errors: [Int: String?] = [
            400: "Error", 401: "Error", 403: "Error", 404: "Error", 415: "Error", 503: "Error",
        ]
        return [
            APIRoute(
                .post, "/v1/admin/apps", access: .admin, operationId: "createApp",
                summary: "Create an app; 409 app_exists when the id is taken.", tag: "admin", request: "AppInput",
                responses: errors.merging([201: "App", 409: "Error"]) { $1 },
                handler: create
            ).versioned(ifMatch: false, etagStatuses: [201]),
            APIRoute(
                .get, "/v1/admin/apps", access: .admin, operationId: "listApps", summary: "List apps.", tag: "admin",
                responses: errors.merging([200: "AppList"]) { $1 }, handler: list),
            APIRoute(
                .get, "/v1/admin/apps/{appId}", access: .admin, operationId: "getApp", summary: "One app.",
                tag: "admin", responses: errors.merging([200: "App"]) { $1 }, handler: get
            ).versioned(ifMatch: false, etagStatuses: [200]),
            APIRoute(
                .put, "/v1/admin/apps/{appId}", access: .admin, operationId: "updateApp",
                summary: "Update an app: the fields sent replace the stored ones, omitted fields keep their value; "
                    + "with If-Match only if the version is still that one (412 version_mismatch).",
                tag: "admin", request: "AppInput",
                responses: errors.merging([200: "App", 409: "Error", 412: "Error"]) { $1 }, handler: update
            ).versioned(ifMatch: true, etagStatuses: [200, 412]),
            APIRoute(
                .post, "/v1/admin/apps/{appId}/keys", access: .admin, operationId: "createAppKey",
                summary: "Create a public or secret API key for the app (shown once).", tag: "admin",
                request: "AppKeyInput", responses: errors.merging([201: "KeyCreated"]) { $1 }, handler: createAppKey),
            APIRoute(
                .get, "/v1/admin/apps/{appId}/keys", access: .admin, operationId: "listAppKeys",
                summary: "The app's API keys, revoked ones included, oldest first (never the key itself).",
                tag: "admin", responses: errors.merging([200: "KeyList"]) { $1 }, handler: listAppKeys),
            APIRoute(
                .get, "/v1/admin/keys", access: .admin, operationId: "listAdminKeys",
                summary: "The admin API keys stored in the database, revoked ones included, oldest first.",
                tag: "admin", responses: errors.merging([200: "KeyList"]) { $1 }, handler: listAdminKeys),
            APIRoute(
                .post, "/v1/admin/keys", access: .admin, operationId: "createAdminKey",
                summary: "Create an admin API key (shown once).", tag: "admin", request: "AdminKeyInput",
                responses: errors.merging([201: "KeyCreated"]) { $1 }, handler: createAdminKey),
            APIRoute(
                .delete, "/v1/admin/keys/{keyId}", access: .admin, operationId: "revokeKey",
                summary: "Revoke an API key.", tag: "admin", responses: errors.merging([204: nil]) { $1 },
                handler: revokeKey),
        ]
    }

    /// Two apps may share a bundle id and an environment (a staging and a production tenant of
    /// one App Store app, say): every stored key is per app (migration 0004), so the same signed
    /// payload posted to both is stored and applied in each, and neither can shadow the other.
    @Sendable func create(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let input = try RequestBody.decode(AppInput.self, from: request)
        guard let id = input.id, Self.isValidIdentifier(id) else {
            throw HTTPError.badRequest("id must be 1 to 64 of A-Z a-z 0-9 . _ -.", code: "invalid_body")
        }
        let app = try Self.apply(input, to: nil, id: id)
        let stored = try apps.sealed(app)
        let now = clock.now()
        let actor = context[PrincipalKey.self]?.actor ?? "admin"
        // The insert decides, not a read before it: of two instances creating the id at once,
        // exactly one inserts and the other is told, whatever the isolation level.
        let created = try await apps.write("admin") { transaction -> Bool in
            guard try transaction.insertApp(stored, at: now) else { return false }
            try transaction.appendAudit(NewAuditEntry(at: now, actor: actor, action: "app.create", appId: id))
            return true
        }
        guard created else {
            throw HTTPError(status: .conflict, code: "app_exists", message: "An app with that id exists.")
        }
        var view = app
        view.version = 1
        return try Self.respond(view, status: .created)
    }

    /// `app` as JSON with its version as the ETag.
    static func respond(_ app: AppRecord, status: HTTPStatus = .ok) throws -> HTTPResponse {
        var response = JSONResponse.make(try AppView(app), status: status)
        response.headers["ETag"] = VersionPrecondition.etag(app.version)
        return response
    }

    @Sendable func list(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let records = try await apps.read { reader in try reader.apps() }
        return JSONResponse.make(AppList(apps: try records.map(AppView.init)))
    }

    @Sendable func get(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        try Self.respond(try await apps.record(context))
    }

    /// The merge runs inside the write, on the row read under its lock: a change committed by
    /// another request (or instance) just before is the base this one applies to, never lost.
    @Sendable func update(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let input = try RequestBody.decode(AppInput.self, from: request)
        let precondition = try VersionPrecondition(request)
        let appId = try context.parameter("appId")
        if let id = input.id, id != appId {
            throw HTTPError.badRequest("The id in the body differs from the path.", code: "invalid_body")
        }
        let now = clock.now()
        let actor = context[PrincipalKey.self]?.actor ?? "admin"
        let apps = apps
        let saved = try await apps.write("admin") { transaction -> AppRecord in
            guard let existing = try transaction.lockApp(id: appId) else {
                throw ErrorMapping.ingestionFailure(.appNotFound)
            }
            try precondition.check(current: existing.version, resource: "app")
            var app = try Self.apply(input, to: existing, id: appId)
            do {
                app.version = try transaction.saveApp(try apps.sealed(app), at: now)
            } catch let error as StoreError where error.code == .duplicate {
                // The app's Play package follows its environments: another app holds it in a new one.
                throw HTTPError(
                    status: .conflict, code: "package_name_taken",
                    message: "Another app holds this app's Google Play package name in one of the environments.")
            }
            try transaction.appendAudit(NewAuditEntry(at: now, actor: actor, action: "app.update", appId: appId))
            return app
        }
        apps.runtimes.invalidate(appId: appId)
        return try Self.respond(saved)
    }

    @Sendable func createAppKey(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let input = try RequestBody.decode(KeyInput.self, from: request)
        guard let kind = APIKeyRecord.Kind(rawValue: input.kind), kind != .admin else {
            throw HTTPError.badRequest("kind must be public or secret.", code: "invalid_body")
        }
        let app = try await apps.app(context)
        return try await createKey(kind: kind, appId: app.id, label: input.label ?? "", context: context)
    }

    @Sendable func createAdminKey(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let input = try RequestBody.decode(KeyInput.self, from: request)
        guard input.kind == APIKeyRecord.Kind.admin.rawValue else {
            throw HTTPError.badRequest("kind must be admin.", code: "invalid_body")
        }
        return try await createKey(kind: .admin, appId: nil, label: input.label ?? "", context: context)
    }

    private func createKey(kind: APIKeyRecord.Kind, appId: String?, label: String, context: RequestContext) async throws
        -> HTTPResponse
    {
        guard label.utf8.count <= 200 else { throw HTTPError.badRequest("label is too long.", code: "invalid_body") }
        let key = APIKeys.generate(kind: kind)
        let now = clock.now()
        let record = APIKeyRecord(
            id: APIKeys.identifier(prefix: "key_"), appId: appId, kind: kind, hash: APIKeys.hash(key), label: label,
            createdAt: now)
        let actor = context[PrincipalKey.self]?.actor ?? "admin"
        try await apps.write("admin") { transaction in
            try transaction.saveAPIKey(record)
            try transaction.appendAudit(
                NewAuditEntry(
                    at: now, actor: actor, action: "key.create", appId: appId,
                    detail: .object(["keyId": .string(record.id), "kind": .string(kind.rawValue)])))
        }
        return JSONResponse.make(
            KeyCreated(id: record.id, appId: appId, kind: kind.rawValue, label: label, key: key), status: .created)
    }

    /// A stored key as listed: what it is and when, never the key (only its hash is stored,
    /// and not shown either).
    struct KeyView: Encodable {
        var id: String
        var appId: String?
        var kind: String
        /// How the key begins (`sk_pub_`, …): the rest was shown once, at creation.
        var prefix: String
        var label: String
        var createdAt: Timestamp
        var revokedAt: Timestamp?

        init(_ record: APIKeyRecord) {
            id = record.id
            appId = record.appId
            kind = record.kind.rawValue
            prefix = APIKeys.prefix(of: record.kind)
            label = record.label
            createdAt = record.createdAt
            revokedAt = record.revokedAt
        }
    }

    struct KeyList: Encodable {
        var keys: [KeyView]
    }

    @Sendable func listAppKeys(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let appId = try await apps.record(context).id
        let keys = try await apps.read { reader in try reader.apiKeys(appId: appId) }
        return JSONResponse.make(KeyList(keys: keys.map(KeyView.init)))
    }

    @Sendable func listAdminKeys(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let keys = try await apps.read { reader in try reader.apiKeys(appId: nil) }
        return JSONResponse.make(KeyList(keys: keys.map(KeyView.init)))
    }

    @Sendable func revokeKey(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let keyId = try context.parameter("keyId")
        let now = clock.now()
        let actor = context[PrincipalKey.self]?.actor ?? "admin"
        // Also when the write reports a failure: its commit may have happened all the same.
        defer { keys.removeAll() }
        let revoked = try await apps.write("admin") { transaction -> Bool in
            let revoked = try transaction.revokeAPIKey(id: keyId, at: now)
            if revoked {
                try transaction.appendAudit(
                    NewAuditEntry(
                        at: now, actor: actor, action: "key.revoke", appId: nil,
                        detail: .object(["keyId": .string(keyId)])))
            }
            return revoked
        }
        guard revoked else { throw HTTPError(status: .notFound, code: "key_not_found", message: "No such active key.") }
        return HTTPResponse(status: .noContent)
    }

    // MARK: Validation

    static func isValidIdentifier(_ value: String) -> Bool {
        (1...64).contains(value.utf8.count)
            && value.utf8.allSatisfy { byte in
                (byte >= 0x30 && byte <= 0x39) || (byte >= 0x41 && byte <= 0x5A) || (byte >= 0x61 && byte <= 0x7A)
                    || byte == 0x2E || byte == 0x5F || byte == 0x2D
            } && value != "." && value != ".."
    }

    static func apply(_ input: AppInput, to existing: AppRecord?, id: String) throws -> AppRecord {
        var settings = AppSettings()
        if let existing {
            do {
                settings = try AppSettings(record: existing.settings)
            } catch {
                throw ErrorMapping.ingestionFailure(error)
            }
        }
        guard let bundleId = input.bundleId ?? existing?.bundleId, !bundleId.isEmpty, bundleId.utf8.count <= 255 else {
            throw HTTPError.badRequest("bundleId is required.", code: "invalid_body")
        }
        var environments = existing?.environments ?? []
        if let names = input.environments {
            environments = []
            for name in names {
                guard let environment = AppStoreEnvironment(rawValue: name) else {
                    throw HTTPError.badRequest(
                        "environments must be Production, Sandbox, Xcode or LocalTesting.", code: "invalid_body")
                }
                if !environments.contains(environment) { environments.append(environment) }
            }
        }
        guard !environments.isEmpty else {
            throw HTTPError.badRequest("environments must name at least one environment.", code: "invalid_body")
        }
        let appAppleId = input.appAppleId ?? existing?.appAppleId
        if environments.contains(.production) && appAppleId == nil {
            throw HTTPError.badRequest("appAppleId is required for the Production environment.", code: "invalid_body")
        }
        if let pems = input.rootCertificatesPEM {
            for pem in pems {
                guard (try? Certificate(derOrPEM: Array(pem.utf8))) != nil else {
                    throw HTTPError.badRequest(
                        "rootCertificatesPEM holds an unreadable certificate.", code: "invalid_body")
                }
            }
            settings.rootCertificatesPEM = pems
        }
        if let credentials = input.appStoreConnect {
            guard (try? PrivateKey(pem: credentials.privateKeyPEM)) != nil else {
                throw HTTPError.badRequest("appStoreConnect.privateKeyPEM is not a P-256 key.", code: "invalid_body")
            }
            settings.appStoreConnect = credentials
        }
        if let policy = input.transferPolicy {
            guard let value = TransferPolicy(rawValue: policy) else {
                throw HTTPError.badRequest(
                    "transferPolicy must be transfer_to_newest, keep_with_first or share.", code: "invalid_body")
            }
            settings.transferPolicy = value
        }
        if let flag = input.legacyReceiptFlow { settings.legacyReceiptFlow = flag }
        if let flag = input.answerConsumptionRequests { settings.answerConsumptionRequests = flag }
        if let flag = input.onlineVerification { settings.onlineVerification = flag }
        if let switches = input.recovery {
            var merged = settings.recovery ?? RecoverySwitches()
            if let flag = switches.historyReplay { merged.historyReplay = flag }
            if let flag = switches.statusPolling { merged.statusPolling = flag }
            if let flag = switches.onDemandSync { merged.onDemandSync = flag }
            if let flag = switches.playVoidedPolling { merged.playVoidedPolling = flag }
            if let flag = switches.playReread { merged.playReread = flag }
            settings.recovery = merged
        }
        if let policy = input.consumption { settings.consumption = policy }
        if let url = input.verifyReceiptProductionURL { settings.verifyReceiptProductionURL = url }
        if let url = input.verifyReceiptSandboxURL { settings.verifyReceiptSandboxURL = url }
        if let secret = input.sharedSecret, secret.utf8.count > 1024 {
            throw HTTPError.badRequest("sharedSecret must be at most 1024 characters.", code: "invalid_body")
        }
        let sharedSecret = input.sharedSecret ?? existing?.sharedSecret
        return AppRecord(
            id: id, bundleId: bundleId, appAppleId: appAppleId, environments: environments, sharedSecret: sharedSecret,
            settings: settings.jsonValue)
    }
}
