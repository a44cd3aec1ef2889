import AppStoreModels
import Entitlements
import Storage

/// The JSON body of one webhook: a lifecycle event with a stable id (the engine's, derived from
/// its cause, so redeliveries and replays carry the same id), the app, the customer, the
/// product, entitlements, environment, money fields, and the customer's `CustomerInfo` as
/// stored when the delivery is sent (after the change).
/// - Note: Immutable value; `Sendable`.
public struct WebhookPayload: Sendable, Hashable, Codable {
    public struct Customer: Sendable, Hashable, Codable {
        public var appUserId: String
        public var aliases: [String]
    }

    public var id: String
    public var type: String
    public var appId: String
    public var customer: Customer
    public var productId: String
    public var entitlementIds: [String]
    public var environment: AppStoreEnvironment
    public var occurredAt: Timestamp
    public var transactionId: String?
    public var originalTransactionId: String?
    public var periodType: PeriodType?
    public var price: Money?
    public var proceeds: Money?
    public var commissionPercent: Int?
    public var expiresDate: Timestamp?
    /// Absent for the App Store, `play_store` for Google Play.
    public var store: Marketplace?
    public var event: LifecycleEvent
    public var customerInfo: CustomerInfo?

    init(event stored: StoredEvent, appId: String, customer: CustomerRecord?, customerInfo: CustomerInfo?) {
        let event = stored.event
        id = event.id
        type = event.type.rawValue
        self.appId = appId
        self.customer = Customer(
            appUserId: customer?.appUserId ?? event.customerId, aliases: customer?.aliases ?? [])
        productId = event.productId
        entitlementIds = event.entitlementIds
        environment = event.environment
        occurredAt = event.occurredAt
        transactionId = event.transactionId
        originalTransactionId = event.originalTransactionId
        periodType = event.periodType
        price = event.price
        proceeds = event.proceeds
        commissionPercent = event.commissionPercent
        expiresDate = event.expiresDate
        store = event.store
        self.event = event
        self.customerInfo = customerInfo
    }
}
