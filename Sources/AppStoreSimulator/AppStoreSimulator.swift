import AppStoreModels
import AppStoreTrust
import Foundation

/// A faithful local App Store for one environment (Production or Sandbox): catalog and
/// customers, the store's lifecycle on a clock, everything signed by its own CA shaped exactly
/// like Apple's, the Server API and verifyReceipt behind `SimulatorRoutes`, and notification
/// delivery with Apple's retry schedule.
///
/// Time: `clock.now` is read once per call and passed down; `tick()` runs what fell due
/// (renewals, billing retry, grace expiry, notification retries). A `ManualClock` makes every
/// run repeatable; `RealTimeClock` with an accelerated `TimeScale` is Apple's sandbox.
/// - Note: An actor: all state is isolated; it may be shared by any number of tasks.
public actor AppStoreSimulator {
    public nonisolated let environment: AppStoreEnvironment
    public nonisolated let authority: TestCertificateAuthority
    public nonisolated let clock: any SimulatorClock
    public nonisolated let scale: TimeScale
    /// The clock bearer tokens are checked against. Clients sign tokens with the wall clock,
    /// so this stays real time even when the store travels in time (tests may move it).
    public nonisolated let tokenClock: any SimulatorClock
    let signer: ApplePayloadSigner
    let transport: any NotificationTransport
    var state: StoreState
    var notifications: [StoredNotification] = []
    /// Indices in `notifications` of those with an attempt still to make: what `deliverDue`
    /// looks at, so that delivering costs what is pending, not the whole history.
    var awaitingDelivery: Set<Int> = []
    var v1Deliveries: [V1Delivery] = []
    var retrySchedule: NotificationRetrySchedule
    var lossPolicy: NotificationLossPolicy
    var lossGenerator: SeededGenerator
    var rateLimit: RateLimit?
    /// Apple's per-endpoint limits (by default), or an override: `ServerAPIRateLimits`.
    var serverAPIRateLimits: ServerAPIRateLimits
    var serverAPIRateState = ServerAPIRateState()
    /// While true the Server API answers 503 and verifyReceipt 21005, as during Apple's outages.
    var outage = false
    var recentRequests: [String: [Timestamp]] = [:]
    var tokenVerifier = AppStoreConnectTokenVerifier(keys: [:])
    var keyOwners: [String: SimulatedApp.APIKey] = [:]
    var messaging = RetentionMessagingState()
    var notificationSequence = 0
    /// Authenticated Server API calls by route and transaction (`serverAPICalls()`).
    var serverAPICallCounts: [ServerAPICall: Int] = [:]

    public init(
        environment: AppStoreEnvironment = .sandbox, authority: TestCertificateAuthority,
        clock: any SimulatorClock = RealTimeClock(), scale: TimeScale = .calendar,
        transport: any NotificationTransport = URLSessionNotificationTransport(),
        lossPolicy: NotificationLossPolicy = .none, rateLimit: RateLimit? = nil,
        serverAPIRateLimits: ServerAPIRateLimits = .apple, tokenClock: any SimulatorClock = RealTimeClock()
    ) {
        self.serverAPIRateLimits = serverAPIRateLimits
        self.tokenClock = tokenClock
        self.environment = environment
        self.authority = authority
        self.clock = clock
        self.scale = scale
        self.transport = transport
        self.signer = ApplePayloadSigner(authority: authority)
        self.state = StoreState(environment: environment, scale: scale)
        self.retrySchedule = NotificationRetrySchedule(scale: scale)
        self.lossPolicy = lossPolicy
        self.lossGenerator = SeededGenerator(seed: lossPolicy.seed)
        self.rateLimit = rateLimit
    }

    // MARK: Catalog and settings

    /// Adds (or replaces) an app with its catalog and API keys.
    public func addApp(_ app: SimulatedApp) throws(SimulatorError) {
        var keys: [String: PublicKey] = [:]
        var owners: [String: SimulatedApp.APIKey] = [:]
        var all = state.apps
        all[app.bundleId] = app
        for candidate in all.values {
            for key in candidate.apiKeys {
                guard let publicKey = try? PublicKey(pem: key.publicKeyPEM) else {
                    throw SimulatorError(.invalidAction, "API key \(key.keyId) is not a PEM public key")
                }
                keys[key.keyId] = publicKey
                owners[key.keyId] = key
            }
        }
        state.apps[app.bundleId] = app
        tokenVerifier = AppStoreConnectTokenVerifier(keys: keys)
        keyOwners = owners
    }

    public func addCustomer(_ customer: SimulatedCustomer) {
        state.customers[customer.id] = customer
    }

    public func apps() -> [SimulatedApp] { state.apps.values.sorted { $0.bundleId < $1.bundleId } }

    public func setNotificationURL(bundleId: String, v2: String?, v1: String? = nil) throws(SimulatorError) {
        var app = try state.app(bundleId)
        app.notificationURL = v2
        app.notificationURLV1 = v1
        state.apps[bundleId] = app
    }

    public func setLossPolicy(_ policy: NotificationLossPolicy) {
        lossPolicy = policy
        lossGenerator = SeededGenerator(seed: policy.seed)
    }

    public func setRateLimit(_ limit: RateLimit?) {
        rateLimit = limit
        recentRequests = [:]
    }

    /// Replaces the per-endpoint limits (Apple's by default; `ServerAPIRateLimits`) and empties
    /// their buckets.
    public func setServerAPIRateLimits(_ limits: ServerAPIRateLimits) {
        serverAPIRateLimits = limits
        serverAPIRateState = ServerAPIRateState()
    }

    public var currentServerAPIRateLimits: ServerAPIRateLimits { serverAPIRateLimits }

    /// Starts or ends a simulated outage of the App Store's APIs: while it lasts the Server API
    /// answers every call 503 (Apple's retryable internal error) and verifyReceipt status 21005.
    /// The store itself goes on (purchases, renewals, notifications), as Apple's does.
    public func setOutage(_ active: Bool) {
        outage = active
    }

    public var isInOutage: Bool { outage }

    // MARK: Actions

    /// Performs a customer action or store event, signs what it produced and delivers what is
    /// due before returning.
    public func perform(_ action: SimulatorAction) async throws(SimulatorError) -> ActionResult {
        let now = clock.now
        let before = notifications.count
        var transactionId: String?
        func need<T>(_ value: T?, _ name: String) throws(SimulatorError) -> T {
            guard let value else { throw SimulatorError(.invalidAction, "\(action.action.rawValue) needs \(name)") }
            return value
        }
        switch action.action {
        case .addCustomer:
            let customer = try need(action.customerInfo, "customerInfo")
            state.customers[customer.id] = customer
        case .purchase:
            transactionId = try state.purchase(
                PurchaseRequest(
                    customer: try need(action.customer, "customer"), productId: try need(action.productId, "productId"),
                    bundleId: action.bundleId, offer: action.offer, introductoryOffer: action.introductoryOffer,
                    appAccountToken: action.appAccountToken, quantity: action.quantity),
                now: now)
        case .setAutoRenew:
            try state.setAutoRenew(
                customer: try need(action.customer, "customer"), productId: try need(action.productId, "productId"),
                bundleId: action.bundleId, enabled: try need(action.enabled, "enabled"), now: now)
        case .billingIssue:
            try state.setBillingFails(customer: try need(action.customer, "customer"), fails: true, now: now)
        case .billingRecovery:
            try state.setBillingFails(customer: try need(action.customer, "customer"), fails: false, now: now)
        case .requestRefund:
            let id = try resolveTransaction(action)
            let reason = ConsumptionRequestReason(rawValue: action.reason ?? "UNINTENDED_PURCHASE")
            try state.requestRefund(
                transactionId: id, reason: try need(reason, "a consumption request reason"), now: now)
            transactionId = id
        case .refund:
            let id = try resolveTransaction(action)
            let reason: RevocationReason
            switch action.reason ?? "other" {
            case "developerIssue", "1": reason = .refundedDueToIssue
            case "other", "0": reason = .other
            default: throw SimulatorError(.invalidAction, "refund reason is developerIssue or other")
            }
            try state.refund(transactionId: id, reason: reason, percentage: action.percentage, now: now)
            transactionId = id
        case .declineRefund:
            let id = try resolveTransaction(action)
            try state.declineRefund(transactionId: id, now: now)
            transactionId = id
        case .reverseRefund:
            let id = try resolveTransaction(action, includeRevoked: true)
            try state.reverseRefund(transactionId: id, now: now)
            transactionId = id
        case .joinFamily:
            try state.joinFamily(
                customer: try need(action.customer, "customer"), group: try need(action.group, "group"), now: now)
        case .leaveFamily:
            try state.leaveFamily(customer: try need(action.customer, "customer"), now: now)
        case .stopSharing:
            try state.stopSharing(
                customer: try need(action.customer, "customer"), productId: try need(action.productId, "productId"),
                now: now)
        case .increasePrice:
            try state.increasePrice(
                productId: try need(action.productId, "productId"), bundleId: action.bundleId,
                storefront: action.storefront,
                price: try need(action.price, "price"), requiresConsent: action.requiresConsent ?? true, now: now)
        case .consentToPriceIncrease:
            try state.consentToPriceIncrease(
                customer: try need(action.customer, "customer"), productId: try need(action.productId, "productId"),
                bundleId: action.bundleId, now: now)
        case .extendRenewalDate:
            let subscription = try state.liveSubscription(
                customer: try need(action.customer, "customer"), productId: try need(action.productId, "productId"),
                bundleId: action.bundleId)
            _ = try state.extendRenewalDate(
                originalTransactionId: subscription.originalTransactionId, bundleId: subscription.bundleId,
                request: ExtendRenewalDateRequest(
                    extendByDays: action.days, extendReasonCode: RawEnum(rawValue: action.extendReasonCode ?? 1),
                    requestIdentifier: UUID().uuidString.lowercased()),
                now: now)
            transactionId = subscription.latestTransactionId
        case .massExtendRenewalDate:
            let productId = try need(action.productId, "productId")
            let (app, _) = try state.product(productId, bundleId: action.bundleId)
            _ = try state.massExtend(
                bundleId: app.bundleId,
                request: MassExtendRenewalDateRequest(
                    extendByDays: action.days, extendReasonCode: RawEnum(rawValue: action.extendReasonCode ?? 1),
                    requestIdentifier: UUID().uuidString.lowercased(), storefrontCountryCodes: action.storefronts,
                    productId: productId),
                now: now)
        case .advanceTime:
            guard let manual = clock as? ManualClock else {
                throw SimulatorError(.timeTravelUnavailable, "time travel needs a manual clock")
            }
            if let duration = action.duration { manual.set(scale.adding(duration, to: manual.now)) }
            if let hours = action.hours { manual.advance(milliseconds: scale.milliseconds(hours: hours)) }
            if let days = action.days { manual.advance(milliseconds: scale.milliseconds(days: Double(days))) }
        case .renew:
            guard let manual = clock as? ManualClock else {
                throw SimulatorError(.timeTravelUnavailable, "time travel needs a manual clock")
            }
            let (app, product) = try state.product(try need(action.productId, "productId"), bundleId: action.bundleId)
            guard let groupId = product.groupId,
                let subscription = state.ownSubscription(
                    customer: try need(action.customer, "customer"), bundleId: app.bundleId, groupId: groupId)
            else { throw SimulatorError(.unknownSubscription, "no subscription to renew") }
            let due = state.nextDueEvent(for: subscription.originalTransactionId) ?? subscription.expiresDate
            if due > manual.now { manual.set(due) }
        case .requestTestNotification:
            var bundleId = action.bundleId
            if bundleId == nil { bundleId = try onlyBundleId() }
            _ = try requestTestNotification(bundleId: bundleId ?? "")
        case .finishTransaction:
            let id = try resolveTransaction(action)
            try state.finish(transactionId: id)
            transactionId = id
        }
        await tick()
        return ActionResult(
            transactionId: transactionId,
            notifications: notifications[before...].map {
                ActionResult.ProducedNotification(
                    notificationUUID: $0.uuid, notificationType: $0.type.rawValue, subtype: $0.subtype?.rawValue,
                    customer: $0.customerId, originalTransactionId: $0.originalTransactionId)
            },
            now: clock.now)
    }

    /// Runs the store's due events and signs their notifications, then delivers due
    /// notifications (first sends and retries).
    public func tick() async {
        let now = clock.now
        state.processDueEvents(now: now)
        signPending(now: now)
        await deliverDue()
    }

    func onlyBundleId() throws(SimulatorError) -> String {
        guard state.apps.count == 1, let app = state.apps.values.first else {
            throw SimulatorError(.invalidAction, "bundleId is needed when the simulator has several apps")
        }
        return app.bundleId
    }

    /// The action's transaction: explicit, or the customer's latest purchased one of the product.
    private func resolveTransaction(_ action: SimulatorAction, includeRevoked: Bool = false) throws(SimulatorError)
        -> String
    {
        if let id = action.transactionId { return try state.transaction(id).transactionId }
        guard let customer = action.customer, let productId = action.productId else {
            throw SimulatorError(
                .invalidAction, "\(action.action.rawValue) needs transactionId or customer and productId")
        }
        let candidates = state.transactions(ofCustomer: customer).filter {
            $0.productId == productId && $0.ownership == .purchased
                && (includeRevoked || !$0.isRevoked)
        }
        guard let latest = includeRevoked ? candidates.last(where: \.isRevoked) ?? candidates.last : candidates.last
        else { throw SimulatorError(.unknownTransaction, "\(customer) has no transaction of \(productId)") }
        return latest.transactionId
    }

    // MARK: Inspection

    /// Every notification produced so far, oldest first.
    public func producedNotifications() -> [SimulatorNotification] {
        notifications.map {
            SimulatorNotification(
                notificationUUID: $0.uuid, bundleId: $0.bundleId, customer: $0.customerId,
                notificationType: $0.type.rawValue, subtype: $0.subtype?.rawValue, signedPayload: $0.signedPayload,
                sendAttempts: $0.attempts, lost: $0.lost)
        }
    }

    /// The status of the customer's own subscription in the group of `productId`.
    public func subscriptionStatus(customer: String, productId: String, bundleId: String? = nil) -> Status? {
        guard let (app, product) = try? state.product(productId, bundleId: bundleId), let groupId = product.groupId
        else { return nil }
        return state.ownSubscription(customer: customer, bundleId: app.bundleId, groupId: groupId)?.status
            ?? state.subscriptions.values.first {
                $0.customerId == customer && $0.bundleId == app.bundleId && $0.groupId == groupId
            }?.status
    }

    /// Every transaction of a customer, signed now (tests, admin API).
    public func signedTransactions(customer: String) throws(SimulatorError) -> [String] {
        let now = clock.now
        var signed: [String] = []
        for record in state.transactions(ofCustomer: customer) {
            signed.append(try signer.sign(state.transactionPayload(record, signedDate: now)))
        }
        return signed
    }

    /// Every renewal info of a customer, signed now.
    public func signedRenewalInfos(customer: String) throws(SimulatorError) -> [String] {
        let now = clock.now
        var signed: [String] = []
        for record in state.subscriptions(ofCustomer: customer)
            .sorted(by: { $0.originalTransactionId < $1.originalTransactionId })
        {
            signed.append(try signer.sign(state.renewalPayload(record, signedDate: now)))
        }
        return signed
    }

    /// The customer's transaction ids, oldest first.
    public func transactionIds(customer: String) -> [String] {
        state.transactions(ofCustomer: customer).map(\.transactionId)
    }
}

extension StoreState {
    /// When the given purchaser subscription's next lifecycle event is due.
    func nextDueEvent(for originalTransactionId: String) -> Timestamp? {
        guard let subscription = subscriptions[originalTransactionId] else { return nil }
        switch subscription.status {
        case .active: return subscription.expiresDate
        case .billingGracePeriod:
            return [subscription.gracePeriodExpiresDate, subscription.billingRetryEndsAt].compactMap { $0 }.min()
        case .billingRetry: return subscription.billingRetryEndsAt
        default: return nil
        }
    }
}
