import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How `storekeeper admin` talks to a running server: one request at a time, the key in
/// `Authorization: Bearer …`, the answer refused beyond `maxResponseBytes`. A non-2xx answer
/// becomes an `AdminFailure` with the server's error code; the key never appears in anything
/// this type prints or throws.
/// - Note: Immutable; `Sendable` (URLSession is thread-safe).
struct AdminClient: Sendable {
    /// A 2xx answer: the body as sent (for `--json`) and the headers the CLI reads (`ETag`).
    struct Answer: Sendable {
        var status: Int
        var body: Data
        var etag: String?
    }

    /// Nothing the admin API answers legitimately comes near this (a page is at most a few
    /// hundred rows).
    static let maxResponseBytes = 16 << 20

    let baseURL: URL
    private let key: String
    private let session: URLSession

    init(baseURL: URL, key: String) {
        self.baseURL = baseURL
        self.key = key
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 30
        configuration.httpCookieStorage = nil
        configuration.urlCache = nil
        session = URLSession(configuration: configuration)
    }

    /// `path` is made of segments the caller has already percent-encoded (`AdminClient.segment`).
    func send(
        _ method: String, _ path: String, query: [(String, String)] = [], body: Data? = nil,
        headers: [String: String] = [:]
    ) async throws -> Answer {
        guard var components = URLComponents(url: baseURL, resolvingAgainstBaseURL: false) else {
            throw AdminFailure.local("--url is not a URL")
        }
        components.percentEncodedPath = components.percentEncodedPath.trimmingSuffix("/") + path
        if !query.isEmpty { components.queryItems = query.map { URLQueryItem(name: $0.0, value: $0.1) } }
        guard let url = components.url else { throw AdminFailure.local("cannot build a URL for \(path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization")
        request.setValue("application/json", forHTTPHeaderField: "Accept")
        for (name, value) in headers { request.setValue(value, forHTTPHeaderField: name) }
        if let body {
            request.httpBody = body
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let data: Data
        let response: URLResponse
        do {
            (data, response) = try await session.data(for: request)
        } catch {
            // The URL error's text names the URL only, never the request's headers.
            throw AdminFailure.local("cannot reach \(baseURL.absoluteString): \(error.localizedDescription)")
        }
        guard let http = response as? HTTPURLResponse else { throw AdminFailure.local("not an HTTP answer") }
        guard data.count <= Self.maxResponseBytes else {
            throw AdminFailure.local("the answer exceeds \(Self.maxResponseBytes) bytes")
        }
        guard (200..<300).contains(http.statusCode) else {
            throw AdminFailure.server(status: http.statusCode, body: data)
        }
        return Answer(status: http.statusCode, body: data, etag: http.value(forHTTPHeaderField: "ETag"))
    }

    /// One path segment, percent-encoded (an app user id may hold `/` or `?`).
    static func segment(_ value: String) -> String {
        var allowed = CharacterSet.alphanumerics
        allowed.insert(charactersIn: "-._~")
        return value.addingPercentEncoding(withAllowedCharacters: allowed) ?? value
    }
}

/// Why an admin command failed: the server's answer (code, HTTP status, message) or a local
/// problem (unreachable server, unreadable file). Printed as one line; exit 1.
struct AdminFailure: Error, CustomStringConvertible {
    let description: String

    static func local(_ text: String) -> AdminFailure { AdminFailure(description: oneLine(text)) }

    /// `app_exists (HTTP 409): An app with that id exists.`, from `{"error":{"code","message"}}`.
    static func server(status: Int, body: Data) -> AdminFailure {
        let error = (try? JSONSerialization.jsonObject(with: body) as? [String: Any])?["error"] as? [String: Any]
        let code = error?["code"] as? String ?? "http_error"
        let message = error?["message"] as? String ?? "no message"
        return AdminFailure(description: oneLine("\(code) (HTTP \(status)): \(message)"))
    }

    /// Bounded and on one line, whatever the server sent.
    private static func oneLine(_ text: String) -> String {
        let flat = text.split(whereSeparator: \.isNewline).joined(separator: " ")
        return flat.count > 500 ? String(flat.prefix(500)) + "…" : flat
    }
}

extension String {
    fileprivate func trimmingSuffix(_ suffix: String) -> String {
        hasSuffix(suffix) ? String(dropLast(suffix.count)) : self
    }
}
