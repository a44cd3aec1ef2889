import AppStoreClient
import AppStoreModels

/// Apple's documented per-app, per-endpoint limits of the App Store Server API ("Identifying
/// rate limits", App Store Server API documentation): requests per second in Production,
/// enforced over an hour; Sandbox allows 10% of each. Endpoints Apple lists no limit for get
/// the most conservative documented one (1 per second).
/// - Note: Immutable value; `Sendable`.
public struct AppStoreRateLimits: Sendable, Hashable {
    /// Requests per second by endpoint.
    public var requestsPerSecond: [AppStoreServerAPIEndpoint: Double]
    /// For an endpoint missing from `requestsPerSecond`.
    public var otherwise: Double

    public init(requestsPerSecond: [AppStoreServerAPIEndpoint: Double], otherwise: Double) {
        self.requestsPerSecond = requestsPerSecond
        self.otherwise = otherwise
    }

    /// Apple's table for Production.
    public static let production = AppStoreRateLimits(
        requestsPerSecond: [
            .getTransactionInfo: 50, .getTransactionHistoryV1: 50, .getTransactionHistoryV2: 50,
            .getAllSubscriptionStatuses: 50, .getAppTransactionInfo: 50, .finishTransaction: 50,
            .sendConsumptionInformation: 50, .sendConsumptionInformationV1: 50, .getNotificationHistory: 50,
            .extendSubscriptionRenewalDate: 20, .setAppAccountToken: 20,
            .lookUpOrderId: 10, .getRefundHistory: 10,
            .extendRenewalDateForAllActiveSubscribers: 1, .requestTestNotification: 1, .getTestNotificationStatus: 1,
        ], otherwise: 1)

    /// Apple's limits for `environment`: Sandbox (and Xcode, local testing) at a tenth.
    public static func documented(for environment: AppStoreEnvironment) -> AppStoreRateLimits {
        environment == .production ? production : production.scaled(by: 0.1)
    }

    /// Every limit multiplied by `factor` (an operator keeping headroom, or a test).
    public func scaled(by factor: Double) -> AppStoreRateLimits {
        AppStoreRateLimits(
            requestsPerSecond: requestsPerSecond.mapValues { $0 * factor }, otherwise: otherwise * factor)
    }

    public func rate(of endpoint: AppStoreServerAPIEndpoint) -> Double {
        max(requestsPerSecond[endpoint] ?? otherwise, 0.000_001)
    }
}
