import AppStoreModels
import Foundation

/// A customer action or store event, as JSON for the admin API (`POST /simulator/v1/actions`)
/// and for scenario steps: `{"action": "purchase", "customer": "alice", "productId": "monthly"}`.
///
/// Fields that an action does not use are ignored. Where a transaction is needed
/// (`refund`, `requestRefund`, …) and `transactionId` is absent, the customer's latest
/// purchased transaction of `productId` is used.
/// - Note: Immutable value; `Sendable`.
public struct SimulatorAction: Sendable, Hashable, Codable {
    public enum Kind: String, Sendable, Hashable, Codable, CaseIterable {
        case addCustomer
        case purchase
        case setAutoRenew
        /// The customer's payment method starts failing: renewals fail from now on.
        case billingIssue
        /// The customer fixes the payment method: Apple retries billing at once.
        case billingRecovery
        case requestRefund
        case refund
        case declineRefund
        case reverseRefund
        case joinFamily
        case leaveFamily
        /// The purchaser turns off Family Sharing for a product (or it stops being shared).
        case stopSharing
        case increasePrice
        case consentToPriceIncrease
        case extendRenewalDate
        case massExtendRenewalDate
        /// Time travel (manual clock only).
        case advanceTime
        /// Time travel to the customer's next renewal of `productId` (manual clock only).
        case renew
        case requestTestNotification
        case finishTransaction
    }

    public var action: Kind
    public var customer: String?
    public var productId: String?
    public var bundleId: String?
    public var transactionId: String?
    public var offer: PurchaseRequest.OfferChoice?
    public var introductoryOffer: Bool?
    public var appAccountToken: UUID?
    public var quantity: Int32?
    public var enabled: Bool?
    /// Refund: `developerIssue` or `other`. Refund request: Apple's consumption request reason.
    public var reason: String?
    /// A prorated refund's percentage (1–99).
    public var percentage: Int?
    public var group: String?
    public var storefront: String?
    public var storefronts: [String]?
    public var price: Int64?
    public var requiresConsent: Bool?
    public var days: Int32?
    public var extendReasonCode: Int32?
    public var duration: StorePeriod?
    public var hours: Double?
    /// For `addCustomer`.
    public var customerInfo: SimulatedCustomer?

    public init(_ action: Kind, customer: String? = nil, productId: String? = nil) {
        self.action = action
        self.customer = customer
        self.productId = productId
    }
}

/// What an action did: the transaction it created or acted on, and the notifications it
/// produced (in order).
/// - Note: Immutable value; `Sendable`.
public struct ActionResult: Sendable, Hashable, Codable {
    public struct ProducedNotification: Sendable, Hashable, Codable {
        public var notificationUUID: String
        public var notificationType: String
        public var subtype: String?
        public var customer: String?
        public var originalTransactionId: String?

        public init(
            notificationUUID: String, notificationType: String, subtype: String?, customer: String?,
            originalTransactionId: String?
        ) {
            (self.notificationUUID, self.notificationType, self.subtype) = (notificationUUID, notificationType, subtype)
            (self.customer, self.originalTransactionId) = (customer, originalTransactionId)
        }
    }

    public var transactionId: String?
    public var notifications: [ProducedNotification]
    public var now: Timestamp
}
