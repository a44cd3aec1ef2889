import AppStoreModels

/// A notification the store model decided to send, with the payloads as they were at that
/// moment; the simulator signs and queues it.
struct NotificationIntent: Sendable {
    var bundleId: String
    var customerId: String?
    var type: NotificationTypeV2
    var subtype: Subtype?
    var transaction: JWSTransactionDecodedPayload?
    var renewalInfo: JWSRenewalInfoDecodedPayload?
    var status: Status?
    var consumptionRequestReason: ConsumptionRequestReason?
    var summary: Summary?
    /// The original transaction the notification is about (notification history filter).
    var originalTransactionId: String?
    /// The product kind, which decides the V1 counterpart (a subscription refund is CANCEL).
    var kind: SimulatedProduct.Kind?
}
