import Foundation
import Testing

@testable import HTTPServer

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// "task" when running inside a Swift task, "thread" on a plain thread (libmicrohttpd's).
private func whereRunning() -> String {
    withUnsafeCurrentTask { $0 == nil ? "thread" : "task" }
}

/// Adds `X-Seen: immediate` or `X-Seen: async` (whichever path ran) and refuses requests with
/// `X-Deny` (401). Counts the calls of each path.
private struct Marking: ImmediateMiddleware {
    let immediateCalls = Locked(0)
    let asyncCalls = Locked(0)

    func handle(_ request: HTTPRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        asyncCalls.withLock { $0 += 1 }
        if request.headers.contains("X-Deny") { throw HTTPError.unauthorized() }
        var response = try await next(request, context)
        response.headers.add(name: "X-Seen", value: "async")
        return response
    }

    func handleImmediately(_ request: HTTPRequest, context: RequestContext, next: ImmediateNext) throws
        -> HTTPResponse?
    {
        immediateCalls.withLock { $0 += 1 }
        if request.headers.contains("X-Deny") { throw HTTPError.unauthorized() }
        guard var response = try next(request, context) else { return nil }
        response.headers.add(name: "X-Seen", value: "immediate")
        return response
    }
}

/// Defers requests carrying `X-Wait` to the async path (as an authentication middleware does
/// for a key it must look up), and attaches a caller to the context on both paths.
private struct Deferring: ImmediateMiddleware {
    enum CallerKey: RequestContextKey { typealias Value = String }

    func handle(_ request: HTTPRequest, context: RequestContext, next: Next) async throws -> HTTPResponse {
        var context = context
        context[CallerKey.self] = request.headers.contains("X-Wait") ? "looked-up" : "header"
        return try await next(request, context)
    }

    func handleImmediately(_ request: HTTPRequest, context: RequestContext, next: ImmediateNext) throws
        -> HTTPResponse?
    {
        if request.headers.contains("X-Wait") { return nil }
        var context = context
        context[CallerKey.self] = "header"
        return try next(request, context)
    }
}

private func immediateRouter(accessLog: AccessLogger? = nil, marking: Marking = Marking()) -> Router {
    var router = makeTestRouter(accessLog: accessLog)
    router.use(marking)
    router.use(Deferring())
    router.addImmediate(.get, "/now") { _, context in
        .text("\(whereRunning()) \(context[Deferring.CallerKey.self] ?? "-")")
    }
    router.addImmediate(.get, "/now/{name}") { request, context in
        .text("\(whereRunning()) \(try context.parameter("name")) \(request.queryValue("q") ?? "")")
    }
    router.get("/later") { _, _ in .text(whereRunning()) }
    router.addImmediate(.post, "/now/echo") { request, _ in
        HTTPResponse(status: .ok, headers: ["Content-Type": "application/octet-stream"], body: request.body)
    }
    router.addImmediate(.get, "/now-fail/http") { _, _ in
        throw HTTPError(status: .conflict, code: "already_exists", message: "The thing exists.")
    }
    router.addImmediate(.get, "/now-fail/other") { _, _ in
        struct Secret: Error { let token = "s3cr3t" }
        throw Secret()
    }
    router.add(.get, "/either", .immediate({ _, _ in .text(whereRunning()) }))
    return router
}

@Suite struct ImmediateRouterTests {
    func text(_ response: HTTPResponse?) -> String? { response.map { String(decoding: $0.body, as: UTF8.self) } }

    /// `respondImmediately` called from a plain thread, as libmicrohttpd's are.
    func immediately(_ responder: Responder, _ method: HTTPMethod, _ target: String, headers: HTTPHeaders = [:])
        async throws -> HTTPResponse?
    {
        let request = HTTPRequest(method: method, target: target, headers: headers)
        return try await onThread { responder.respondImmediately(to: request) }
    }

    @Test func immediateRoutesAnswerOnTheCallingThread() async throws {
        let responder = immediateRouter().buildResponder()
        #expect(responder.answersImmediately)
        let response = try #require(try await immediately(responder, .get, "/now/a?q=1"))
        #expect(text(response) == "thread a 1")
        #expect(response.headers["X-Seen"] == "immediate")
        #expect(response.headers["X-Request-Id"].map(RequestID.isValid) == true)
        let either = try await immediately(responder, .get, "/either")
        #expect(text(either) == "thread")
        // An async route is not answered here.
        let later = try await immediately(responder, .get, "/later")
        #expect(later == nil)
    }

    @Test func theAsyncPathServesImmediateRoutesToo() async {
        let responder = immediateRouter().buildResponder()
        let response = await responder.respond(to: HTTPRequest(method: .get, target: "/now/a?q=1"))
        #expect(text(response) == "task a 1")
        #expect(response.headers["X-Seen"] == "async")
    }

    @Test func unmatchedRequestsAreAnsweredImmediately() async throws {
        let responder = immediateRouter().buildResponder()
        let missing = try #require(try await immediately(responder, .get, "/nope"))
        #expect(missing.status == .notFound)
        #expect(missing.headers["X-Seen"] == nil)  // the error passed through the middleware
        let wrong = try #require(try await immediately(responder, .delete, "/now"))
        #expect(wrong.status == .methodNotAllowed)
        #expect(wrong.headers["Allow"] == "GET, HEAD")
        let bad = try #require(try await immediately(responder, .get, "/now/%2e%2e"))
        #expect(bad.status == .badRequest)
    }

    @Test func errorsMapLikeAsyncOnes() async throws {
        let responder = immediateRouter().buildResponder()
        for (path, status) in [("/now-fail/http", HTTPStatus.conflict), ("/now-fail/other", .internalServerError)] {
            let immediate = try #require(try await immediately(responder, .get, path))
            let async = await responder.respond(to: HTTPRequest(method: .get, target: path))
            #expect(immediate.status == status)
            #expect(async.status == status)
            #expect(immediate.body == async.body)
            #expect(immediate.headers["Content-Type"] == "application/json")
            #expect(!(text(immediate) ?? "").contains("s3cr3t"))
        }
    }

    @Test func middlewareRunsOnTheImmediatePathAndCanRefuse() async throws {
        let marking = Marking()
        let responder = immediateRouter(marking: marking).buildResponder()
        let denied = try #require(try await immediately(responder, .get, "/now", headers: ["X-Deny": "1"]))
        #expect(denied.status == .unauthorized)
        _ = try await immediately(responder, .get, "/now")
        #expect(marking.immediateCalls.withLock { $0 } == 2)
        #expect(marking.asyncCalls.withLock { $0 } == 0)
    }

    @Test func aDeferredRequestGoesThroughTheAsyncChainOnce() async throws {
        let marking = Marking()
        let responder = immediateRouter(marking: marking).buildResponder()
        let deferred = try await immediately(responder, .get, "/now", headers: ["X-Wait": "1"])
        #expect(deferred == nil)
        let response = await responder.respond(
            to: HTTPRequest(method: .get, target: "/now", headers: ["X-Wait": "1"]))
        #expect(text(response) == "task looked-up")
        #expect(response.headers.values(for: "X-Seen") == ["async"])
        #expect(marking.asyncCalls.withLock { $0 } == 1)
        let plain = try await immediately(responder, .get, "/now")
        #expect(text(plain) == "thread header")
    }

    @Test func middlewareWithoutAnImmediatePathKeepsEverythingAsync() async throws {
        var router = immediateRouter()
        router.use(MiddlewareFunction { request, context, next in try await next(request, context) })
        let responder = router.buildResponder()
        #expect(!responder.answersImmediately)
        let now = try await immediately(responder, .get, "/now")
        let missing = try await immediately(responder, .get, "/nope")
        #expect(now == nil && missing == nil)
        #expect(text(await responder.respond(to: HTTPRequest(method: .get, target: "/now"))) == "task header")
    }

    @Test func accessLogIsTheSameOnBothPaths() async throws {
        let entries = Locked<[AccessLogEntry]>([])
        let responder = immediateRouter(accessLog: { entry in entries.withLock { $0.append(entry) } })
            .buildResponder()
        _ = try await immediately(responder, .get, "/now/x?token=t0ps3cret", headers: ["X-Request-Id": "rid-1"])
        _ = await responder.respond(to: HTTPRequest(method: .get, target: "/now/x", headers: ["X-Request-Id": "rid-2"]))
        _ = try await immediately(responder, .get, "/missing")
        let logged = entries.withLock { $0 }
        #expect(logged.map(\.route) == ["/now/{name}", "/now/{name}", nil])
        #expect(logged.map(\.status) == [200, 200, 404])
        #expect(logged.map(\.requestID).prefix(2) == ["rid-1", "rid-2"])
        #expect(!logged[0].jsonLine.contains("t0ps3cret"))
    }

    @Test func literalRoutesMatchAsBefore() async throws {
        var router = Router()
        router.addImmediate(.get, "/a/b") { _, _ in .text("get literal") }
        router.add(.head, "/a/{x}") { _, _ in .text("head parameter") }
        router.get("/a/{x}") { _, _ in .text("get parameter") }
        router.addImmediate(.get, "/caf\u{E9}") { _, _ in .text("cafe") }
        let responder = router.buildResponder()
        #expect(text(try await immediately(responder, .get, "/a/b")) == "get literal")
        // Escapes are decoded before matching; the literal still wins over the parameter.
        #expect(text(try await immediately(responder, .get, "/a/%62")) == "get literal")
        // A HEAD route beats the GET fallback, even a literal one.
        #expect(text(await responder.respond(to: HTTPRequest(method: .head, target: "/a/b"))) == "head parameter")
        #expect(text(await responder.respond(to: HTTPRequest(method: .get, target: "/a/c"))) == "get parameter")
        #expect(text(try await immediately(responder, .get, "/caf%C3%A9")) == "cafe")
        #expect(text(try await immediately(responder, .head, "/caf%C3%A9")) == "cafe")
    }

    @Test func generatedRequestIDsAreVersion4UUIDs() {
        let ids = (0..<5000).map { _ in RequestID.generate() }
        #expect(Set(ids).count == ids.count)
        for id in ids.prefix(200) {
            #expect(RequestID.isValid(id))
            let parsed = UUID(uuidString: id)
            #expect(parsed?.uuidString.lowercased() == id)
            let characters = Array(id)
            #expect(characters[14] == "4")
            #expect("89ab".contains(characters[19]))
        }
    }
}

/// The immediate path over loopback.
@Suite struct ImmediateServerTests {
    let responder = immediateRouter().buildResponder()

    @Test func immediateRoutesRunOnTheServerThread() async throws {
        try await withServer(responder: responder) { server in
            let now = try await fetch(server, "/now/b?q=2")
            #expect(now.status == 200)
            #expect(now.text == "thread b 2")
            #expect(now.header("X-Seen") == "immediate")
            #expect(now.header("X-Request-Id").map(RequestID.isValid) == true)
            let later = try await fetch(server, "/later")
            #expect(later.text == "task")
            #expect(later.header("X-Seen") == "async")
            let deferred = try await fetch(server, "/now", headers: ["X-Wait": "1"])
            #expect(deferred.text == "task looked-up")
            let echoed = try await fetch(server, "/now", headers: ["X-Request-Id": "client-id.7"])
            #expect(echoed.header("X-Request-Id") == "client-id.7")
        }
    }

    @Test func errorsAndRefusalsOverTheWire() async throws {
        try await withServer(responder: responder) { server in
            let conflict = try await fetch(server, "/now-fail/http")
            #expect(conflict.status == 409)
            #expect(conflict.errorCode == "already_exists")
            let other = try await fetch(server, "/now-fail/other")
            #expect(other.status == 500)
            #expect(other.errorCode == "internal_error")
            #expect(!other.text.contains("s3cr3t"))
            let denied = try await fetch(server, "/now", headers: ["X-Deny": "1"])
            #expect(denied.status == 401)
            #expect(denied.errorCode == "unauthorized")
            let missing = try await fetch(server, "/nowhere")
            #expect(missing.status == 404)
        }
    }

    @Test func limitsStillApply() async throws {
        try await withServer(testConfiguration(maxBodySize: 1000), responder: responder) { server in
            let small = Data(repeating: 0x61, count: 1000)
            let echoed = try await fetch(server, "/now/echo", method: "POST", body: small)
            #expect(echoed.status == 200 && echoed.body == small)
            let big = try await fetch(server, "/now/echo", method: "POST", body: Data(repeating: 0x62, count: 5000))
            #expect(big.status == 413)
            #expect(big.errorCode == "content_too_large")
            let headers = try await onThread { () -> Int? in
                let connection = try RawConnection(port: server.port)
                let filler = String(repeating: "v", count: 64 * 1024)
                try? connection.send("GET /now HTTP/1.1\r\nHost: t\r\nX-Filler: \(filler)\r\n\r\n")
                return connection.readResponse(timeout: 5)?.status
            }
            #expect(headers.map { (400..<500).contains($0) } == true)
            #expect(try await fetch(server, "/now").status == 200)
        }
    }

    @Test func keepAliveMixesImmediateAndAsyncRoutes() async throws {
        try await withServer(responder: responder) { server in
            let bodies = try await onThread { () -> [String] in
                let connection = try RawConnection(port: server.port)
                var bodies: [String] = []
                for path in ["/now/1", "/later", "/now/2", "/now/3", "/later", "/now/4"] {
                    try connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
                    guard let response = connection.readResponse(), response.status == 200 else { break }
                    bodies.append(String(decoding: response.body, as: UTF8.self))
                }
                return bodies
            }
            #expect(bodies == ["thread 1 ", "task", "thread 2 ", "thread 3 ", "task", "thread 4 "])
        }
    }

    @Test func pipelinedImmediateRequestsAreAnswered() async throws {
        /// Every complete response at the start of `data`.
        @Sendable func responses(_ data: Data) -> [RawResponse] {
            var rest = data
            var found: [RawResponse] = []
            while let response = RawResponse.parse(rest) {
                found.append(response)
                rest = Data(rest.dropFirst(response.head.utf8.count + 4 + response.body.count))
            }
            return found
        }
        try await withServer(responder: responder) { server in
            let bodies = try await onThread { () -> [String] in
                let connection = try RawConnection(port: server.port)
                try connection.send((1...3).map { "GET /now/p\($0) HTTP/1.1\r\nHost: t\r\n\r\n" }.joined())
                let (data, _) = connection.read(until: Date().addingTimeInterval(10)) { responses($0).count >= 3 }
                return responses(data).map { String(decoding: $0.body, as: UTF8.self) }
            }
            #expect(bodies == ["thread p1 ", "thread p2 ", "thread p3 "])
        }
    }

    @Test func manyConcurrentConnections() async throws {
        let configuration = HTTPServer.Configuration(
            host: "127.0.0.1", port: 0, threadPoolSize: 2, connectionLimit: 200, connectionTimeout: .seconds(10))
        try await withServer(configuration, responder: responder) { server in
            let good = try await withThrowingTaskGroup(of: Int.self) { group in
                for client in 0..<100 {
                    group.addTask {
                        try await onThread { () -> Int in
                            let connection = try RawConnection(port: server.port)
                            var good = 0
                            for index in 0..<20 {
                                let path = index % 5 == 4 ? "/later" : "/now/c\(client)-\(index)"
                                try connection.send("GET \(path) HTTP/1.1\r\nHost: t\r\n\r\n")
                                guard let response = connection.readResponse(), response.status == 200 else { break }
                                let body = String(decoding: response.body, as: UTF8.self)
                                if body == (index % 5 == 4 ? "task" : "thread c\(client)-\(index) ") { good += 1 }
                            }
                            return good
                        }
                    }
                }
                return try await group.reduce(0, +)
            }
            #expect(good == 2000)
        }
    }

    @Test func drainingResponsesCloseTheConnection() async throws {
        let server = try HTTPServer(configuration: testConfiguration(), responder: responder)
        // A keep-alive connection the server has accepted before the stop.
        let connection = try RawConnection(port: server.port)
        let first = try await onThread { () -> RawResponse? in
            try connection.send("GET /now HTTP/1.1\r\nHost: t\r\n\r\n")
            return connection.readResponse(timeout: 5)
        }
        #expect(first?.status == 200)
        #expect(first?.header("Connection")?.lowercased() != "close")
        // The first request may still count as in flight just after its answer (its completion
        // runs on the server's thread): wait it out, or the wait below would not be for the slow
        // one, and the stop would close the listening socket before the slow one connects.
        for _ in 0..<2000 where server.inFlightRequestCount > 0 {
            try await Task.sleep(for: .milliseconds(5))
        }
        async let slow = fetch(server, "/sleep/800")
        for _ in 0..<2000 where server.inFlightRequestCount < 1 {
            try await Task.sleep(for: .milliseconds(5))
        }
        // While stop() waits for the slow request, an immediate answer says Connection: close.
        async let stopped: Void = server.stop()
        try await Task.sleep(for: .milliseconds(200))
        let second = try await onThread { () -> RawResponse? in
            try connection.send("GET /now HTTP/1.1\r\nHost: t\r\n\r\n")
            return connection.readResponse(timeout: 5)
        }
        #expect(second?.status == 200)
        #expect(second?.header("Connection")?.lowercased() == "close")
        #expect(try await slow.status == 200)
        await stopped
        #expect(server.inFlightRequestCount == 0)
    }
}
