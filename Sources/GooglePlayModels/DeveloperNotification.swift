import Foundation

/// A Google Play real-time developer notification (the JSON inside a Pub/Sub message's `data`).
///
/// It carries no purchase state: it says which purchase token changed and how, and the state
/// is read from the Play Developer API. Exactly one of the four notification members is set;
/// `decode` refuses a notification with none or several (`notificationKind`).
/// - Note: Immutable value; `Sendable`.
public struct DeveloperNotification: Sendable, Hashable, Codable {
    /// The notification format version (`"1.0"`).
    public var version: String
    public var packageName: String
    /// When the event happened, milliseconds since 1970 written as a string.
    public var eventTimeMillis: EpochMillisString
    public var subscriptionNotification: SubscriptionNotification?
    public var oneTimeProductNotification: OneTimeProductNotification?
    public var voidedPurchaseNotification: VoidedPurchaseNotification?
    public var testNotification: TestNotification?

    public init(
        version: String = "1.0", packageName: String, eventTimeMillis: EpochMillisString,
        subscriptionNotification: SubscriptionNotification? = nil,
        oneTimeProductNotification: OneTimeProductNotification? = nil,
        voidedPurchaseNotification: VoidedPurchaseNotification? = nil, testNotification: TestNotification? = nil
    ) {
        self.version = version
        self.packageName = packageName
        self.eventTimeMillis = eventTimeMillis
        self.subscriptionNotification = subscriptionNotification
        self.oneTimeProductNotification = oneTimeProductNotification
        self.voidedPurchaseNotification = voidedPurchaseNotification
        self.testNotification = testNotification
    }

    /// Which kind of notification this is, with its member.
    public enum Kind: Sendable, Hashable {
        case subscription(SubscriptionNotification)
        case oneTimeProduct(OneTimeProductNotification)
        case voidedPurchase(VoidedPurchaseNotification)
        case test(TestNotification)
    }

    /// The one notification member that is set (`decode` guarantees there is exactly one).
    public var kind: Kind? {
        let kinds = allKinds
        return kinds.count == 1 ? kinds[0] : nil
    }

    private var allKinds: [Kind] {
        var kinds: [Kind] = []
        if let subscriptionNotification { kinds.append(.subscription(subscriptionNotification)) }
        if let oneTimeProductNotification { kinds.append(.oneTimeProduct(oneTimeProductNotification)) }
        if let voidedPurchaseNotification { kinds.append(.voidedPurchase(voidedPurchaseNotification)) }
        if let testNotification { kinds.append(.test(testNotification)) }
        return kinds
    }

    /// A developer notification is about 300 bytes; 16 KiB bounds what is parsed.
    public static let maximumBytes = 16 * 1024

    /// Decodes and checks that exactly one notification kind is present.
    public static func decode(_ data: Data) throws(GooglePlayModelError) -> DeveloperNotification {
        let notification = try GooglePlayJSON.decode(DeveloperNotification.self, from: data, maximumBytes: maximumBytes)
        let count = notification.allKinds.count
        guard count == 1 else {
            throw GooglePlayModelError(
                .notificationKind, type: "DeveloperNotification", detail: "\(count) notification members present")
        }
        return notification
    }
}

/// A subscription changed: `notificationType` says how, `purchaseToken` which one.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionNotification: Sendable, Hashable, Codable {
    public var version: String
    public var notificationType: PlayRawEnum<SubscriptionNotificationType>
    public var purchaseToken: String
    /// The subscription's product id; Google no longer fills it for new integrations (read
    /// `lineItems` from the API instead).
    public var subscriptionId: String?

    public init(
        version: String = "1.0", notificationType: PlayRawEnum<SubscriptionNotificationType>, purchaseToken: String,
        subscriptionId: String? = nil
    ) {
        self.version = version
        self.notificationType = notificationType
        self.purchaseToken = purchaseToken
        self.subscriptionId = subscriptionId
    }
}

/// A one-time product was purchased or its pending purchase canceled.
/// - Note: Immutable value; `Sendable`.
public struct OneTimeProductNotification: Sendable, Hashable, Codable {
    public var version: String
    public var notificationType: PlayRawEnum<OneTimeProductNotificationType>
    public var purchaseToken: String
    /// The product id.
    public var sku: String

    public init(
        version: String = "1.0", notificationType: PlayRawEnum<OneTimeProductNotificationType>, purchaseToken: String,
        sku: String
    ) {
        self.version = version
        self.notificationType = notificationType
        self.purchaseToken = purchaseToken
        self.sku = sku
    }
}

/// A purchase was voided (refund, chargeback, revocation): a full refund or, for a
/// multi-quantity one-time purchase, a partial refund by quantity.
/// - Note: Immutable value; `Sendable`.
public struct VoidedPurchaseNotification: Sendable, Hashable, Codable {
    public var purchaseToken: String
    public var orderId: String
    public var productType: PlayRawEnum<VoidedPurchaseProductType>
    public var refundType: PlayRawEnum<VoidedPurchaseRefundType>

    public init(
        purchaseToken: String, orderId: String, productType: PlayRawEnum<VoidedPurchaseProductType>,
        refundType: PlayRawEnum<VoidedPurchaseRefundType>
    ) {
        self.purchaseToken = purchaseToken
        self.orderId = orderId
        self.productType = productType
        self.refundType = refundType
    }
}

/// Sent from the Play Console's "Send test notification"; concerns no purchase.
/// - Note: Immutable value; `Sendable`.
public struct TestNotification: Sendable, Hashable, Codable {
    public var version: String

    public init(version: String = "1.0") { self.version = version }
}
