import AppStoreModels

/// What the next evaluation reads of a stored `CustomerInfo`: whose state it was, in which
/// environment, and the events it listed (so that only new ones are reported). Decoded from
/// the stored JSON without the rest of the state, which a cold customer's ingestion would
/// otherwise decode in full only to read these three fields.
/// - Note: Immutable value; `Sendable`.
public struct PreviousEvaluation: Sendable, Hashable, Decodable {
    public var customerId: String
    public var environment: AppStoreEnvironment
    public var eventIds: [String]

    public init(customerId: String, environment: AppStoreEnvironment, eventIds: [String]) {
        self.customerId = customerId
        self.environment = environment
        self.eventIds = eventIds
    }

    public init(_ info: CustomerInfo) {
        self.init(customerId: info.customerId, environment: info.environment, eventIds: info.eventIds)
    }
}
