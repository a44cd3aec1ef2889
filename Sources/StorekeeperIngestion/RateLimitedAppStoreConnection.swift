import AppStoreClient
import AppStoreModels

/// An `AppStoreConnection` whose calls first take a slot from the app's shared
/// `AppStoreRateLimiter`, and which tells the limiter when Apple still answered 429 (with its
/// `Retry-After`), so every path of the app backs off together. `Ingestion` wraps every
/// connection it builds in one.
/// - Note: Immutable and `Sendable`.
public struct RateLimitedAppStoreConnection: AppStoreConnection {
    public let base: any AppStoreConnection
    public let limiter: AppStoreRateLimiter

    public init(base: any AppStoreConnection, limiter: AppStoreRateLimiter) {
        self.base = base
        self.limiter = limiter
    }

    private func paced<R: Sendable>(
        _ endpoint: AppStoreServerAPIEndpoint, _ call: () async throws(AppStoreClientError) -> R
    ) async throws(AppStoreClientError) -> R {
        try await limiter.acquire(endpoint)
        do {
            return try await call()
        } catch {
            if error.httpStatus == 429 { limiter.rateLimited(endpoint, retryAfter: error.retryAfter) }
            throw error
        }
    }

    public func subscriptionStatuses(transactionId: String) async throws(AppStoreClientError)
        -> [SignedSubscriptionState]
    {
        try await paced(.getAllSubscriptionStatuses) { () async throws(AppStoreClientError) in
            try await base.subscriptionStatuses(transactionId: transactionId)
        }
    }

    public func transactionHistoryPage(transactionId: String, revision: String?) async throws(AppStoreClientError)
        -> HistoryResponse
    {
        try await paced(.getTransactionHistoryV2) { () async throws(AppStoreClientError) in
            try await base.transactionHistoryPage(transactionId: transactionId, revision: revision)
        }
    }

    public func transactionInfo(transactionId: String) async throws(AppStoreClientError) -> String {
        try await paced(.getTransactionInfo) { () async throws(AppStoreClientError) in
            try await base.transactionInfo(transactionId: transactionId)
        }
    }

    public func notificationHistory(_ request: NotificationHistoryRequest, paginationToken: String?)
        async throws(AppStoreClientError) -> NotificationHistoryResponse
    {
        try await paced(.getNotificationHistory) { () async throws(AppStoreClientError) in
            try await base.notificationHistory(request, paginationToken: paginationToken)
        }
    }

    public func sendConsumptionInformation(transactionId: String, request: ConsumptionRequest)
        async throws(AppStoreClientError)
    {
        try await paced(.sendConsumptionInformation) { () async throws(AppStoreClientError) in
            try await base.sendConsumptionInformation(transactionId: transactionId, request: request)
        }
    }

    /// verifyReceipt has no documented limit and is not the Server API: not paced.
    public func verifyReceipt(_ receiptData: String) async throws(AppStoreClientError) -> (
        environment: AppStoreEnvironment, response: VerifyReceiptResponseBody
    ) {
        try await base.verifyReceipt(receiptData)
    }
}
