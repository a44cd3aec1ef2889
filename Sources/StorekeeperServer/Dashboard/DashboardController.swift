import AppStoreModels
import AppStoreTrust
import Foundation
import HTTPServer
import Storage
import StorekeeperIngestion

/// The dashboard at `/dashboard`: server-rendered HTML from the same binary, signed in with an
/// app's secret key or an admin key posted in a form (never in a URL), kept in an HttpOnly,
/// SameSite=Strict session cookie (`DashboardSession`), with a CSRF token in every form and
/// an `Origin` check on every POST.
///
/// Its routes are `.open` to `AuthenticationMiddleware` (a browser sends no bearer key); each
/// handler checks the session itself, and a session reaches only its own app unless it is an
/// admin's. They are not part of the REST API, so they are not in the OpenAPI document.
/// - Note: Immutable and `Sendable`.
struct DashboardController: Sendable {
    let apps: AppDirectory
    let store: any Store
    let clock: ServerClock
    let metrics: ServerMetrics
    let sync: CustomerSync
    let key: DashboardSessionKey
    let overviewSource: any DashboardOverviewSource
    let adminKeyHash: [UInt8]?
    let secureCookies: Bool
    let sessionSeconds: Int

    static let sessionCookie = "storekeeper_dashboard"
    static let signInCookie = "storekeeper_dashboard_signin"

    init(
        apps: AppDirectory, store: any Store, clock: ServerClock, metrics: ServerMetrics, sync: CustomerSync,
        configuration: ServerConfiguration, overviewSource: (any DashboardOverviewSource)? = nil
    ) {
        self.apps = apps
        self.store = store
        self.clock = clock
        self.metrics = metrics
        self.sync = sync
        self.key = DashboardSessionKey(configuration: configuration)
        self.overviewSource = overviewSource ?? AnalyticsOverviewSource(apps: apps, clock: clock)
        self.adminKeyHash = configuration.adminKey.map { Array(APIKeys.hash($0).utf8) }
        self.secureCookies = configuration.dashboardSecureCookies
        self.sessionSeconds = configuration.dashboardSessionSeconds
    }

    /// Method, path pattern and handler of every dashboard route.
    var routes: [(HTTPMethod, String, Router.Handler)] {
        [
            (.get, "/dashboard", home),
            (.get, DashboardStylesheet.path, stylesheet),
            (.get, "/dashboard/sign-in", signInPage),
            (.post, "/dashboard/sign-in", signIn),
            (.post, "/dashboard/sign-out", signOut),
            (.get, "/dashboard/apps", appList),
            (.get, "/dashboard/apps/{appId}", appPage(overview)),
            (.get, "/dashboard/apps/{appId}/overview.csv", appPage(overviewCSV)),
            (.get, "/dashboard/apps/{appId}/cohorts", appPage(cohorts)),
            (.get, "/dashboard/apps/{appId}/customers", appPage(customers)),
            (.post, "/dashboard/apps/{appId}/customers/sync", appAction(syncCustomer)),
            (.get, "/dashboard/apps/{appId}/operations", appPage(operations)),
            (.post, "/dashboard/apps/{appId}/deliveries/{deliveryId}/replay", appAction(replayDelivery)),
        ]
    }

    // MARK: Sessions

    /// The key id a session of the configured admin key carries: `config-admin:` and a MAC of
    /// the key's hash under the session key (names which admin key, reveals nothing of it).
    var configuredAdminKeyId: String? {
        adminKeyHash.map {
            DashboardSession.configuredAdminPrefix + Base64URL.encode(key.sign(purpose: "admin-key", $0).prefix(16))
        }
    }

    /// The request's session, if its cookie is valid and its key still stands.
    func currentSession(_ request: HTTPRequest) async throws -> DashboardSession? {
        guard let token = DashboardHTTP.cookie(Self.sessionCookie, in: request),
            let session = DashboardSession.open(token: token, key: key, now: clock.now())
        else { return nil }
        if session.keyId.hasPrefix(DashboardSession.configuredAdminPrefix) {
            // Only while the configured admin key is the one the session began with: replacing
            // a leaked key in the configuration ends the sessions it opened.
            guard let current = configuredAdminKeyId else { return nil }
            return Digest.constantTimeEqual(Array(session.keyId.utf8), Array(current.utf8)) ? session : nil
        }
        let keyId = session.keyId
        let record = try await apps.read { reader in try reader.apiKey(id: keyId) }
        guard let record, record.revokedAt == nil, record.appId == session.appId,
            record.kind == (session.kind == .admin ? .admin : .secret)
        else { return nil }
        return session
    }

    func context(_ session: DashboardSession, appId: String?, section: DashboardPageContext.Section)
        -> DashboardPageContext
    {
        DashboardPageContext(
            session: session, csrfToken: session.csrfToken(key: key), appId: appId, section: section)
    }

    /// A page of one app: signed in (else to the sign-in page), allowed to see the app (else 403).
    func appPage(
        _ handler: @escaping @Sendable (HTTPRequest, DashboardSession, AppRuntime) async throws -> HTTPResponse
    ) -> Router.Handler {
        { request, context in
            guard let session = try await currentSession(request) else {
                return DashboardHTTP.redirect("/dashboard/sign-in")
            }
            return await answer(session: session, appId: context.parameters["appId"]) {
                let app = try await allowedApp(session: session, context: context)
                return try await handler(request, session, app)
            }
        }
    }

    /// A form posted to one app: signed in, same origin, the session's CSRF token, allowed app.
    func appAction(
        _ handler:
            @escaping @Sendable (HTTPRequest, RequestContext, [String: String], DashboardSession, AppRuntime)
            async throws -> HTTPResponse
    ) -> Router.Handler {
        { request, context in
            guard let session = try await currentSession(request) else {
                return DashboardPages.failure(
                    DashboardFailure(status: .forbidden, message: "Your session has ended. Sign in again."),
                    context: nil)
            }
            return await answer(session: session, appId: context.parameters["appId"]) {
                let form = try checkedForm(request, session: session)
                let app = try await allowedApp(session: session, context: context)
                return try await handler(request, context, form, session, app)
            }
        }
    }

    /// Runs `body`, answering a `DashboardFailure` (or an HTTP error) with the error page.
    func answer(session: DashboardSession?, appId: String?, _ body: () async throws -> HTTPResponse) async
        -> HTTPResponse
    {
        let pageContext = session.map {
            context($0, appId: appId.flatMap { $0.isEmpty ? nil : $0 }, section: .overview)
        }
        do {
            return try await body()
        } catch let failure as DashboardFailure {
            return DashboardPages.failure(failure, context: pageContext)
        } catch let error as HTTPError {
            return DashboardPages.failure(
                DashboardFailure(status: error.status, message: error.message), context: pageContext)
        } catch {
            return DashboardPages.failure(
                DashboardFailure(status: .internalServerError, message: "Something went wrong; try again."),
                context: pageContext)
        }
    }

    func allowedApp(session: DashboardSession, context: RequestContext) async throws -> AppRuntime {
        let appId = try context.parameter("appId")
        guard session.allows(appId: appId) else {
            throw DashboardFailure(status: .forbidden, message: "This session is for another app.")
        }
        return try await apps.app(context)
    }

    /// The form of a POST after the same-origin and CSRF checks.
    func checkedForm(_ request: HTTPRequest, session: DashboardSession) throws -> [String: String] {
        try Self.checkOrigin(request)
        let form = try DashboardHTTP.form(request)
        guard session.acceptsCSRF(form["csrf"], key: key) else {
            throw DashboardFailure(status: .forbidden, message: "The form has expired; reload the page and try again.")
        }
        return form
    }

    /// A POST whose `Origin` names another site is refused (belt and braces beside the CSRF
    /// token and SameSite=Strict). An absent or opaque (`null`) origin names none: the token
    /// decides alone.
    static func checkOrigin(_ request: HTTPRequest) throws(DashboardFailure) {
        guard let origin = request.headers["Origin"], origin != "null" else { return }
        let host = request.headers["Host"] ?? ""
        guard origin == "http://" + host || origin == "https://" + host else {
            throw DashboardFailure(status: .forbidden, message: "This form was posted from another site.")
        }
    }

    // MARK: Sign-in and the pages of no app

    @Sendable func stylesheet(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        var response = HTTPResponse(
            status: .ok, headers: ["Content-Type": "text/css; charset=utf-8"], body: Data(DashboardStylesheet.text.utf8)
        )
        response.headers["Cache-Control"] = "public, max-age=3600"
        response.headers["X-Content-Type-Options"] = "nosniff"
        return response
    }

    @Sendable func home(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        guard let session = try await currentSession(request) else {
            return DashboardHTTP.redirect("/dashboard/sign-in")
        }
        if let appId = session.appId { return DashboardHTTP.redirect("/dashboard/apps/" + DashboardHTTP.encode(appId)) }
        return DashboardHTTP.redirect("/dashboard/apps")
    }

    /// The sign-in form. Its CSRF token is bound to a short-lived random cookie set here, so a
    /// form posted from elsewhere (which has neither) is refused.
    @Sendable func signInPage(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        signInForm(message: nil, status: .ok)
    }

    func signInForm(message: String?, status: HTTPStatus) -> HTTPResponse {
        let nonce = Base64URL.encode(DashboardSessionKey.randomBytes(16))
        var response = DashboardHTTP.page(
            DashboardPages.signIn(csrfToken: signInToken(nonce), message: message), status: status)
        response.headers.add(
            name: "Set-Cookie",
            value: DashboardHTTP.setCookie(
                name: Self.signInCookie, value: nonce, maxAgeSeconds: 900, secure: secureCookies))
        return response
    }

    func signInToken(_ nonce: String) -> String {
        Base64URL.encode(key.sign(purpose: "sign-in", Array(nonce.utf8)))
    }

    @Sendable func signIn(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let form: [String: String]
        do {
            try Self.checkOrigin(request)
            form = try DashboardHTTP.form(request)
        } catch {
            return DashboardPages.failure(error, context: nil)
        }
        guard let nonce = DashboardHTTP.cookie(Self.signInCookie, in: request), nonce.utf8.count <= 64,
            let presented = form["csrf"], presented.utf8.count <= 128,
            Digest.constantTimeEqual(Array(presented.utf8), Array(signInToken(nonce).utf8))
        else {
            return signInForm(message: "The sign-in form expired; please try again.", status: .forbidden)
        }
        let presentedKey = (form["key"] ?? "").trimmingCharacters(in: .whitespaces)
        guard !presentedKey.isEmpty, presentedKey.utf8.count <= 256,
            let session = try await verifiedSession(key: presentedKey)
        else {
            // One answer for unknown, revoked and public keys: the form says nothing about which.
            return signInForm(
                message: "That key cannot sign in: use an app's secret key or an admin key.", status: .unauthorized)
        }
        let token = session.token(key: key)
        return DashboardHTTP.redirect(
            "/dashboard",
            cookies: [
                DashboardHTTP.setCookie(
                    name: Self.sessionCookie, value: token, maxAgeSeconds: sessionSeconds, secure: secureCookies),
                DashboardHTTP.setCookie(name: Self.signInCookie, value: "", maxAgeSeconds: 0, secure: secureCookies),
            ])
    }

    /// A session for `presentedKey` when it is the configured admin key, a stored admin key or
    /// an app's secret key that stands (compared by SHA-256 in constant time, as the API does).
    func verifiedSession(key presentedKey: String) async throws -> DashboardSession? {
        let hash = APIKeys.hash(presentedKey)
        let now = clock.now()
        if let adminKeyHash, Digest.constantTimeEqual(adminKeyHash, Array(hash.utf8)) {
            guard let keyId = configuredAdminKeyId else { return nil }
            return .begin(kind: .admin, appId: nil, keyId: keyId, now: now, lifetimeSeconds: sessionSeconds)
        }
        let record = try await apps.read { reader in try reader.apiKey(hash: hash) }
        guard let record, record.revokedAt == nil, Digest.constantTimeEqual(Array(record.hash.utf8), Array(hash.utf8))
        else { return nil }
        switch record.kind {
        case .admin:
            return .begin(kind: .admin, appId: nil, keyId: record.id, now: now, lifetimeSeconds: sessionSeconds)
        case .secret:
            guard let appId = record.appId else { return nil }
            return .begin(kind: .app, appId: appId, keyId: record.id, now: now, lifetimeSeconds: sessionSeconds)
        case .public:
            return nil
        }
    }

    @Sendable func signOut(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        let clear = DashboardHTTP.setCookie(
            name: Self.sessionCookie, value: "", maxAgeSeconds: 0, secure: secureCookies)
        guard let session = try await currentSession(request) else {
            return DashboardHTTP.redirect("/dashboard/sign-in", cookies: [clear])
        }
        do {
            _ = try checkedForm(request, session: session)
        } catch let failure as DashboardFailure {
            return DashboardPages.failure(failure, context: self.context(session, appId: session.appId, section: .apps))
        }
        return DashboardHTTP.redirect("/dashboard/sign-in", cookies: [clear])
    }

    @Sendable func appList(_ request: HTTPRequest, _ context: RequestContext) async throws -> HTTPResponse {
        guard let session = try await currentSession(request) else {
            return DashboardHTTP.redirect("/dashboard/sign-in")
        }
        guard session.kind == .admin else {
            return DashboardHTTP.redirect("/dashboard/apps/" + DashboardHTTP.encode(session.appId ?? ""))
        }
        let records = try await apps.read { reader in try reader.apps() }
        return DashboardHTTP.page(
            DashboardPages.apps(records, context: self.context(session, appId: nil, section: .apps)))
    }
}
