/// The progress of a mass renewal-date extension (Get Status of Subscription Renewal Date Extensions).
/// - Note: Immutable value; `Sendable`.
public struct MassExtendRenewalDateStatusResponse: Sendable, Hashable, Codable {
    public var requestIdentifier: String?
    public var complete: Bool?
    public var completeDate: Timestamp?
    public var succeededCount: Int64?
    public var failedCount: Int64?

    public init(
        requestIdentifier: String? = nil, complete: Bool? = nil, completeDate: Timestamp? = nil,
        succeededCount: Int64? = nil, failedCount: Int64? = nil
    ) {
        self.requestIdentifier = requestIdentifier
        self.complete = complete
        self.completeDate = completeDate
        self.succeededCount = succeededCount
        self.failedCount = failedCount
    }
}
