import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// How the demo talks to its own Storekeeper server: as the app (public key), the app's
/// backend (secret key) and the operator (admin key) would, over HTTP on loopback.
/// - Note: Immutable; `Sendable` (URLSession is thread-safe).
struct DemoHTTPClient: Sendable {
    /// An answer: status and JSON body (empty object when the body is not a JSON object).
    struct Answer: @unchecked Sendable {
        // @unchecked Sendable is safe: `json` is built once from the body and never mutated.
        let status: Int
        let json: [String: Any]
    }

    let baseURL: String
    private let session: URLSession

    init(baseURL: String) {
        self.baseURL = baseURL
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = 15
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration)
    }

    func send(_ method: String, _ path: String, key: String?, json: [String: Any]? = nil) async throws -> Answer {
        guard let url = URL(string: baseURL + path) else { throw DemoFailure("bad URL \(baseURL + path)") }
        var request = URLRequest(url: url)
        request.httpMethod = method
        if let key { request.setValue("Bearer \(key)", forHTTPHeaderField: "Authorization") }
        if let json {
            request.httpBody = try JSONSerialization.data(withJSONObject: json)
            request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        }
        let (data, response) = try await session.data(for: request)
        let status = (response as? HTTPURLResponse)?.statusCode ?? 0
        let object = (try? JSONSerialization.jsonObject(with: data)) as? [String: Any] ?? [:]
        return Answer(status: status, json: object)
    }

    /// `send`, refusing any status but `expected`.
    @discardableResult
    func expect(_ expected: Int, _ method: String, _ path: String, key: String?, json: [String: Any]? = nil)
        async throws -> Answer
    {
        let answer = try await send(method, path, key: key, json: json)
        guard answer.status == expected else {
            let code = (answer.json["error"] as? [String: Any])?["code"] as? String ?? "no error code"
            throw DemoFailure("\(method) \(path) answered \(answer.status) (\(code))")
        }
        return answer
    }
}

/// Why the demo could not start or a demo customer's step failed.
struct DemoFailure: Error, CustomStringConvertible {
    let description: String
    init(_ description: String) { self.description = description }
}
