import AppStoreModels
import Entitlements

/// The result of an idempotent insert: the new row, or a replay that changed nothing.
/// - Note: Immutable value; `Sendable`.
public enum Insertion: Sendable, Hashable {
    case inserted(Int64)
    case duplicate

    public var isDuplicate: Bool { self == .duplicate }
}

/// The kinds of stored fact.
public enum FactKind: String, Sendable, Hashable, Codable, CaseIterable {
    case transaction
    case renewalInfo
    case notification
    /// Google Play (migration `0014_google_play`, table `play_snapshots`).
    case playSubscription
    case playProductPurchase
    case playVoidedPurchase
    /// Google Play orders (migration `0021_play_order_revenue`, table `play_orders`).
    case playOrder

    /// The `play_snapshots.kind` of a Play kind.
    var playKind: PlayFactKind? {
        switch self {
        case .transaction, .renewalInfo, .notification: return nil
        case .playSubscription: return .subscription
        case .playProductPurchase: return .product
        case .playVoidedPurchase: return .voided
        case .playOrder: return .order
        }
    }
}

/// A verified transaction to store: Apple's JWS verbatim (nil for a legacy receipt entry)
/// and the fact decoded from it. Unique on (appId, environment, transactionId, signedDate).
/// - Note: Immutable value; `Sendable`.
public struct NewTransaction: Sendable, Hashable {
    public var appId: String
    public var jws: String?
    public var fact: TransactionFact
    /// Where it came from: `notification`, `api`, `client`, `receipt`, …
    public var source: String
    public var receivedAt: Timestamp

    public init(appId: String, jws: String?, fact: TransactionFact, source: String, receivedAt: Timestamp) {
        self.appId = appId
        self.jws = jws
        self.fact = fact
        self.source = source
        self.receivedAt = receivedAt
    }
}

/// A verified renewal info to store. Unique on (appId, environment, originalTransactionId,
/// signedDate).
/// - Note: Immutable value; `Sendable`.
public struct NewRenewalInfo: Sendable, Hashable {
    public var appId: String
    public var jws: String?
    public var fact: RenewalFact
    public var source: String
    public var receivedAt: Timestamp

    public init(appId: String, jws: String?, fact: RenewalFact, source: String, receivedAt: Timestamp) {
        self.appId = appId
        self.jws = jws
        self.fact = fact
        self.source = source
        self.receivedAt = receivedAt
    }
}

/// A verified server notification to store, verbatim. Unique on (appId, notificationUUID).
/// - Note: Immutable value; `Sendable`.
public struct NewNotification: Sendable, Hashable {
    public var appId: String
    public var notificationUUID: String
    public var type: String
    public var subtype: String?
    public var environment: AppStoreEnvironment?
    public var originalTransactionId: String?
    public var signedDate: Timestamp
    /// The `signedPayload` (V2) or request body (V1) exactly as received.
    public var signedPayload: String
    /// The envelope fact, when the notification concerns a customer.
    public var fact: NotificationFact?
    public var receivedAt: Timestamp
    /// How its processing is expected to end, stored with the row so that `finishNotification`
    /// has nothing to write when it ends so. Changing the row's size later (NULL to an
    /// outcome) makes SQLite rewrite the whole record, a payload of kilobytes with its overflow
    /// pages, in every ingestion. Only for a row inserted and finished in one transaction:
    /// nobody sees it before the outcome is certain.
    public var presumed: NotificationProcessing?

    public init(
        appId: String, notificationUUID: String, type: String, subtype: String?, environment: AppStoreEnvironment?,
        originalTransactionId: String?, signedDate: Timestamp, signedPayload: String, fact: NotificationFact?,
        receivedAt: Timestamp, presumed: NotificationProcessing? = nil
    ) {
        self.appId = appId
        self.notificationUUID = notificationUUID
        self.type = type
        self.subtype = subtype
        self.environment = environment
        self.originalTransactionId = originalTransactionId
        self.signedDate = signedDate
        self.signedPayload = signedPayload
        self.fact = fact
        self.receivedAt = receivedAt
        self.presumed = presumed
    }
}

/// When a notification was processed and how it ended (`notifications.processed_at`, `outcome`).
/// - Note: Immutable value; `Sendable`.
public struct NotificationProcessing: Sendable, Hashable {
    public var outcome: String
    public var at: Timestamp

    public init(outcome: String, at: Timestamp) {
        self.outcome = outcome
        self.at = at
    }
}

/// A stored notification.
/// - Note: Immutable value; `Sendable`.
public struct NotificationRecord: Sendable, Hashable {
    public var id: Int64
    public var appId: String
    public var notificationUUID: String
    public var type: String
    public var subtype: String?
    public var environment: AppStoreEnvironment?
    public var originalTransactionId: String?
    public var signedDate: Timestamp
    public var signedPayload: String
    public var receivedAt: Timestamp
    public var processedAt: Timestamp?
    public var outcome: String?
}

/// A legacy receipt and Apple's `verifyReceipt` answer, both verbatim.
/// - Note: Immutable value; `Sendable`.
public struct NewReceiptValidation: Sendable, Hashable {
    public var appId: String
    public var customerId: Int64?
    public var environment: AppStoreEnvironment?
    /// Base64 receipt as the app sent it.
    public var receiptData: String
    /// The `verifyReceipt` response body as Apple sent it.
    public var responseBody: String?
    public var receivedAt: Timestamp

    public init(
        appId: String, customerId: Int64?, environment: AppStoreEnvironment?, receiptData: String,
        responseBody: String?, receivedAt: Timestamp
    ) {
        self.appId = appId
        self.customerId = customerId
        self.environment = environment
        self.receiptData = receiptData
        self.responseBody = responseBody
        self.receivedAt = receivedAt
    }
}

/// A stored fact with its raw payload, as listed for support and audit.
/// - Note: Immutable value; `Sendable`.
public struct StoredFact: Sendable, Hashable {
    /// Cursor for paging (row id within its kind).
    public var sequence: Int64
    public var kind: FactKind
    public var environment: AppStoreEnvironment?
    public var originalTransactionId: String?
    public var signedDate: Timestamp
    /// The JWS (transactions, renewal infos) or signed payload (notifications); `nil` for
    /// facts read from a legacy receipt.
    public var raw: String?
    public var fact: Fact?
    public var receivedAt: Timestamp
}

/// The stored state of one customer in one environment.
/// - Note: Immutable value; `Sendable`.
public struct StoredCustomerInfo: Sendable, Hashable {
    public var info: CustomerInfo
    /// Starts at 1 and only moves forward.
    public var version: Int64
    public var updatedAt: Timestamp
}

/// A lifecycle event as appended for a customer.
/// - Note: Immutable value; `Sendable`.
public struct StoredEvent: Sendable, Hashable {
    /// Monotonic cursor (row id).
    public var sequence: Int64
    public var customerId: Int64
    public var event: LifecycleEvent
    public var createdAt: Timestamp
    /// When later facts showed the event did not happen (`retractEvents`); `nil` while it stands.
    public var retractedAt: Timestamp? = nil
}

/// What `customerState(appId:knownAs:environment:)` found.
/// - Note: Immutable value; `Sendable`.
public enum CustomerStateLookup: Sendable, Hashable {
    case noCustomer
    /// The customer exists but has no state stored for that environment.
    case noState(customerId: Int64)
    /// The committed CustomerInfo JSON, the answer until `validUntil` (epoch ms, exclusive), and
    /// its digest when it was saved with one (`customer_states.info_digest`).
    case state(customerId: Int64, infoJSON: String, validUntil: Int64, digest: String?)
}
