import AppStoreClient
import AppStoreModels
import AppStoreTrust
import Foundation
import Storage

/// What the server asks Apple about one app in one environment to complete a customer's
/// picture. Everything signed comes back as raw JWS: the server verifies it with the app's
/// verifier before storing, whoever answered.
///
/// Injected through `AppStoreConnectionFactory`, so tests (and the simulator) answer instead
/// of Apple.
/// - Note: Implementations must be `Sendable` and safe to call concurrently.
public protocol AppStoreConnection: Sendable {
    /// Get All Subscription Statuses: the latest signed transaction and renewal info of every
    /// subscription in the groups of `transactionId`.
    func subscriptionStatuses(transactionId: String) async throws(AppStoreClientError) -> [SignedSubscriptionState]
    /// Get Transaction History (v2), one page from `revision` (`nil`: the first). Each page is
    /// one call to Apple: `transactionHistory(transactionId:)` asks page by page through this,
    /// so a rate-limited connection takes one slot per page.
    func transactionHistoryPage(transactionId: String, revision: String?) async throws(AppStoreClientError)
        -> HistoryResponse
    /// Get Transaction Info: one signed transaction.
    func transactionInfo(transactionId: String) async throws(AppStoreClientError) -> String
    /// Get Notification History: one page (20 at most) of what Apple sent or tried to send.
    func notificationHistory(_ request: NotificationHistoryRequest, paginationToken: String?)
        async throws(AppStoreClientError) -> NotificationHistoryResponse
    /// Send Consumption Information (v2): answers a `CONSUMPTION_REQUEST` for `transactionId`.
    func sendConsumptionInformation(transactionId: String, request: ConsumptionRequest)
        async throws(AppStoreClientError)
    /// Legacy verifyReceipt: the environment that answered and Apple's response.
    func verifyReceipt(_ receiptData: String) async throws(AppStoreClientError) -> (
        environment: AppStoreEnvironment, response: VerifyReceiptResponseBody
    )
}

extension AppStoreConnection {
    /// The most pages one history is read to (2,000 transactions).
    public static var maxTransactionHistoryPages: Int { 100 }

    /// Get Transaction History (v2), every page (up to `maxTransactionHistoryPages`): signed
    /// transactions, oldest page first.
    public func transactionHistory(transactionId: String) async throws(AppStoreClientError) -> [String] {
        var revision: String?
        var signed: [String] = []
        for _ in 0..<Self.maxTransactionHistoryPages {
            let page = try await transactionHistoryPage(transactionId: transactionId, revision: revision)
            signed += page.signedTransactions ?? []
            guard page.hasMore == true, let next = page.revision, next != revision else { break }
            revision = next
        }
        return signed
    }
}

/// One entry of a status response: a subscription's latest signed transaction and renewal info.
/// - Note: Immutable value; `Sendable`.
public struct SignedSubscriptionState: Sendable, Hashable {
    public var signedTransactionInfo: String?
    public var signedRenewalInfo: String?

    public init(signedTransactionInfo: String?, signedRenewalInfo: String?) {
        self.signedTransactionInfo = signedTransactionInfo
        self.signedRenewalInfo = signedRenewalInfo
    }
}

/// Builds the connection for an app and environment; `nil` when the app has no App Store
/// Connect key (and no legacy shared secret) configured.
public typealias AppStoreConnectionFactory =
    @Sendable (AppRecord, AppSettings, AppStoreEnvironment) throws -> (any AppStoreConnection)?

/// The real App Store: `AppStoreServerAPIClient` with the app's In-App Purchase key and
/// `VerifyReceiptClient` with its shared secret.
/// - Note: Immutable and `Sendable`; the clients are thread-safe.
public struct LiveAppStoreConnection: AppStoreConnection {
    let api: AppStoreServerAPIClient?
    let legacy: VerifyReceiptClient?

    /// The default `AppStoreConnectionFactory`.
    public static func factory(clock: ServerClock) -> AppStoreConnectionFactory {
        { app, settings, environment in
            var api: AppStoreServerAPIClient?
            if let credentials = settings.appStoreConnect {
                let key = try PrivateKey(pem: credentials.privateKeyPEM)
                let configuration = try AppStoreServerAPIConfiguration(
                    bundleId: app.bundleId, keyId: credentials.keyId, issuerId: credentials.issuerId,
                    environment: environment, baseURL: credentials.baseURL.flatMap(URL.init(string:)))
                api = try AppStoreServerAPIClient(configuration: configuration, signingKey: key, tokenClock: clock.now)
            }
            var legacy: VerifyReceiptClient?
            if app.sharedSecret != nil || settings.legacyReceiptFlow {
                legacy = VerifyReceiptClient(
                    configuration: VerifyReceiptConfiguration(
                        sharedSecret: app.sharedSecret,
                        productionURL: settings.verifyReceiptProductionURL.flatMap(URL.init(string:))
                            ?? VerifyReceiptConfiguration.productionURL,
                        sandboxURL: settings.verifyReceiptSandboxURL.flatMap(URL.init(string:))
                            ?? VerifyReceiptConfiguration.sandboxURL))
            }
            if api == nil && legacy == nil { return nil }
            return LiveAppStoreConnection(api: api, legacy: legacy)
        }
    }

    private func client() throws(AppStoreClientError) -> AppStoreServerAPIClient {
        guard let api else {
            throw AppStoreClientError(.invalidConfiguration, "the app has no App Store Connect key configured")
        }
        return api
    }

    public func subscriptionStatuses(transactionId: String) async throws(AppStoreClientError)
        -> [SignedSubscriptionState]
    {
        let response = try await client().getAllSubscriptionStatuses(transactionId: transactionId)
        return (response.data ?? []).flatMap { group in
            (group.lastTransactions ?? []).map {
                SignedSubscriptionState(
                    signedTransactionInfo: $0.signedTransactionInfo, signedRenewalInfo: $0.signedRenewalInfo)
            }
        }
    }

    public func transactionHistoryPage(transactionId: String, revision: String?) async throws(AppStoreClientError)
        -> HistoryResponse
    {
        try await client().getTransactionHistory(transactionId: transactionId, revision: revision)
    }

    public func transactionInfo(transactionId: String) async throws(AppStoreClientError) -> String {
        guard let signed = try await client().getTransactionInfo(transactionId: transactionId).signedTransactionInfo
        else {
            throw AppStoreClientError(.malformedResponse, "Get Transaction Info returned no signed transaction")
        }
        return signed
    }

    public func notificationHistory(_ request: NotificationHistoryRequest, paginationToken: String?)
        async throws(AppStoreClientError) -> NotificationHistoryResponse
    {
        try await client().getNotificationHistory(paginationToken: paginationToken, request: request)
    }

    public func sendConsumptionInformation(transactionId: String, request: ConsumptionRequest)
        async throws(AppStoreClientError)
    {
        try await client().sendConsumptionInformation(transactionId: transactionId, request: request)
    }

    public func verifyReceipt(_ receiptData: String) async throws(AppStoreClientError) -> (
        environment: AppStoreEnvironment, response: VerifyReceiptResponseBody
    ) {
        guard let legacy else {
            throw AppStoreClientError(.invalidConfiguration, "the app has no shared secret for verifyReceipt")
        }
        let result = try await legacy.verify(receiptData: receiptData)
        return (result.environment, result.response)
    }
}
