import AppStoreModels
import Foundation

#if canImport(FoundationNetworking)
    import FoundationNetworking
#endif

/// Sends one notification body to a URL and reports Apple's classification of the attempt.
/// Injected so tests deliver in process and count attempts.
/// - Note: Implementations must be `Sendable`.
public protocol NotificationTransport: Sendable {
    func post(_ body: Data, to url: URL) async -> SendAttemptResult
}

/// Delivery over HTTP with URLSession: `200` is success, as Apple counts it; any other status
/// is `UNSUCCESSFUL_HTTP_RESPONSE_CODE`.
/// - Note: Immutable; `Sendable` (URLSession is thread-safe).
public struct URLSessionNotificationTransport: NotificationTransport {
    public let timeout: TimeInterval
    private let session: URLSession

    public init(timeout: TimeInterval = 10) {
        self.timeout = timeout
        let configuration = URLSessionConfiguration.ephemeral
        configuration.timeoutIntervalForRequest = timeout
        configuration.httpCookieStorage = nil
        session = URLSession(configuration: configuration)
    }

    public func post(_ body: Data, to url: URL) async -> SendAttemptResult {
        var request = URLRequest(url: url, timeoutInterval: timeout)
        request.httpMethod = "POST"
        request.httpBody = body
        request.setValue("application/json", forHTTPHeaderField: "Content-Type")
        request.setValue("App Store Simulator (Storekeeper)", forHTTPHeaderField: "User-Agent")
        let session = self.session
        return await withCheckedContinuation { continuation in
            session.dataTask(with: request) { _, response, error in
                if let error = error as? URLError {
                    continuation.resume(returning: Self.classify(error))
                } else if error != nil {
                    continuation.resume(returning: .other)
                } else if let http = response as? HTTPURLResponse {
                    continuation.resume(returning: http.statusCode == 200 ? .success : .unsuccessfulHttpResponseCode)
                } else {
                    continuation.resume(returning: .invalidResponse)
                }
            }.resume()
        }
    }

    static func classify(_ error: URLError) -> SendAttemptResult {
        switch error.code {
        case .timedOut: .timedOut
        case .secureConnectionFailed, .serverCertificateUntrusted, .serverCertificateHasBadDate,
            .serverCertificateNotYetValid, .serverCertificateHasUnknownRoot, .clientCertificateRejected:
            .tlsIssue
        case .httpTooManyRedirects, .redirectToNonExistentLocation: .circularRedirect
        case .networkConnectionLost: .prematureClose
        case .cannotConnectToHost, .cannotFindHost, .dnsLookupFailed, .notConnectedToInternet: .noResponse
        case .badServerResponse, .cannotParseResponse: .invalidResponse
        default: .socketIssue
        }
    }
}
