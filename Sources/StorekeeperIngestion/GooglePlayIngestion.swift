import AppStoreModels
import Entitlements
import Foundation
import GooglePlayModels
import GooglePlayTrust
import Storage

/// The two ways a Google Play purchase reaches Storekeeper, without HTTP: a Pub/Sub push of a
/// real-time developer notification, and the app posting a purchase token for its user. Both
/// read the purchase's state from the Play Developer API (notifications carry none) and hand
/// the reads to `PlayIngestor`'s one commit path.
/// - Note: Immutable; `Sendable`.
public struct GooglePlayIngestion: Sendable {
    public let runtimes: PlayRuntimes
    public let ingestor: PlayIngestor
    let apps: AppRuntimes
    let store: any Store
    let clock: ServerClock

    public init(
        runtimes: PlayRuntimes, ingestor: PlayIngestor, apps: AppRuntimes, store: any Store, clock: ServerClock
    ) {
        self.runtimes = runtimes
        self.ingestor = ingestor
        self.apps = apps
        self.store = store
        self.clock = clock
    }

    /// What a push came to.
    public struct PushOutcome: Sendable, Hashable {
        public var outcome: FactCommit.Outcome
        /// `subscription`, `oneTimeProduct`, `voidedPurchase` or `test`.
        public var kind: String
    }

    /// A Pub/Sub push for `appId`: the OIDC token is checked first (`pushUnauthenticated`, with
    /// the trust rule, before anything is read or stored); then the message is stored verbatim
    /// with the facts it leads to, in one transaction, unique by `messageId` (a redelivery is
    /// `duplicate` and reads nothing from Google).
    public func receivePush(appId: String, authorization: String?, body: Data) async throws(IngestionError)
        -> PushOutcome
    {
        _ = try await apps.runtime(appId: appId)
        let runtime = try await runtimes.runtime(appId: appId)
        _ = try await runtime.authenticatePush(authorization: authorization)
        let request: PubSubPushRequest
        let notification: DeveloperNotification
        do {
            request = try PubSubPushRequest.decode(body)
            notification = try request.developerNotification()
        } catch {
            throw IngestionError(.invalidNotification, "The push is not a Google Play notification: \(error).")
        }
        let messageId = request.message.messageId
        guard !messageId.isEmpty, messageId.utf8.count <= VerifiedPlaySnapshot.maximumIdentifierBytes else {
            throw IngestionError(.invalidNotification, "The push message's messageId is empty or too long.")
        }
        let settings = runtime.settings
        guard notification.packageName == settings.packageName else {
            throw IngestionError(.invalidNotification, "The notification is for another package than this app's.")
        }
        guard let kind = notification.kind else {
            throw IngestionError(.invalidNotification, "The notification has no single notification member.")
        }
        let (kindName, type, token): (String, Int64?, String?) =
            switch kind {
            case .subscription(let value):
                ("subscription", Int64(value.notificationType.rawValue), value.purchaseToken)
            case .oneTimeProduct(let value):
                ("oneTimeProduct", Int64(value.notificationType.rawValue), value.purchaseToken)
            case .voidedPurchase(let value):
                ("voidedPurchase", Int64(value.refundType.rawValue), value.purchaseToken)
            case .test:
                ("test", nil, nil)
            }
        if let token, token.isEmpty || token.utf8.count > VerifiedPlaySnapshot.maximumTokenBytes {
            throw IngestionError(.invalidNotification, "The notification's purchase token is empty or too long.")
        }
        // A redelivered message is answered from the store: Google is not asked again.
        do {
            if try await store.read({ try $0.playNotification(appId: appId, messageId: messageId) }) != nil {
                return PushOutcome(outcome: .duplicate, kind: kindName)
            }
        } catch {
            throw IngestionError.store(error)
        }
        var snapshots = try await reads(for: kind, notification: notification, runtime: runtime)
        snapshots += await orderReads(of: snapshots, runtime: runtime)
        let receivedAt = clock.now()
        let stored = NewPlayNotification(
            appId: appId, messageId: messageId, packageName: notification.packageName, kind: kindName,
            notificationType: type, purchaseToken: token,
            eventTime: Timestamp(millisecondsSince1970: notification.eventTimeMillis.milliseconds),
            body: String(decoding: body, as: UTF8.self), receivedAt: receivedAt)
        let commit = try await ingestor.ingest(
            settings: settings, notification: stored, snapshots: snapshots, source: "notification",
            receivedAt: receivedAt)
        return PushOutcome(outcome: commit.outcome, kind: kindName)
    }

    /// The facts a notification leads to: the API's read of the purchase for a subscription or
    /// one-time product; the voided purchase itself; a revocation also as a full refund.
    func reads(for kind: DeveloperNotification.Kind, notification: DeveloperNotification, runtime: PlayRuntime)
        async throws(IngestionError) -> [VerifiedPlaySnapshot]
    {
        let settings = runtime.settings
        switch kind {
        case .subscription(let value):
            let read = try await runtime.readSubscription(token: value.purchaseToken)
            guard value.notificationType == SubscriptionNotificationType.revoked,
                case .playSubscription(let subscription) = read.fact
            else { return [read] }
            let order = subscription.lineItems.compactMap(\.latestSuccessfulOrderId).sorted().last
            let voided = PlayFactMapping.revocation(
                value, packageName: settings.packageName, eventTime: notification.eventTimeMillis, orderId: order,
                isTestPurchase: subscription.isTestPurchase)
            return [read, try VerifiedPlaySnapshot(fact: .playVoidedPurchase(voided), raw: Self.json(notification))]
        case .oneTimeProduct(let value):
            return [try await runtime.readProduct(productId: value.sku, token: value.purchaseToken)]
        case .voidedPurchase(let value):
            // The notification does not say whether a license tester bought it: the token's
            // stored read does. A token never read is taken as the app's production side when
            // it has one (the sandbox otherwise); its first read settles it.
            let (known, holdsProduction): (PlayPurchaseTokenRecord?, Bool)
            do {
                (known, holdsProduction) = try await store.read { reader in
                    (
                        try reader.playPurchaseToken(appId: settings.appId, purchaseToken: value.purchaseToken),
                        try reader.appId(playPackageName: settings.packageName, environment: .production)
                            == settings.appId
                    )
                }
            } catch {
                throw IngestionError.store(error)
            }
            let voided = try PlayFactMapping.voided(
                value, packageName: settings.packageName, eventTime: notification.eventTimeMillis,
                isTestPurchase: known.map { $0.environment == .sandbox } ?? !holdsProduction)
            return [try VerifiedPlaySnapshot(fact: .playVoidedPurchase(voided), raw: Self.json(notification))]
        case .test:
            return []
        }
    }

    /// The kinds of purchase an app can post.
    public enum PurchaseType: String, Sendable, Hashable, Codable {
        case subscription
        case product
    }

    /// The app posted a purchase token for `appUserId`: the purchase is read from the API
    /// (never taken from the caller), claimed under the app's transfer policy, and the
    /// customer's `CustomerInfo` answered.
    public func postPurchase(
        appId: String, appUserId: String, packageName: String, productId: String, purchaseToken: String,
        type: PurchaseType
    ) async throws(IngestionError) -> FactCommit {
        let app = try await apps.runtime(appId: appId)
        let runtime = try await runtimes.runtime(appId: appId)
        guard packageName == runtime.settings.packageName else {
            throw IngestionError(.invalidBody, "The packageName is not this app's Google Play package.")
        }
        guard !purchaseToken.isEmpty, purchaseToken.utf8.count <= VerifiedPlaySnapshot.maximumTokenBytes else {
            throw IngestionError(.invalidBody, "The purchaseToken is empty or too long.")
        }
        guard !productId.isEmpty, productId.utf8.count <= VerifiedPlaySnapshot.maximumIdentifierBytes else {
            throw IngestionError(.invalidBody, "The productId is empty or too long.")
        }
        let snapshot: VerifiedPlaySnapshot
        switch type {
        case .subscription:
            snapshot = try await runtime.readSubscription(token: purchaseToken)
            if case .playSubscription(let value) = snapshot.fact, !value.lineItems.isEmpty,
                !value.lineItems.contains(where: { $0.productId == productId })
            {
                throw IngestionError(.invalidBody, "The purchase token is not for the productId given.")
            }
        case .product:
            snapshot = try await runtime.readProduct(productId: productId, token: purchaseToken)
        }
        return try await ingestor.postPurchase(
            settings: runtime.settings, appUserId: appUserId, policy: app.settings.transferPolicy, snapshot: snapshot,
            orders: await orderReads(of: [snapshot], runtime: runtime), receivedAt: clock.now())
    }

    /// With the app's `readOrderRevenue` on: `orders.get` of each order the reads show that is
    /// not stored yet (a new purchase, a renewal), so revenue uses Google's exact developer
    /// revenue. An order that cannot be read now (Google busy, not yet known to the orders
    /// API, the key lacking the permission) is left out: the commission rule stands for it,
    /// and the next read of the purchase tries again while that order is still the latest one
    /// the read shows (a renewal after it moves on: the estimate stays for that order); the
    /// purchase itself is never held up.
    func orderReads(of snapshots: [VerifiedPlaySnapshot], runtime: PlayRuntime) async -> [VerifiedPlaySnapshot] {
        guard runtime.settings.readOrderRevenue else { return [] }
        var wanted: [(orderId: String, purchase: VerifiedPlaySnapshot)] = []
        for snapshot in snapshots {
            for orderId in snapshot.orderIds where !wanted.contains(where: { $0.orderId == orderId }) {
                wanted.append((orderId: orderId, purchase: snapshot))
            }
        }
        guard !wanted.isEmpty else { return [] }
        let appId = runtime.appId
        let ids = wanted.map(\.orderId)
        guard let stored = try? await store.read({ try $0.storedPlayOrderIds(appId: appId, orderIds: ids) }) else {
            return []
        }
        var reads: [VerifiedPlaySnapshot] = []
        for (orderId, purchase) in wanted where !stored.contains(orderId) {
            if let read = try? await runtime.readOrder(orderId: orderId, of: purchase) { reads.append(read) }
        }
        return reads
    }

    /// The notification as canonical JSON: the verbatim source of a fact made from it (the
    /// push body itself is stored with the notification).
    static func json(_ notification: DeveloperNotification) -> String {
        String(decoding: GooglePlayJSON.encode(notification), as: UTF8.self)
    }
}
