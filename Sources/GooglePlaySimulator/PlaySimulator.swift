import AppStoreModels
import AppStoreSimulator
import Foundation
import GooglePlayModels
import GooglePlayTrust

/// The fake Google Play: purchase tokens of subscriptions and one-time products, their
/// lifecycle, the Play Developer API's answers, the OAuth2 token endpoint's checks, and the
/// real-time developer notifications it pushes (as Pub/Sub would) with OIDC tokens signed by a
/// rotating key set of its own.
///
/// Each lifecycle operation changes the purchase's state and pushes the notification Google
/// sends for it. `tick()` applies what time does: renewals, grace → hold → expiry, the end of a
/// cancelled period, automatic resume, and Google's refund of purchases not acknowledged within
/// three days. Time comes from the `SimulatorClock` shared with the App Store simulator.
/// - Note: An actor; safe to use from any task.
public actor PlaySimulator {
    /// Google refunds purchases not acknowledged within three days.
    public static let acknowledgementWindowMillis: Int64 = 3 * 86_400_000
    public static let issuer = "https://accounts.google.com"

    /// Where and how notifications are pushed: the push endpoint, the audience the OIDC token
    /// names, and the service account it is issued for.
    /// - Note: Immutable value; `Sendable`.
    public struct PushConfiguration: Sendable {
        public var url: URL?
        public var audience: String
        public var serviceAccountEmail: String
        public var subscription: String

        public init(
            url: URL?, audience: String, serviceAccountEmail: String = "play-push@simulator.iam.gserviceaccount.com",
            subscription: String = "projects/simulator/subscriptions/play-rtdn"
        ) {
            self.url = url
            self.audience = audience
            self.serviceAccountEmail = serviceAccountEmail
            self.subscription = subscription
        }
    }

    public let clock: any SimulatorClock
    public let packageNames: Set<String>
    public var push: PushConfiguration
    private let transport: (any PlayPushTransport)?
    public let gracePeriodMillis: Int64
    public let holdPeriodMillis: Int64

    private(set) var subscriptions: [String: SimulatedPlaySubscription] = [:]
    private(set) var products: [String: SimulatedPlayProduct] = [:]
    private(set) var voided: [(voidedMillis: Int64, purchase: VoidedPurchase, isSubscription: Bool)] = []
    public private(set) var pushes: [RecordedPlayPush] = []
    private var serviceAccounts: [String: (email: String, key: RSAPublicKey, tokenURI: String)] = [:]
    private var accessTokens: [String: Int64] = [:]
    private var signingKeys: [(kid: String, key: RSAPrivateKey)] = []
    private var sequence = 0
    private var pricing = SimulatedPlayOrderPricing()

    public init(
        packageNames: Set<String>, clock: any SimulatorClock, push: PushConfiguration,
        transport: (any PlayPushTransport)? = URLSessionPlayPushTransport(), gracePeriodMillis: Int64 = 3 * 86_400_000,
        holdPeriodMillis: Int64 = 30 * 86_400_000, signingKey: RSAPrivateKey? = nil
    ) throws(GooglePlayTrustError) {
        self.packageNames = packageNames
        self.clock = clock
        self.push = push
        self.transport = transport
        self.gracePeriodMillis = gracePeriodMillis
        self.holdPeriodMillis = holdPeriodMillis
        // A caller may bring the key: generating RSA-2048 takes a tenth of a second or more, and
        // suites that start a simulator per test spent most of their time on it.
        if let signingKey {
            signingKeys = [("sim-key-1", signingKey)]
        } else {
            signingKeys = [("sim-key-1", try RSAPrivateKey.generate())]
        }
    }

    var now: Int64 { clock.now.millisecondsSince1970 }

    private func nextId() -> Int {
        sequence += 1
        return sequence
    }

    // MARK: - Keys and credentials

    /// The JWKS of the push-signing keys: the current one and the one before it (a rotation
    /// keeps the previous key published, as Google does, so tokens already in flight verify).
    public func keySetJSON() -> Data {
        GoogleKeySet.json(of: signingKeys.suffix(2).map { ($0.kid, $0.key.publicKey) })
    }

    /// The kid tokens are signed with now.
    public var currentKid: String { signingKeys.last!.kid }

    /// Generates a new signing key and signs with it from now on.
    public func rotateSigningKey() throws(GooglePlayTrustError) {
        signingKeys.append(("sim-key-\(signingKeys.count + 1)", try RSAPrivateKey.generate()))
    }

    /// Generates a service-account key the token endpoint accepts (`tokenURI` is the simulator's
    /// `/token`); with `key`, that key rather than a new one.
    public func createServiceAccount(email: String, tokenURI: URL, key given: RSAPrivateKey? = nil)
        throws(GooglePlayTrustError)
        -> ServiceAccountKey
    {
        let key: RSAPrivateKey
        if let given {
            key = given
        } else {
            key = try RSAPrivateKey.generate()
        }
        let keyId = "sim-sa-\(nextId())"
        serviceAccounts[keyId] = (email, key.publicKey, tokenURI.absoluteString)
        return ServiceAccountKey(
            clientEmail: email, privateKeyId: keyId, privateKey: key, tokenURI: tokenURI, projectId: "simulator")
    }

    /// Registers a service account whose key the caller generated (the interop test's); returns
    /// its key id (`keyId`, or one the simulator picks).
    public func registerServiceAccount(email: String, publicKey: RSAPublicKey, keyId: String?, tokenURI: URL) -> String
    {
        let id = keyId ?? "sim-sa-\(nextId())"
        serviceAccounts[id] = (email, publicKey, tokenURI.absoluteString)
        return id
    }

    /// The token endpoint: checks the JWT-bearer grant and answers an access token, or the
    /// OAuth2 error Google answers (`invalid_grant`, `unsupported_grant_type`, `invalid_scope`).
    public func exchange(grantType: String?, assertion: String?) -> Result<
        OAuthTokenResponse, OAuthErrorResponse
    > {
        guard grantType == "urn:ietf:params:oauth:grant-type:jwt-bearer" else {
            return .failure(
                OAuthErrorResponse(
                    error: "unsupported_grant_type", errorDescription: "Invalid grant_type: \(grantType ?? "")"))
        }
        guard let assertion, let keyId = try? ServiceAccountAssertion.keyId(of: assertion),
            let account = serviceAccounts[keyId]
        else {
            return .failure(OAuthErrorResponse(error: "invalid_grant", errorDescription: "Invalid JWT Signature."))
        }
        let claims: ServiceAccountAssertion.Claims
        do throws(GooglePlayTrustError) {
            do throws(GooglePlayTrustError) {
                claims = try ServiceAccountAssertion.verify(
                    assertion, publicKey: account.key, audience: account.tokenURI, now: clock.now.date)
            } catch  where error.rule == .audienceMismatch {
                // Google's endpoint also takes its canonical URI as the audience wherever the key
                // file's token_uri points; google-auth always sends that one.
                claims = try ServiceAccountAssertion.verify(
                    assertion, publicKey: account.key, audience: ServiceAccountKey.googleTokenURI.absoluteString,
                    now: clock.now.date)
            }
        } catch {
            switch error.rule {
            case .expired, .issuedInFuture:
                return .failure(
                    OAuthErrorResponse(
                        error: "invalid_grant",
                        errorDescription:
                            "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim."
                    ))
            case .audienceMismatch:
                return .failure(OAuthErrorResponse(error: "invalid_grant", errorDescription: "Invalid JWT audience."))
            default:
                return .failure(OAuthErrorResponse(error: "invalid_grant", errorDescription: "Invalid JWT Signature."))
            }
        }
        guard claims.iss == account.email else {
            return .failure(OAuthErrorResponse(error: "invalid_grant", errorDescription: "Invalid email or User ID"))
        }
        guard claims.scope.split(separator: " ").contains(Substring(ServiceAccountAssertion.androidPublisherScope))
        else {
            return .failure(OAuthErrorResponse(error: "invalid_scope", errorDescription: "Invalid OAuth scope."))
        }
        let token = "ya29.sim-\(nextId())-\(UUID().uuidString)"
        accessTokens[token] = now + 3_600_000
        return .success(OAuthTokenResponse(accessToken: token, expiresIn: 3599))
    }

    /// Checks an API request's `Authorization` header.
    public func authenticate(authorization: String?) throws(PlaySimulatorError) {
        guard let authorization, authorization.lowercased().hasPrefix("bearer ") else { throw .missingCredentials }
        let token = String(authorization.dropFirst(7))
        guard let expiry = accessTokens[token], expiry > now else { throw .invalidCredentials }
    }

    // MARK: - Lifecycle: subscriptions

    /// A new subscription: ACTIVE until one period from now, acknowledgement pending; pushes
    /// SUBSCRIPTION_PURCHASED (4).
    @discardableResult
    public func purchaseSubscription(
        packageName: String, productId: String, basePlanId: String = "monthly", periodMillis: Int64 = 30 * 86_400_000,
        obfuscatedAccountId: String? = nil, prepaid: Bool = false, linkedPurchaseToken: String? = nil
    ) async throws(PlaySimulatorError) -> String {
        guard packageNames.contains(packageName) else { throw .applicationNotFound }
        let id = nextId()
        let token = "sim-sub-token-\(id)"
        subscriptions[token] = SimulatedPlaySubscription(
            token: token, packageName: packageName, productId: productId, basePlanId: basePlanId,
            orderId: "GPA.3300-0000-0000-\(String(format: "%05d", id))", renewals: 0, state: .active,
            startMillis: now, expiryMillis: now + periodMillis, periodMillis: periodMillis, autoRenewing: !prepaid,
            prepaid: prepaid, acknowledged: false, linkedPurchaseToken: linkedPurchaseToken,
            obfuscatedAccountId: obfuscatedAccountId, testPurchase: true)
        await notify(subscription: token, .purchased)
        return token
    }

    /// A successful renewal: one more period, the next order id; pushes SUBSCRIPTION_RENEWED (2).
    public func renew(_ token: String) async throws(PlaySimulatorError) {
        try update(token, allowed: [.active, .inGracePeriod]) { subscription, now in
            subscription.renewals += 1
            subscription.expiryMillis = max(subscription.expiryMillis, now) + subscription.periodMillis
            subscription.state = .active
            subscription.graceEndsMillis = nil
        }
        await notify(subscription: token, .renewed)
    }

    /// The renewal payment was declined: access continues through the grace period;
    /// pushes SUBSCRIPTION_IN_GRACE_PERIOD (6).
    public func enterGracePeriod(_ token: String) async throws(PlaySimulatorError) {
        let grace = gracePeriodMillis
        try update(token, allowed: [.active]) { subscription, now in
            subscription.state = .inGracePeriod
            subscription.graceEndsMillis = now + grace
            subscription.expiryMillis = now + grace
        }
        await notify(subscription: token, .inGracePeriod)
    }

    /// Payment still failing: account hold, no access (expiry in the past); pushes
    /// SUBSCRIPTION_ON_HOLD (5).
    public func hold(_ token: String) async throws(PlaySimulatorError) {
        let holdPeriod = holdPeriodMillis
        try update(token, allowed: [.active, .inGracePeriod]) { subscription, now in
            subscription.state = .onHold
            subscription.graceEndsMillis = nil
            subscription.holdEndsMillis = now + holdPeriod
            subscription.expiryMillis = now
        }
        await notify(subscription: token, .onHold)
    }

    /// The user fixed the payment: a new period from now; pushes SUBSCRIPTION_RECOVERED (1).
    public func recover(_ token: String) async throws(PlaySimulatorError) {
        try update(token, allowed: [.onHold, .inGracePeriod]) { subscription, now in
            subscription.renewals += 1
            subscription.state = .active
            subscription.holdEndsMillis = nil
            subscription.graceEndsMillis = nil
            subscription.expiryMillis = now + subscription.periodMillis
        }
        await notify(subscription: token, .recovered)
    }

    /// The user paused: no access until `resumeAtMillis`; pushes SUBSCRIPTION_PAUSED (10).
    public func pause(_ token: String, resumeAtMillis: Int64) async throws(PlaySimulatorError) {
        try update(token, allowed: [.active]) { subscription, now in
            subscription.state = .paused
            subscription.autoResumeMillis = resumeAtMillis
            subscription.expiryMillis = now
        }
        await notify(subscription: token, .paused)
    }

    /// The pause ends (automatically at its time, or early): a new period; pushes
    /// SUBSCRIPTION_RENEWED (2), which Google sends when a paused subscription resumes.
    public func resume(_ token: String) async throws(PlaySimulatorError) {
        try update(token, allowed: [.paused]) { subscription, now in
            subscription.renewals += 1
            subscription.state = .active
            subscription.autoResumeMillis = nil
            subscription.expiryMillis = now + subscription.periodMillis
        }
        await notify(subscription: token, .renewed)
    }

    /// The user canceled: access until the paid period ends, no renewal; pushes
    /// SUBSCRIPTION_CANCELED (3).
    public func cancel(_ token: String) async throws(PlaySimulatorError) {
        try update(token, allowed: [.active, .inGracePeriod, .onHold, .paused]) { subscription, now in
            subscription.state = .canceled
            subscription.autoRenewing = false
            subscription.canceledStateContext = CanceledStateContext(
                userInitiatedCancellation: UserInitiatedCancellation(cancelTime: GoogleDateTime(milliseconds: now)))
        }
        await notify(subscription: token, .canceled)
    }

    /// The user re-enabled renewal before the period ended; pushes SUBSCRIPTION_RESTARTED (7).
    public func restart(_ token: String) async throws(PlaySimulatorError) {
        try update(token, allowed: [.canceled]) { subscription, now in
            guard subscription.expiryMillis > now else { return }
            subscription.state = .active
            subscription.autoRenewing = true
            subscription.canceledStateContext = nil
        }
        await notify(subscription: token, .restarted)
    }

    /// The developer revoked it (with a refund): access ends now; pushes SUBSCRIPTION_REVOKED (12).
    public func revoke(_ token: String) async throws(PlaySimulatorError) {
        try update(token, allowed: nil) { subscription, now in
            subscription.state = .expired
            subscription.autoRenewing = false
            subscription.expiryMillis = now
            subscription.canceledStateContext = CanceledStateContext(
                developerInitiatedCancellation: DeveloperInitiatedCancellation())
        }
        await notify(subscription: token, .revoked)
    }

    /// The paid period ended without renewal; pushes SUBSCRIPTION_EXPIRED (13).
    public func expire(_ token: String) async throws(PlaySimulatorError) {
        try update(token, allowed: [.active, .canceled, .onHold, .inGracePeriod, .paused]) { subscription, now in
            subscription.state = .expired
            subscription.autoRenewing = false
            subscription.expiryMillis = min(subscription.expiryMillis, now)
            if subscription.canceledStateContext == nil {
                subscription.canceledStateContext = CanceledStateContext(
                    systemInitiatedCancellation: SystemInitiatedCancellation())
            }
        }
        await notify(subscription: token, .expired)
    }

    /// An upgrade or downgrade: a new token linked to the old one, which stops at once
    /// (replacement cancellation). Pushes SUBSCRIPTION_PURCHASED (4) for the new token.
    public func changePlan(_ oldToken: String, toProductId productId: String, basePlanId: String = "monthly")
        async throws(PlaySimulatorError) -> String
    {
        guard let old = subscriptions[oldToken] else { throw .purchaseNotFound }
        try update(oldToken, allowed: [.active, .canceled, .inGracePeriod]) { subscription, now in
            subscription.state = .expired
            subscription.autoRenewing = false
            subscription.expiryMillis = now
            subscription.canceledStateContext = CanceledStateContext(replacementCancellation: ReplacementCancellation())
        }
        return try await purchaseSubscription(
            packageName: old.packageName, productId: productId, basePlanId: basePlanId, periodMillis: old.periodMillis,
            obfuscatedAccountId: old.obfuscatedAccountId, linkedPurchaseToken: oldToken)
    }

    /// A refund or chargeback of a subscription: access ends, a voided purchase is listed and a
    /// voided-purchase notification (product type 1, full refund) is pushed.
    public func voidSubscription(_ token: String, reason: VoidedReason = .remorse, source: VoidedSource = .user)
        async throws(PlaySimulatorError)
    {
        try update(token, allowed: nil) { subscription, now in
            subscription.state = .expired
            subscription.autoRenewing = false
            subscription.expiryMillis = min(subscription.expiryMillis, now)
        }
        let subscription = subscriptions[token]!
        await recordVoid(
            token: token, orderId: subscription.latestOrderId, purchaseMillis: subscription.startMillis, quantity: nil,
            reason: reason, source: source, isSubscription: true)
    }

    /// Changes one subscription if its state is in `allowed` (nil: any).
    private func update(
        _ token: String, allowed: Set<SubscriptionState>?, _ change: (inout SimulatedPlaySubscription, Int64) -> Void
    ) throws(PlaySimulatorError) {
        guard var subscription = subscriptions[token] else { throw .purchaseNotFound }
        if let allowed, !allowed.contains(subscription.state) { throw .invalidState }
        change(&subscription, now)
        subscriptions[token] = subscription
    }

    // MARK: - Lifecycle: one-time products

    /// A one-time purchase; pushes ONE_TIME_PRODUCT_PURCHASED (1).
    @discardableResult
    public func purchaseProduct(
        packageName: String, productId: String, quantity: Int32 = 1, obfuscatedAccountId: String? = nil
    ) async throws(PlaySimulatorError) -> String {
        guard packageNames.contains(packageName) else { throw .applicationNotFound }
        guard quantity >= 1, quantity <= 100 else { throw .invalidArgument("quantity must be 1 to 100") }
        let id = nextId()
        let token = "sim-product-token-\(id)"
        products[token] = SimulatedPlayProduct(
            token: token, packageName: packageName, productId: productId,
            orderId: "GPA.3300-1111-0000-\(String(format: "%05d", id))", purchaseMillis: now, quantity: quantity,
            refundableQuantity: quantity, state: .purchased, consumed: false, acknowledged: false,
            obfuscatedAccountId: obfuscatedAccountId, developerPayload: "")
        await notifyProduct(token, .purchased)
        return token
    }

    /// A refund of a one-time purchase: all of it (`quantity` nil, refund type 1; the purchase
    /// becomes canceled) or `quantity` units (refund type 2, a partial refund by quantity).
    public func voidProduct(
        _ token: String, quantity: Int32? = nil, reason: VoidedReason = .remorse, source: VoidedSource = .user
    ) async throws(PlaySimulatorError) {
        guard var product = products[token] else { throw .purchaseNotFound }
        guard product.refundableQuantity > 0 else { throw .invalidState }
        if let quantity {
            guard quantity >= 1, quantity < product.refundableQuantity else {
                throw .invalidArgument("a partial refund needs 1 to refundableQuantity - 1 units")
            }
            product.refundableQuantity -= quantity
        } else {
            product.refundableQuantity = 0
            product.state = .canceled
        }
        products[token] = product
        await recordVoid(
            token: token, orderId: product.orderId, purchaseMillis: product.purchaseMillis, quantity: quantity,
            reason: reason, source: source, isSubscription: false)
    }

    private func recordVoid(
        token: String, orderId: String, purchaseMillis: Int64, quantity: Int32?, reason: VoidedReason,
        source: VoidedSource, isSubscription: Bool
    ) async {
        let purchase = VoidedPurchase(
            purchaseToken: token, purchaseTimeMillis: EpochMillisString(milliseconds: purchaseMillis),
            voidedTimeMillis: EpochMillisString(milliseconds: now), orderId: orderId,
            voidedSource: PlayRawEnum(source), voidedReason: PlayRawEnum(reason), voidedQuantity: quantity)
        voided.append((now, purchase, isSubscription))
        await send(
            DeveloperNotification(
                packageName: packageName(of: token), eventTimeMillis: EpochMillisString(milliseconds: now),
                voidedPurchaseNotification: VoidedPurchaseNotification(
                    purchaseToken: token, orderId: orderId,
                    productType: PlayRawEnum(isSubscription ? .subscription : .oneTime),
                    refundType: PlayRawEnum(quantity == nil ? .fullRefund : .quantityBasedPartialRefund))))
    }

    private func packageName(of token: String) -> String {
        subscriptions[token]?.packageName ?? products[token]?.packageName ?? ""
    }

    // MARK: - Time

    /// Applies what time does up to now, pushing each notification Google would.
    public func tick() async {
        let now = self.now
        for token in subscriptions.keys.sorted() {
            guard let subscription = subscriptions[token] else { continue }
            if !subscription.acknowledged, subscription.state != .expired,
                now - subscription.startMillis >= Self.acknowledgementWindowMillis
            {
                try? await voidSubscription(token, reason: .unacknowledgedPurchase, source: .google)
                continue
            }
            switch subscription.state {
            case .active where subscription.expiryMillis <= now:
                if subscription.autoRenewing { try? await renew(token) } else { try? await expire(token) }
            case .canceled where subscription.expiryMillis <= now:
                try? await expire(token)
            case .inGracePeriod where (subscription.graceEndsMillis ?? .max) <= now:
                try? await hold(token)
            case .onHold where (subscription.holdEndsMillis ?? .max) <= now:
                try? await expire(token)
            case .paused where (subscription.autoResumeMillis ?? .max) <= now:
                try? await resume(token)
            default:
                break
            }
        }
        for token in products.keys.sorted() {
            guard let product = products[token], !product.acknowledged, !product.consumed, product.state == .purchased,
                now - product.purchaseMillis >= Self.acknowledgementWindowMillis
            else { continue }
            try? await voidProduct(token, reason: .unacknowledgedPurchase, source: .google)
        }
    }

    // MARK: - The Play Developer API

    private func requirePackage(_ packageName: String) throws(PlaySimulatorError) {
        guard packageNames.contains(packageName) else { throw .applicationNotFound }
    }

    public func subscriptionV2(packageName: String, token: String) throws(PlaySimulatorError) -> SubscriptionPurchaseV2
    {
        try requirePackage(packageName)
        guard let subscription = subscriptions[token], subscription.packageName == packageName else {
            throw .purchaseNotFound
        }
        return subscription.purchase
    }

    public func acknowledgeSubscription(packageName: String, subscriptionId: String, token: String)
        throws(PlaySimulatorError)
    {
        try requirePackage(packageName)
        guard var subscription = subscriptions[token], subscription.packageName == packageName else {
            throw .purchaseNotFound
        }
        guard subscription.productId == subscriptionId else { throw .productMismatch }
        guard subscription.state != .expired || subscription.acknowledged else { throw .invalidState }
        subscription.acknowledged = true
        subscriptions[token] = subscription
    }

    public func product(packageName: String, productId: String, token: String) throws(PlaySimulatorError)
        -> ProductPurchase
    {
        try requirePackage(packageName)
        guard let product = products[token], product.packageName == packageName else { throw .purchaseNotFound }
        guard product.productId == productId else { throw .productMismatch }
        return product.purchase
    }

    public func acknowledgeProduct(packageName: String, productId: String, token: String) throws(PlaySimulatorError) {
        _ = try product(packageName: packageName, productId: productId, token: token)
        guard products[token]!.state == .purchased else { throw .invalidState }
        products[token]!.acknowledged = true
    }

    public func consumeProduct(packageName: String, productId: String, token: String) throws(PlaySimulatorError) {
        _ = try product(packageName: packageName, productId: productId, token: token)
        guard products[token]!.state == .purchased, !products[token]!.consumed else { throw .invalidState }
        products[token]!.consumed = true
    }

    /// `voidedpurchases.list`: voided times within [startTime, endTime] (default: the last 30
    /// days), one-time products only unless `type` is 1, partial refunds only when asked, in
    /// pages of `maxResults` (default 1000) linked by `nextPageToken`.
    public func voidedPurchases(
        packageName: String, startTime: Int64?, endTime: Int64?, maxResults: Int?, type: Int?,
        includePartial: Bool, pageToken: String?
    ) throws(PlaySimulatorError) -> VoidedPurchasesListResponse {
        try requirePackage(packageName)
        let now = self.now
        let start = startTime ?? now - 30 * 86_400_000
        let end = endTime ?? now
        guard start <= end else { throw .invalidArgument("startTime must not be after endTime") }
        guard type == nil || type == 0 || type == 1 else { throw .invalidArgument("type must be 0 or 1") }
        let pageSize = min(max(maxResults ?? 1000, 1), 1000)
        let matching = voided.filter { entry in
            packageName == self.packageName(of: entry.purchase.purchaseToken ?? "")
                && entry.voidedMillis >= start && entry.voidedMillis <= end
                && (type == 1 || !entry.isSubscription)
                && (includePartial || entry.purchase.voidedQuantity == nil)
        }.map(\.purchase)
        var offset = 0
        if let pageToken {
            guard pageToken.hasPrefix("sim-page-"), let value = Int(pageToken.dropFirst(9)), value >= 0,
                value <= matching.count
            else { throw .invalidArgument("Invalid page token.") }
            offset = value
        }
        let page = Array(matching[offset..<min(offset + pageSize, matching.count)])
        let next = offset + pageSize < matching.count ? "sim-page-\(offset + pageSize)" : nil
        return VoidedPurchasesListResponse(
            voidedPurchases: page,
            pageInfo: PageInfo(
                totalResults: Int32(matching.count), resultPerPage: Int32(pageSize), startIndex: Int32(offset)),
            tokenPagination: next.map { TokenPagination(nextPageToken: $0) })
    }

    // MARK: - Orders

    /// The price of every order of `productId` from now on (per unit for one-time products).
    public func setPrice(productId: String, micros: Int64, currency: String = "USD") throws(PlaySimulatorError) {
        guard micros >= 0, currency.utf8.count == 3 else {
            throw .invalidArgument("price must be >= 0 with a 3-letter currency")
        }
        pricing.prices[productId] = (micros: micros, currency: currency)
    }

    /// The exact developer revenue `orders.get` answers for `orderId`, in the order's currency.
    public func setDeveloperRevenue(orderId: String, micros: Int64) {
        pricing.developerRevenueMicros[orderId] = micros
    }

    /// `orders.get`: the order `orderId` of the package (`NOT_FOUND` when no purchase has it).
    public func order(packageName: String, orderId: String) throws(PlaySimulatorError) -> Order {
        try requirePackage(packageName)
        let refunded = voided.contains { $0.purchase.orderId == orderId && $0.purchase.voidedQuantity == nil }
        for token in subscriptions.keys.sorted() {
            let subscription = subscriptions[token]!
            guard subscription.packageName == packageName else { continue }
            // The first order, then each renewal `orderId..N` (N from 0).
            let charges = (0...subscription.renewals).map {
                $0 == 0 ? subscription.orderId : "\(subscription.orderId)..\($0 - 1)"
            }
            guard let index = charges.firstIndex(of: orderId) else { continue }
            let start = subscription.startMillis + Int64(index) * subscription.periodMillis
            return pricing.order(
                orderId: orderId, token: token, productId: subscription.productId, quantity: 1, createMillis: start,
                refunded: refunded,
                subscription: SubscriptionDetails(
                    basePlanId: subscription.basePlanId, offerPhase: PlayRawEnum(.base),
                    servicePeriodStartTime: GoogleDateTime(milliseconds: start),
                    servicePeriodEndTime: GoogleDateTime(milliseconds: start + subscription.periodMillis)))
        }
        for token in products.keys.sorted() {
            let product = products[token]!
            guard product.packageName == packageName, product.orderId == orderId else { continue }
            return pricing.order(
                orderId: orderId, token: token, productId: product.productId, quantity: product.quantity,
                createMillis: product.purchaseMillis, refunded: refunded, subscription: nil)
        }
        throw .orderNotFound
    }

    /// `orders.batchget`: every order or, as Google does, an error when one is unknown.
    public func orders(packageName: String, orderIds: [String]) throws(PlaySimulatorError) -> BatchGetOrdersResponse {
        guard !orderIds.isEmpty, orderIds.count <= 1000 else {
            throw .invalidArgument("orderIds must hold 1 to 1000 order ids.")
        }
        guard Set(orderIds).count == orderIds.count else { throw .invalidArgument("orderIds must be distinct.") }
        var orders: [Order] = []
        for orderId in orderIds { orders.append(try order(packageName: packageName, orderId: orderId)) }
        return BatchGetOrdersResponse(orders: orders)
    }

    /// What the simulator holds for a token, for tests and scenario assertions.
    public func subscription(_ token: String) -> SimulatedPlaySubscription? { subscriptions[token] }
    public func productPurchase(_ token: String) -> SimulatedPlayProduct? { products[token] }

    // MARK: - Pushing notifications

    private func notify(subscription token: String, _ type: SubscriptionNotificationType) async {
        guard let subscription = subscriptions[token] else { return }
        await send(
            DeveloperNotification(
                packageName: subscription.packageName, eventTimeMillis: EpochMillisString(milliseconds: now),
                subscriptionNotification: SubscriptionNotification(
                    notificationType: PlayRawEnum(type), purchaseToken: token, subscriptionId: subscription.productId)))
    }

    private func notifyProduct(_ token: String, _ type: OneTimeProductNotificationType) async {
        guard let product = products[token] else { return }
        await send(
            DeveloperNotification(
                packageName: product.packageName, eventTimeMillis: EpochMillisString(milliseconds: now),
                oneTimeProductNotification: OneTimeProductNotification(
                    notificationType: PlayRawEnum(type), purchaseToken: token, sku: product.productId)))
    }

    /// Sends a test notification, as the Play Console's button does.
    public func sendTestNotification(packageName: String) async {
        await send(
            DeveloperNotification(
                packageName: packageName, eventTimeMillis: EpochMillisString(milliseconds: now),
                testNotification: TestNotification()))
    }

    /// The OIDC token Pub/Sub would attach: RS256 by the current key, Google's issuer, the
    /// configured audience and service account, valid one hour.
    public func pushToken() throws(GooglePlayTrustError) -> String {
        try pushToken(claims: pushClaims())
    }

    /// The claims `pushToken()` signs now.
    public func pushClaims() -> OIDCTokenClaims {
        let issuedAt = now / 1000
        return OIDCTokenClaims(
            iss: Self.issuer, aud: [push.audience], azp: "simulator-push", sub: "simulator-push",
            email: push.serviceAccountEmail, emailVerified: true, iat: issuedAt, exp: issuedAt + 3600)
    }

    /// A push token of `claims` signed by the current key, as Pub/Sub would sign a token with
    /// other claims: tests of the receiver's refusals (audience, issuer, email, lifetime).
    public func pushToken(claims: OIDCTokenClaims) throws(GooglePlayTrustError) -> String {
        let signer = signingKeys.last!
        return try RS256JWTSigner.sign(claims: claims, key: signer.key, kid: signer.kid)
    }

    private func send(_ notification: DeveloperNotification) async {
        let messageId = String(nextId() + 1_000_000)
        let request = PubSubPushRequest(
            message: PubSubMessage(
                bytes: GooglePlayJSON.encode(notification), messageId: messageId,
                publishTime: GoogleDateTime(milliseconds: now).text),
            subscription: push.subscription)
        // Signing with a key this actor generated cannot fail short of OpenSSL running out of memory.
        let authorization = "Bearer " + ((try? pushToken()) ?? "")
        var status: Int?
        if let url = push.url, let transport {
            status = await transport.push(GooglePlayJSON.encode(request), authorization: authorization, to: url)
        }
        pushes.append(
            RecordedPlayPush(request: request, notification: notification, authorization: authorization, status: status)
        )
    }

    /// Points pushes elsewhere (the server under test starts after the simulator).
    public func setPushURL(_ url: URL?) { push.url = url }
}
