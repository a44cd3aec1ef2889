import AppStoreClient
import Foundation
import GooglePlayClient
import GooglePlayTrust
import StorekeeperIngestion

extension ServerConfiguration {
    /// How this server reaches Google Play: `playApiBaseURL` and `playPushKeySet` when set,
    /// Google's own endpoints and certificates otherwise. `set` checked both values.
    public func playService(transport: any HTTPTransport = URLSessionTransport()) -> PlayServiceConfiguration {
        let baseURL = playApiBaseURL.flatMap { URL(string: $0) } ?? PlayDeveloperAPIClient.googleBaseURL
        let loader =
            playPushKeySet.map { PlayServiceConfiguration.keySetLoader($0, transport: transport) }
            ?? GoogleKeySetURLLoader(transport: transport)
        return PlayServiceConfiguration(
            apiBaseURL: baseURL, keySet: GoogleKeySetCache(loader: loader), transport: transport)
    }
}
