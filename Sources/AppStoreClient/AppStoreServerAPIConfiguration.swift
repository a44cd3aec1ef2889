import AppStoreModels
import Foundation

/// Where and how an `AppStoreServerAPIClient` talks to Apple for one app.
/// - Note: Immutable value; `Sendable`.
public struct AppStoreServerAPIConfiguration: Sendable {
    public static let productionBaseURL = URL(string: "https://api.storekit.itunes.apple.com")!
    public static let sandboxBaseURL = URL(string: "https://api.storekit-sandbox.itunes.apple.com")!

    public var bundleId: String
    /// The In-App Purchase key's ID (App Store Connect → Users and Access → Integrations).
    public var keyId: String
    public var issuerId: String
    /// The environment answers are expected from (and the default base URL).
    public var environment: AppStoreEnvironment
    /// Where requests go: Apple's URL for `environment` unless set (simulator, tests).
    public var baseURL: URL
    /// Where a production "transaction not found" (404 / 4040010) or a production 401 is
    /// retried; nil disables the fallback. Only endpoints whose
    /// `AppStoreServerAPIEndpoint.allowsSandboxFallback` is true use it.
    public var sandboxFallbackBaseURL: URL?
    public var retry: RetryPolicy
    /// Requests of this app in flight at once.
    public var maxConcurrentRequests: Int
    public var requestTimeout: Duration
    /// Longest accepted response body; Apple's largest pages are far below 1 MiB.
    public var maximumResponseBytes: Int
    public var userAgent: String

    /// - Throws: `invalidConfiguration` for `Xcode` / `LocalTesting` without a `baseURL`
    ///   (Apple runs no server for them) and for non-positive limits.
    public init(
        bundleId: String, keyId: String, issuerId: String, environment: AppStoreEnvironment,
        baseURL: URL? = nil, enableSandboxFallback: Bool = false, sandboxFallbackBaseURL: URL? = nil,
        retry: RetryPolicy = RetryPolicy(), maxConcurrentRequests: Int = 8,
        requestTimeout: Duration = .seconds(30), maximumResponseBytes: Int = 4 << 20,
        userAgent: String = "storekeeper/1"
    ) throws(AppStoreClientError) {
        switch (environment, baseURL) {
        case (_, let url?): self.baseURL = url
        case (.production, nil): self.baseURL = Self.productionBaseURL
        case (.sandbox, nil): self.baseURL = Self.sandboxBaseURL
        default:
            throw AppStoreClientError(
                .invalidConfiguration,
                "Apple runs no App Store Server API for the \(environment.rawValue) environment; give a base URL (simulator)"
            )
        }
        guard maxConcurrentRequests > 0, maximumResponseBytes > 0, requestTimeout > .zero else {
            throw AppStoreClientError(.invalidConfiguration, "limits must be positive")
        }
        if enableSandboxFallback || sandboxFallbackBaseURL != nil {
            guard environment == .production else {
                throw AppStoreClientError(
                    .invalidConfiguration, "sandbox fallback only applies to the Production environment")
            }
            self.sandboxFallbackBaseURL = sandboxFallbackBaseURL ?? Self.sandboxBaseURL
        } else {
            self.sandboxFallbackBaseURL = nil
        }
        self.bundleId = bundleId
        self.keyId = keyId
        self.issuerId = issuerId
        self.environment = environment
        self.retry = retry
        self.maxConcurrentRequests = maxConcurrentRequests
        self.requestTimeout = requestTimeout
        self.maximumResponseBytes = maximumResponseBytes
        self.userAgent = userAgent
    }
}
