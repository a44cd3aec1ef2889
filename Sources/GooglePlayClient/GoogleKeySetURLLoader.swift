import AppStoreClient
import Foundation
import GooglePlayTrust

/// Loads a JWKS over HTTP(S): Google's `https://www.googleapis.com/oauth2/v3/certs`, or the Play
/// simulator's endpoint. One attempt per load (the cache decides when to try again), body
/// bounded by `GoogleKeySet.maximumBytes`.
/// - Note: Immutable; `Sendable`.
public struct GoogleKeySetURLLoader: GoogleKeySetLoader {
    public static let googleCertsURL = URL(string: "https://www.googleapis.com/oauth2/v3/certs")!

    public let url: URL
    private let transport: any HTTPTransport

    public init(url: URL = googleCertsURL, transport: any HTTPTransport = URLSessionTransport()) {
        self.url = url
        self.transport = transport
    }

    public var origin: String { url.absoluteString }

    public func loadKeySet() async throws(GooglePlayTrustError) -> Data {
        let request = HTTPTransportRequest(
            method: "GET", url: url, headers: [("Accept", "application/json")], timeout: .seconds(10))
        let response: HTTPTransportResponse
        do {
            response = try await transport.send(request, maximumResponseBytes: GoogleKeySet.maximumBytes)
        } catch {
            throw GooglePlayTrustError(
                .keySetUnavailable, "cannot fetch the key set from \(url.absoluteString): \(error)")
        }
        guard response.status == 200 else {
            throw GooglePlayTrustError(
                .keySetUnavailable, "the key set URL \(url.absoluteString) answered HTTP \(response.status)")
        }
        return response.body
    }
}
