import Foundation
import Testing

@testable import HTTPServer

/// The router answers in process, without a server.
@Suite struct RouterTests {
    let responder = makeTestRouter().buildResponder()

    func body(_ response: HTTPResponse) -> String { String(decoding: response.body, as: UTF8.self) }

    func errorCode(_ response: HTTPResponse) -> String? {
        let object = try? JSONSerialization.jsonObject(with: response.body) as? [String: Any]
        return (object?["error"] as? [String: Any])?["code"] as? String
    }

    @Test func matchesParametersAndDecodesThem() async {
        let response = await responder.respond(
            to: HTTPRequest(method: .get, target: "/v1/apps/com.example%20app/customers/c-1?tag=a&tag=b+c"))
        #expect(response.status == .ok)
        #expect(body(response) == "app=com.example app customer=c-1 tags=a,b c")
    }

    @Test func literalSegmentBeatsParameter() async {
        let response = await responder.respond(to: HTTPRequest(method: .get, target: "/v1/apps/x/customers/me"))
        #expect(body(response) == "literal wins")
    }

    /// Routes are looked for among those of the path's length only: routes of other lengths,
    /// registered before or after, neither shadow a match nor join the 405's `Allow`.
    @Test func routesOfOtherLengthsNeitherShadowNorAllow() async {
        var router = Router()
        router.get("/{y}/b/c") { _, _ in .text("y/b/c") }
        router.get("/a/{x}") { _, _ in .text("a/x") }
        router.post("/a/{x}/c") { _, _ in .text("post a/x/c") }
        router.get("/a/b/c") { _, _ in .text("a/b/c") }
        router.put("/a/b/c/d") { _, _ in .text("a/b/c/d") }
        let responder = router.buildResponder()
        // Escaped, so the all-literal lookup is passed by and the general match decides.
        func answer(_ method: HTTPMethod, _ target: String) async -> HTTPResponse {
            await responder.respond(to: HTTPRequest(method: method, target: target))
        }
        #expect(body(await answer(.get, "/a/%62/c")) == "a/b/c")
        #expect(body(await answer(.get, "/z/%62/c")) == "y/b/c")
        #expect(body(await answer(.post, "/a/%62/c")) == "post a/x/c")
        #expect(body(await answer(.get, "/a/%62")) == "a/x")
        let other = await answer(.delete, "/a/%62/c")
        #expect(other.status == .methodNotAllowed)
        #expect(other.headers["allow"] == "GET, POST, HEAD")
        #expect(await answer(.get, "/a/b/c/d/e").status == .notFound)
        // A raw "/" carrying a combining mark still ends a segment.
        #expect(await answer(.get, "/a/q/\u{301}").status == .notFound)
        #expect(body(await answer(.get, "/a/q\u{301}")) == "a/x")
    }

    @Test func headFallsBackToGet() async {
        let response = await responder.respond(to: HTTPRequest(method: .head, target: "/health"))
        #expect(response.status == .ok)
    }

    @Test func notFoundAndMethodNotAllowed() async {
        let missing = await responder.respond(to: HTTPRequest(method: .get, target: "/nope"))
        #expect(missing.status == .notFound)
        #expect(errorCode(missing) == "not_found")
        let wrongMethod = await responder.respond(to: HTTPRequest(method: .delete, target: "/health"))
        #expect(wrongMethod.status == .methodNotAllowed)
        #expect(wrongMethod.headers["allow"] == "GET, HEAD")
        #expect(errorCode(wrongMethod) == "method_not_allowed")
    }

    @Test(arguments: [
        "/files/..", "/files/%2e%2e", "/files/a%2Fb", "/files/%2F", "/files/%00", "/files/a%0Ab",
        "/files/..%2F..%2Fetc%2Fpasswd", "/files/%7F", "/files/%zz", "/files/%C3",
    ])
    func unsafeParametersAreRejected(path: String) async {
        let response = await responder.respond(to: HTTPRequest(method: .get, target: path))
        #expect(response.status == .badRequest, "\(path)")
        #expect(errorCode(response) == "invalid_path_parameter" || errorCode(response) == "invalid_path")
    }

    @Test(arguments: [
        ("/files/report.v2%20final", "report.v2 final"),
        ("/files/GPA.3372-4150-9088-12345..0", "GPA.3372-4150-9088-12345..0"),
        ("/files/...", "..."), ("/files/a..b", "a..b"),
    ])
    func safeParameterPasses(path: String, value: String) async {
        let response = await responder.respond(to: HTTPRequest(method: .get, target: path))
        #expect(body(response) == "file=\(value)")
    }

    /// Every ASCII parameter of one or two characters, and every three-character one over the
    /// characters that matter: the ASCII shortcut decides as the string search does.
    @Test func asciiParametersAreCheckedAsBySearch() {
        let ascii = (0..<128).map { String(UnicodeScalar(UInt8($0))) }
        var values = ascii
        for first in ascii { for second in ascii { values.append(first + second) } }
        let special = [".", "/", "a", "\r", "\n", "\u{7F}", " ", "\t", "\u{0}"]
        for first in special {
            for second in special { for third in special { values.append(first + second + third) } }
        }
        var disagreements: [String] = []
        for value in values where Route.isSafeParameter(value) != Route.isSafeParameterBySearch(value) {
            disagreements.append(value)
        }
        #expect(disagreements == [])
        #expect(values.count == 128 + 128 * 128 + 9 * 9 * 9)
        #expect(Route.isSafeParameter("user-1") && Route.isSafeParameter("GPA.1234-5678-9012-34567..0"))
        #expect(!Route.isSafeParameter("a/b") && !Route.isSafeParameter("..") && !Route.isSafeParameter("a\u{7F}"))
        // A `/` carrying a combining mark is one character, still a `/` in a path.
        #expect(!Route.isSafeParameter("/\u{301}") && !Route.isSafeParameter("é/\u{301}"))
    }

    @Test func thrownErrorsMapToJSON() async {
        let conflict = await responder.respond(to: HTTPRequest(method: .get, target: "/fail/http"))
        #expect(conflict.status == .conflict)
        #expect(errorCode(conflict) == "already_exists")
        let other = await responder.respond(to: HTTPRequest(method: .get, target: "/fail/other"))
        #expect(other.status == .internalServerError)
        #expect(errorCode(other) == "internal_error")
        #expect(!body(other).contains("s3cr3t"))
        #expect(other.headers["Content-Type"] == "application/json")
    }

    @Test func everyResponseCarriesTheRequestID() async {
        let sent = await responder.respond(
            to: HTTPRequest(method: .get, target: "/nope", headers: ["x-request-id": "abc-123"]))
        #expect(sent.headers["X-Request-Id"] == "abc-123")
        let invalid = await responder.respond(
            to: HTTPRequest(method: .get, target: "/health", headers: ["X-Request-Id": "has space\r\n"]))
        let generated = invalid.headers["X-Request-Id"]
        #expect(generated != nil && generated != "has space\r\n" && RequestID.isValid(generated!))
    }

    @Test func middlewareRunsInOrderAndCanShortCircuit() async {
        enum CallerKey: RequestContextKey { typealias Value = String }
        struct Auth: Middleware {
            func handle(_ request: HTTPRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
                guard request.headers["Authorization"] == "Bearer good" else { throw HTTPError.unauthorized() }
                var context = context
                context[CallerKey.self] = "app-1"
                return try await next(request, context)
            }
        }
        let seenRoutes = Locked<[String]>([])
        var router = Router()
        router.use(
            MiddlewareFunction { request, context, next in
                seenRoutes.withLock { $0.append(context.route ?? "none") }
                var response = try await next(request, context)  // errors propagate outward
                response.headers.add(name: "X-Outer", value: "yes")
                return response
            })
        router.use(Auth())
        router.get("/me/{id}") { _, context in .text("\(context[CallerKey.self] ?? "?") \(try context.parameter("id"))")
        }
        let responder = router.buildResponder()

        let denied = await responder.respond(to: HTTPRequest(method: .get, target: "/me/7"))
        #expect(denied.status == .unauthorized)
        #expect(denied.headers["X-Outer"] == nil)
        let allowed = await responder.respond(
            to: HTTPRequest(method: .get, target: "/me/7", headers: ["authorization": "Bearer good"]))
        #expect(String(decoding: allowed.body, as: UTF8.self) == "app-1 7")
        #expect(allowed.headers["X-Outer"] == "yes")
        let unmatched = await responder.respond(
            to: HTTPRequest(method: .get, target: "/other", headers: ["authorization": "Bearer good"]))
        #expect(unmatched.status == .notFound)
        #expect(seenRoutes.withLock { $0 } == ["/me/{id}", "/me/{id}", "none"])
    }

    @Test func accessLogHasRouteStatusAndNoSecrets() async throws {
        let entries = Locked<[AccessLogEntry]>([])
        let responder = makeTestRouter(accessLog: { entry in entries.withLock { $0.append(entry) } })
            .buildResponder()
        _ = await responder.respond(
            to: HTTPRequest(
                method: .get, target: "/v1/apps/secret-app/customers/c9?token=t0ps3cret",
                headers: ["Authorization": "Bearer t0ps3cret", "X-Request-Id": "rid-1"]))
        _ = await responder.respond(to: HTTPRequest(method: .get, target: "/missing"))
        let logged = entries.withLock { $0 }
        #expect(logged.count == 2)
        #expect(logged[0].route == "/v1/apps/{appID}/customers/{customerID}")
        #expect(logged[0].status == 200)
        #expect(logged[0].requestID == "rid-1")
        #expect(logged[1].route == nil && logged[1].status == 404)
        let line = logged[0].jsonLine
        #expect(!line.contains("t0ps3cret") && !line.contains("secret-app"))
        let object = try #require(try JSONSerialization.jsonObject(with: Data(line.utf8)) as? [String: Any])
        #expect(object["event"] as? String == "http.access")
        #expect(object["method"] as? String == "GET")
        #expect(object["status"] as? Int == 200)
        #expect(object["request_id"] as? String == "rid-1")
        #expect(object["duration_ms"] is Double || object["duration_ms"] is Int)
    }

    @Test("an access log entry's duration is in fractional milliseconds, rounded to the microsecond")
    func accessLogDurationIsInMilliseconds() throws {
        let entry = AccessLogEntry(
            method: "GET", route: "/healthz", status: 200,
            duration: .seconds(2) + .milliseconds(1) + .microseconds(250) + .nanoseconds(400), requestID: "rid")
        #expect(entry.durationMilliseconds == 2_001.2504)
        let object = try #require(
            try JSONSerialization.jsonObject(with: Data(entry.jsonLine.utf8)) as? [String: Any])
        #expect(object["duration_ms"] as? Double == 2_001.25)
        #expect(
            AccessLogEntry(method: "GET", route: nil, status: 404, duration: .zero, requestID: "r")
                .durationMilliseconds == 0)
    }

    @Test func queryParsingKeepsRawAndRepeatedItems() {
        let request = HTTPRequest(method: .get, target: "http://example.com/a/b?x=1&x=2&flag&e=%26%3D&sp=a+b")
        #expect(request.path == "/a/b")
        #expect(request.query == "x=1&x=2&flag&e=%26%3D&sp=a+b")
        #expect(request.queryValues("x") == ["1", "2"])
        #expect(request.queryValue("flag") == "")
        #expect(request.queryValue("e") == "&=")
        #expect(request.queryValue("sp") == "a b")
        #expect(request.headers.isEmpty)
    }

    @Test func headersAreCaseInsensitiveAndOrdered() {
        var headers: HTTPHeaders = ["Set-Cookie": "a=1", "content-type": "text/plain"]
        headers.add(name: "set-cookie", value: "b=2")
        #expect(headers["SET-COOKIE"] == "a=1")
        #expect(headers.values(for: "Set-Cookie") == ["a=1", "b=2"])
        headers["Content-Type"] = "application/json"
        #expect(headers.values(for: "content-type") == ["application/json"])
        headers["set-cookie"] = nil
        #expect(!headers.contains("Set-Cookie"))
    }
}
