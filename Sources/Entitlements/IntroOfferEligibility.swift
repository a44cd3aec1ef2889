/// Whether the customer may still get the introductory offer of one subscription group.
/// - Note: Immutable value; `Sendable`.
public struct IntroOfferEligibility: Sendable, Hashable, Codable {
    public var subscriptionGroup: String
    public var isEligible: Bool
    /// The transaction that used the offer, when ineligible.
    public var usedByTransactionId: String?
    public var reason: String

    public init(subscriptionGroup: String, isEligible: Bool, usedByTransactionId: String?, reason: String) {
        self.subscriptionGroup = subscriptionGroup
        self.isEligible = isEligible
        self.usedByTransactionId = usedByTransactionId
        self.reason = reason
    }
}
