import AppStoreClient
import Foundation
import GooglePlayClient
import GooglePlayTrust

/// Where this server reaches Google, for every app's Play side: the Play Developer API's base
/// URL (Google's, or the Play simulator's for tests and the demo), the key set that signs push
/// tokens (Google's certificate URL, a URL of the simulator, or a file), and the HTTP transport.
///
/// One `GoogleKeySetCache` serves every app: Google signs every push with the same keys.
/// - Note: Immutable; `Sendable`. The key cache is an actor.
public struct PlayServiceConfiguration: Sendable {
    public let apiBaseURL: URL
    public let keySet: GoogleKeySetCache
    public let transport: any HTTPTransport
    public let retryPolicy: RetryPolicy
    /// Clock skew accepted on a push token's `exp` and `iat`.
    public let pushLeeway: TimeInterval

    public init(
        apiBaseURL: URL = PlayDeveloperAPIClient.googleBaseURL, keySet: GoogleKeySetCache,
        transport: any HTTPTransport = URLSessionTransport(), retryPolicy: RetryPolicy = RetryPolicy(),
        pushLeeway: TimeInterval = 60
    ) {
        self.apiBaseURL = apiBaseURL
        self.keySet = keySet
        self.transport = transport
        self.retryPolicy = retryPolicy
        self.pushLeeway = pushLeeway
    }

    /// Google's own endpoints and published keys.
    public static func google(transport: any HTTPTransport = URLSessionTransport()) -> PlayServiceConfiguration {
        PlayServiceConfiguration(
            keySet: GoogleKeySetCache(loader: GoogleKeySetURLLoader(transport: transport)), transport: transport)
    }

    /// The push token key set from a file (`path`) or a URL (`http…`).
    public static func keySetLoader(_ location: String, transport: any HTTPTransport = URLSessionTransport())
        -> any GoogleKeySetLoader
    {
        if location.hasPrefix("http://") || location.hasPrefix("https://"), let url = URL(string: location) {
            return GoogleKeySetURLLoader(url: url, transport: transport)
        }
        return GoogleKeySetFile(path: location)
    }
}
