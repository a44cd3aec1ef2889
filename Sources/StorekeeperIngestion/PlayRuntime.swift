import AppStoreClient
import AppStoreModels
import Entitlements
import Foundation
import GooglePlayClient
import GooglePlayModels
import GooglePlayTrust
import Storage

/// Everything ingestion needs about one app's Google Play side, built once from its stored
/// settings (the service-account key opened): the Play Developer API client (one token cache
/// per app) and the push verifier (the app's audience and push service-account email, the
/// server's shared key set). The Play counterpart of `AppRuntime`; `PlayRuntimes` rebuilds it
/// when the settings change.
/// - Note: Immutable; `Sendable`. The client's token cache is an actor.
public final class PlayRuntime: Sendable {
    /// The settings with the service-account key in clear: never save them back.
    public let settings: PlayAppSettings
    /// `nil` while the app has no service-account key.
    public let client: PlayDeveloperAPIClient?
    /// `nil` while the app has no RTDN audience or push service-account email.
    public let pushVerifier: PushAuthenticationVerifier?
    private let clock: ServerClock

    /// Throws `googlePlayNotConfigured` when the stored key is not a service-account key.
    public init(settings: PlayAppSettings, service: PlayServiceConfiguration, clock: ServerClock)
        throws(IngestionError)
    {
        self.settings = settings
        self.clock = clock
        if let json = settings.serviceAccountKey {
            let key: ServiceAccountKey
            do {
                key = try ServiceAccountKey(json: Data(json.utf8))
            } catch {
                throw IngestionError(
                    .googlePlayNotConfigured, "The app's service-account key cannot be read (\(error.rule.rawValue)).",
                    rule: error.rule.rawValue)
            }
            let retryClock = ServerRetryClock(clock: clock)
            let tokens = AccessTokenProvider(
                key: key, transport: service.transport, retryPolicy: service.retryPolicy, clock: retryClock)
            client = PlayDeveloperAPIClient(
                baseURL: service.apiBaseURL, tokens: tokens, transport: service.transport,
                retryPolicy: service.retryPolicy, clock: retryClock)
        } else {
            client = nil
        }
        if let audience = settings.rtdnAudience, !audience.isEmpty, let email = settings.pushServiceAccountEmail,
            !email.isEmpty
        {
            pushVerifier = PushAuthenticationVerifier(
                audience: audience, serviceAccountEmail: email, keys: service.keySet, leeway: service.pushLeeway)
        } else {
            pushVerifier = nil
        }
    }

    public var appId: String { settings.appId }

    /// Verifies a push request's `Authorization` header: `pushUnauthenticated` with the trust
    /// rule on a refusal, `googlePlayUnavailable` when Google's keys cannot be fetched.
    public func authenticatePush(authorization: String?) async throws(IngestionError) -> VerifiedPushToken {
        guard let pushVerifier else {
            throw IngestionError(
                .googlePlayNotConfigured, "The app's Google Play side has no rtdnAudience and pushServiceAccountEmail.")
        }
        do {
            return try await pushVerifier.verify(authorization: authorization, now: clock.now().date)
        } catch {
            if error.rule == .keySetUnavailable {
                throw IngestionError(
                    .googlePlayUnavailable, "Google's push signing keys cannot be fetched; retry later.",
                    rule: error.rule.rawValue, retryAfterSeconds: 30)
            }
            throw IngestionError(
                .pushUnauthenticated, "The push request's token was refused (\(error.rule.rawValue)).",
                rule: error.rule.rawValue)
        }
    }

    /// `purchases.subscriptionsv2.get` of `token`, as a fact read now.
    public func readSubscription(token: String) async throws(IngestionError) -> VerifiedPlaySnapshot {
        let client = try requireClient()
        let answer: PlayAPIAnswer<SubscriptionPurchaseV2>
        do {
            answer = try await client.subscriptionV2Answer(packageName: settings.packageName, token: token)
        } catch {
            throw Self.failure(error)
        }
        let fact = try PlayFactMapping.subscription(
            answer.value, packageName: settings.packageName, purchaseToken: token, readAt: clock.now())
        return try VerifiedPlaySnapshot(
            fact: .playSubscription(fact), raw: String(decoding: answer.body, as: UTF8.self))
    }

    /// `purchases.products.get` of (`productId`, `token`), as a fact read now.
    public func readProduct(productId: String, token: String) async throws(IngestionError) -> VerifiedPlaySnapshot {
        let client = try requireClient()
        let answer: PlayAPIAnswer<ProductPurchase>
        do {
            answer = try await client.productAnswer(
                packageName: settings.packageName, productId: productId, token: token)
        } catch {
            throw Self.failure(error)
        }
        let fact = try PlayFactMapping.product(
            answer.value, packageName: settings.packageName, productId: productId, purchaseToken: token,
            readAt: clock.now())
        return try VerifiedPlaySnapshot(
            fact: .playProductPurchase(fact), raw: String(decoding: answer.body, as: UTF8.self))
    }

    /// `orders.get` of `orderId`, an order of `purchase` (a subscription or product read), as a
    /// fact read now.
    public func readOrder(orderId: String, of purchase: VerifiedPlaySnapshot) async throws(IngestionError)
        -> VerifiedPlaySnapshot
    {
        let client = try requireClient()
        let answer: PlayAPIAnswer<Order>
        do {
            answer = try await client.orderAnswer(packageName: settings.packageName, orderId: orderId)
        } catch {
            throw Self.failure(error)
        }
        let fact = try PlayFactMapping.order(
            answer.value, packageName: settings.packageName, orderId: orderId, purchaseToken: purchase.purchaseToken,
            isTestPurchase: purchase.fact.environment == .sandbox, readAt: clock.now())
        return try VerifiedPlaySnapshot(fact: .playOrder(fact), raw: String(decoding: answer.body, as: UTF8.self))
    }

    /// One page of `purchases.voidedpurchases.list` for the app's package.
    public func listVoidedPurchases(_ query: VoidedPurchasesQuery) async throws(IngestionError)
        -> VoidedPurchasesListResponse
    {
        let client = try requireClient()
        do {
            return try await client.voidedPurchases(packageName: settings.packageName, query: query)
        } catch {
            throw Self.failure(error)
        }
    }

    private func requireClient() throws(IngestionError) -> PlayDeveloperAPIClient {
        guard let client else {
            throw IngestionError(.googlePlayNotConfigured, "The app's Google Play side has no serviceAccountKey.")
        }
        return client
    }

    /// A client failure in ingestion's terms: transient ones retryable, a purchase Google does
    /// not know (404, 410) the caller's mistake, the rest Google's.
    static func failure(_ error: GooglePlayClientError) -> IngestionError {
        if error.isTransient || error.code == .transportFailed {
            let seconds = error.retryAfter.map { Int($0.components.seconds) } ?? 30
            return IngestionError(
                .googlePlayUnavailable, "Google Play could not be reached or is busy (\(error.code.rawValue)).",
                retryAfterSeconds: max(1, seconds))
        }
        if error.code == .apiError, error.httpStatus == 404 || error.httpStatus == 410 || error.httpStatus == 400 {
            return IngestionError(.transactionNotFound, "Google Play does not know this purchase token.")
        }
        if error.code == .invalidRequest {
            return IngestionError(.invalidBody, "The purchase token or product id cannot be sent to Google Play.")
        }
        // `error.description` holds Google's status and message, never the token or the key.
        return IngestionError(.googlePlayError, "Google Play refused the call: \(error.code.rawValue).")
    }
}

/// `ServerClock` as the Google client's clock: the assertion's `iat` and the token's expiry
/// follow the server's (possibly simulated) time; pauses and budgets stay real.
/// - Note: Immutable; `Sendable`.
struct ServerRetryClock: RetryClock {
    let clock: ServerClock
    private let system = SystemRetryClock()

    init(clock: ServerClock) { self.clock = clock }

    func monotonicNow() -> Duration { system.monotonicNow() }
    func wallNow() -> Date { clock.now().date }
    func sleep(for duration: Duration) async throws { try await system.sleep(for: duration) }
}
