import AppStoreModels
import Entitlements

/// An app's Google Play side (migration `0014_google_play`).
/// - Note: Immutable value; `Sendable`.
public struct PlayAppSettings: Sendable, Hashable, Codable {
    public var appId: String
    /// The Android application id (`com.example.app`).
    public var packageName: String
    /// The service-account key JSON as stored: sealed (`sk1:…`) by `StoredSecrets` before a
    /// save; storage never sees it in clear. `nil`: no API access configured.
    public var serviceAccountKey: String?
    /// The `aud` the RTDN push's OIDC token must carry.
    public var rtdnAudience: String?
    /// The `email` of the service account Pub/Sub signs the push token as.
    public var pushServiceAccountEmail: String?
    /// Acknowledge every valid purchase ingested (Google refunds one left unacknowledged 3 days).
    public var acknowledgePurchases: Bool
    /// Read each new order from the orders API after a purchase or renewal read, so revenue
    /// and analytics use its exact developer revenue (off by default: one more call per order).
    public var readOrderRevenue: Bool
    /// The row's version: 1 when created, one more on every save (set by reads).
    public var version: Int64

    public init(
        appId: String, packageName: String, serviceAccountKey: String? = nil, rtdnAudience: String? = nil,
        pushServiceAccountEmail: String? = nil, acknowledgePurchases: Bool = true, readOrderRevenue: Bool = false,
        version: Int64 = 0
    ) {
        self.readOrderRevenue = readOrderRevenue
        self.appId = appId
        self.packageName = packageName
        self.serviceAccountKey = serviceAccountKey
        self.rtdnAudience = rtdnAudience
        self.pushServiceAccountEmail = pushServiceAccountEmail
        self.acknowledgePurchases = acknowledgePurchases
        self.version = version
    }
}

/// The kinds of stored Play facts.
public enum PlayFactKind: String, Sendable, Hashable, Codable, CaseIterable {
    case subscription
    case product
    case voided
    /// An order read from the orders API (table `play_orders`, not `play_snapshots`).
    case order
}

/// A Play fact to store: the API's (or the voided-purchases list's) JSON verbatim and the fact
/// decoded from it. Unique on (app, kind, token, read instant).
/// - Note: Immutable value; `Sendable`.
public struct NewPlayFact: Sendable, Hashable {
    public var appId: String
    /// The JSON exactly as Google answered it.
    public var raw: String
    public var fact: Fact
    /// Where it came from: `notification`, `client`, `voided_poll`, `recovery`, …
    public var source: String
    public var receivedAt: Timestamp

    /// `fact` must be one of the Play cases.
    public init(appId: String, raw: String, fact: Fact, source: String, receivedAt: Timestamp) {
        precondition(fact.store == .playStore, "NewPlayFact holds Google Play facts only")
        self.appId = appId
        self.raw = raw
        self.fact = fact
        self.source = source
        self.receivedAt = receivedAt
    }

    public var kind: PlayFactKind {
        switch fact {
        case .playProductPurchase: return .product
        case .playVoidedPurchase: return .voided
        case .playOrder: return .order
        default: return .subscription
        }
    }

    public var purchaseToken: String {
        switch fact {
        case .playSubscription(let value): return value.purchaseToken
        case .playProductPurchase(let value): return value.purchaseToken
        case .playVoidedPurchase(let value): return value.purchaseToken
        case .playOrder(let value): return value.purchaseToken
        default: return ""
        }
    }

    /// The read instant of a snapshot, the voided time of a voided purchase.
    var readAt: Timestamp {
        switch fact {
        case .playSubscription(let value): return value.readAt
        case .playProductPurchase(let value): return value.readAt
        case .playVoidedPurchase(let value): return value.voidedAt
        case .playOrder(let value): return value.readAt
        default: return receivedAt
        }
    }
}

/// One Play purchase token as stored: its latest snapshot and its acknowledgement.
/// - Note: Immutable value; `Sendable`.
public struct PlayPurchaseTokenRecord: Sendable, Hashable {
    public var appId: String
    public var purchaseToken: String
    public var kind: PlayFactKind
    public var environment: AppStoreEnvironment?
    public var productId: String
    public var linkedPurchaseToken: String?
    public var latestReadAt: Timestamp
    /// The latest snapshot's JSON exactly as Google answered it.
    public var latestRaw: String
    public var latestFact: Fact
    public var isAcknowledged: Bool
    public var acknowledgementAttempts: Int
    /// The last acknowledgement failure, without secrets.
    public var acknowledgementError: String?
    public var acknowledgementAttemptedAt: Timestamp?
    /// The customer owning the token (`customer_transactions`), if any.
    public var customerId: Int64?
}

/// A Real-time developer notification push to store verbatim. Unique on (app, `messageId`).
/// - Note: Immutable value; `Sendable`.
public struct NewPlayNotification: Sendable, Hashable {
    public var appId: String
    public var messageId: String
    public var packageName: String?
    /// `subscription`, `oneTimeProduct`, `voidedPurchase`, `test`, or `unknown`.
    public var kind: String
    /// `notificationType` (refundType for a voided purchase); unknown numbers kept.
    public var notificationType: Int64?
    public var purchaseToken: String?
    public var eventTime: Timestamp?
    /// The push request body exactly as received.
    public var body: String
    public var receivedAt: Timestamp

    public init(
        appId: String, messageId: String, packageName: String?, kind: String, notificationType: Int64?,
        purchaseToken: String?, eventTime: Timestamp?, body: String, receivedAt: Timestamp
    ) {
        self.appId = appId
        self.messageId = messageId
        self.packageName = packageName
        self.kind = kind
        self.notificationType = notificationType
        self.purchaseToken = purchaseToken
        self.eventTime = eventTime
        self.body = body
        self.receivedAt = receivedAt
    }
}

/// A stored RTDN push.
/// - Note: Immutable value; `Sendable`.
public struct PlayNotificationRecord: Sendable, Hashable {
    public var id: Int64
    public var appId: String
    public var messageId: String
    public var kind: String
    public var notificationType: Int64?
    public var purchaseToken: String?
    public var body: String
    public var receivedAt: Timestamp
    public var processedAt: Timestamp?
    public var outcome: String?
}
