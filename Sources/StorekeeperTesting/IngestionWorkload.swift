import AppStoreModels
import Entitlements
import Foundation
import Storage

/// A workload shaped like Apple's notifications, shared by the storage tests, the
/// multi-process ingestion probe and benchmarks: an app, its catalog, and notifications: each carries one signed
/// transaction version and a renewal info for a customer's monthly subscription.
public enum IngestionWorkload {
    public static let appId = "app-1"
    public static let base: Int64 = 1_767_225_600_000  // 2026-01-01
    public static let day: Int64 = 86_400_000
    public static let now = Timestamp(millisecondsSince1970: base + 400 * day)

    public static func at(_ days: Int64) -> Timestamp { Timestamp(millisecondsSince1970: base + days * day) }

    public static let catalog = ProductCatalog(products: [
        CatalogProduct(
            productId: "monthly", kind: .autoRenewable, subscriptionGroup: "premium", groupLevel: 1,
            duration: SubscriptionPeriod(value: 1, unit: .month), entitlementIds: ["pro"],
            referencePrice: Money(milliunits: 9990, currency: "USD")),
        CatalogProduct(productId: "lifetime", kind: .nonConsumable, entitlementIds: ["pro"]),
    ])

    public static let app = AppRecord(
        id: appId, bundleId: "com.example.app", appAppleId: 1234, environments: [.production, .sandbox])

    /// One delivery: the notification and the facts it carries.
    public struct Notification: Sendable, Hashable {
        public var uuid: String
        public var type: String
        public var appUserId: String
        public var transaction: TransactionFact
        public var renewal: RenewalFact?

        public var facts: [Fact] {
            var facts: [Fact] = [.transaction(transaction)]
            if let renewal { facts.append(.renewalInfo(renewal)) }
            facts.append(.notification(notificationFact))
            return facts
        }

        public var notificationFact: NotificationFact {
            NotificationFact(
                notificationId: uuid, type: type, signedDate: transaction.signedDate, environment: .production,
                originalTransactionId: transaction.originalTransactionId, transactionId: transaction.transactionId,
                productId: transaction.productId)
        }

        /// A stand-in for Apple's JWS: opaque text the store must keep verbatim.
        public var signedPayload: String { "eyJhbGciOiJFUzI1NiJ9.\(uuid).signature" }
    }

    /// `perCustomer` notifications for each of `customers` customers: a monthly subscription
    /// renewing every 30 days; every fifth customer's second period is refunded later (a
    /// re-signed version of the same transaction).
    public static func notifications(customers: Int, perCustomer: Int, prefix: String = "n") -> [Notification] {
        var result: [Notification] = []
        for customer in 0..<customers {
            let original = "\(prefix)-o\(customer)"
            var count = 0
            for period in 0..<Int64(perCustomer) {
                guard count < perCustomer else { break }
                let start = period * 30
                var transaction = TransactionFact(
                    transactionId: "\(original)-t\(period)", originalTransactionId: original, productId: "monthly",
                    purchaseDate: at(start), originalPurchaseDate: at(0), expiresDate: at(start + 30),
                    signedDate: at(start), environment: .production, price: 9990, currency: "USD",
                    transactionReason: period == 0 ? .purchase : .renewal)
                let renewal = RenewalFact(
                    originalTransactionId: original, productId: "monthly", autoRenewProductId: "monthly",
                    autoRenewEnabled: true, signedDate: at(start), environment: .production)
                result.append(
                    Notification(
                        uuid: "\(prefix)-c\(customer)-p\(period)", type: period == 0 ? "SUBSCRIBED" : "DID_RENEW",
                        appUserId: "user-\(prefix)-\(customer)", transaction: transaction, renewal: renewal))
                count += 1
                if customer % 5 == 0, period == 1, count < perCustomer {
                    transaction.signedDate = at(start + 3)
                    transaction.revocationDate = at(start + 3)
                    transaction.revocationReason = 0
                    transaction.revocationType = .refundFull
                    result.append(
                        Notification(
                            uuid: "\(prefix)-c\(customer)-refund", type: "REFUND",
                            appUserId: "user-\(prefix)-\(customer)",
                            transaction: transaction, renewal: nil))
                    count += 1
                }
            }
        }
        return result
    }

    public static func setUp(_ store: any Store, endpoints: [WebhookEndpoint] = []) async throws {
        try await store.write { tx in
            try tx.saveApp(app, at: at(0))
            try tx.saveCatalog(appId: appId, catalog, at: at(0))
            for endpoint in endpoints { try tx.saveWebhookEndpoint(endpoint, at: at(0)) }
        }
    }

    /// What the server's ingestion does, in one transaction: the notification first (a replay
    /// stops there), then the customer's lock, facts, new state, events and outbox rows.
    /// Returns whether the notification was new.
    @discardableResult
    public static func ingest(_ notification: Notification, into store: any Store, now: Timestamp = now) async throws
        -> Bool
    {
        try await store.write(retries: 20) { tx in try ingest(notification, in: tx, now: now) }
    }

    public static func ingest(_ notification: Notification, in tx: any StoreTransaction, now: Timestamp) throws -> Bool
    {
        let insertion = try tx.insertNotification(
            NewNotification(
                appId: appId, notificationUUID: notification.uuid, type: notification.type, subtype: nil,
                environment: .production, originalTransactionId: notification.transaction.originalTransactionId,
                signedDate: notification.transaction.signedDate, signedPayload: notification.signedPayload,
                fact: notification.notificationFact, receivedAt: now))
        guard case .inserted(let notificationId) = insertion else { return false }
        let customer = try tx.ensureCustomer(appId: appId, appUserId: notification.appUserId, at: now)
        try tx.claimOriginalTransaction(
            notification.transaction.originalTransactionId, customerId: customer.id, at: now)
        _ = try tx.insertTransaction(
            NewTransaction(
                appId: appId,
                jws:
                    "jws.\(notification.transaction.transactionId).\(notification.transaction.signedDate.millisecondsSince1970)",
                fact: notification.transaction, source: "notification", receivedAt: now))
        if let renewal = notification.renewal {
            _ = try tx.insertRenewalInfo(
                NewRenewalInfo(appId: appId, jws: "jws.renewal", fact: renewal, source: "notification", receivedAt: now)
            )
        }
        let previous = try tx.customerInfo(customerId: customer.id, environment: .production)
        let evaluation = EntitlementEngine.evaluate(
            customerId: notification.appUserId, environment: .production, facts: try tx.facts(customerId: customer.id),
            catalog: catalog, now: now, previous: previous?.info)
        _ = try tx.saveCustomerInfo(
            evaluation.customerInfo, customerId: customer.id, expectedVersion: previous?.version, at: now)
        let appended = try tx.appendEvents(evaluation.newEvents, customerId: customer.id, at: now)
        try tx.enqueueDeliveries(of: appended, appId: appId, at: now)
        try tx.finishNotification(id: notificationId, outcome: "processed", at: now)
        return true
    }
}
