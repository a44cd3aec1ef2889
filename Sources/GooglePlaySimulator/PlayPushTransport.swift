import Foundation
import GooglePlayModels

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Delivers one Pub/Sub push request (body and its `Authorization: Bearer <OIDC token>`) and
/// returns the HTTP status, nil when no answer came. Injected so tests deliver in process.
/// - Note: Implementations must be `Sendable`.
public protocol PlayPushTransport: Sendable {
    func push(_ body: Data, authorization: String, to url: URL) async -> Int?
}

/// Push over HTTP with URLSession, as Pub/Sub does (a 2xx acknowledges the message).
/// - Note: Immutable; `Sendable` (URLSession is thread-safe).
public struct URLSessionPlayPushTransport: PlayPushTransport {
    private let session: URLSession
    private let timeout: TimeInterval

    public init(timeout: TimeInterval = 10) {
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration)
    }

    public func push(_ body: Data, authorization: String, to url: URL) async -> Int? {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue(authorization, forHTTPHeaderField: "Authorization")
        request.setValue(
            "APIs-Google; (+https://developers.google.com/webmasters/APIs-Google.html)",
            forHTTPHeaderField: "User-Agent")
        let session = self.session
        return await withCheckedContinuation { continuation in
            session.dataTask(with: request) { _, response, _ in
                continuation.resume(returning: (response as? HTTPURLResponse)?.statusCode)
            }.resume()
        }
    }
}

/// One push the simulator made (or would have made, with no push URL): tests read these.
/// - Note: Immutable value; `Sendable`.
public struct RecordedPlayPush: Sendable, Hashable {
    public let request: PubSubPushRequest
    public let notification: DeveloperNotification
    public let authorization: String
    /// The status the push URL answered; nil when there was no URL or no answer.
    public let status: Int?
}
