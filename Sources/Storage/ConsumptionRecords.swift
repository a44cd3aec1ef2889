import AppStoreModels

/// What the app reported about one transaction for consumption answers: its delivery status
/// (Apple's raw value) and usage in thousandths of a percent (`nil`: not reported).
/// - Note: Immutable value; `Sendable`.
public struct ConsumptionReport: Sendable, Hashable {
    public var deliveryStatus: String
    public var consumptionPercentage: Int32?
    public var recordedAt: Timestamp

    public init(deliveryStatus: String, consumptionPercentage: Int32?, recordedAt: Timestamp) {
        self.deliveryStatus = deliveryStatus
        self.consumptionPercentage = consumptionPercentage
        self.recordedAt = recordedAt
    }
}

/// How one `CONSUMPTION_REQUEST` was answered, and the refund decision that followed it.
/// - Note: Immutable value; `Sendable`.
public struct ConsumptionAnswerRecord: Sendable, Hashable {
    public var appId: String
    public var notificationUUID: String
    public var transactionId: String
    /// `sent` or `withheld`.
    public var outcome: String
    /// Why nothing was sent (a stable code and message); `nil` when sent.
    public var reason: String?
    /// The JSON body sent to Apple; `nil` when withheld.
    public var request: String?
    public var answeredAt: Timestamp
    /// `REFUND` or `REFUND_DECLINED`, once Apple notified its decision.
    public var refundOutcome: String?
    public var refundOutcomeAt: Timestamp?

    public init(
        appId: String, notificationUUID: String, transactionId: String, outcome: String, reason: String?,
        request: String?, answeredAt: Timestamp, refundOutcome: String? = nil, refundOutcomeAt: Timestamp? = nil
    ) {
        self.appId = appId
        self.notificationUUID = notificationUUID
        self.transactionId = transactionId
        self.outcome = outcome
        self.reason = reason
        self.request = request
        self.answeredAt = answeredAt
        self.refundOutcome = refundOutcome
        self.refundOutcomeAt = refundOutcomeAt
    }
}
