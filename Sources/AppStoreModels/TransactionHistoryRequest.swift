/// The query of Get Transaction History: filters and sort order, sent as URL query parameters.
///
/// Its two enumerations are Apple's query vocabulary, which differs from the `type` values inside
/// a signed transaction (`AUTO_RENEWABLE` here, `Auto-Renewable Subscription` there).
/// - Note: Immutable value; `Sendable`.
public struct TransactionHistoryRequest: Sendable, Hashable, Codable {
    /// Sort order of the history by modification date.
    public enum Order: String, Sendable, Hashable, Codable, CaseIterable {
        case ascending = "ASCENDING"
        case descending = "DESCENDING"
    }

    /// Product type filter values accepted by the `productType` query parameter.
    public enum ProductType: String, Sendable, Hashable, Codable, CaseIterable {
        case autoRenewable = "AUTO_RENEWABLE"
        case nonRenewable = "NON_RENEWABLE"
        case consumable = "CONSUMABLE"
        case nonConsumable = "NON_CONSUMABLE"
    }

    public var startDate: Timestamp?
    public var endDate: Timestamp?
    public var productIds: [String]?
    public var productTypes: [ProductType]?
    public var sort: Order?
    public var subscriptionGroupIdentifiers: [String]?
    public var inAppOwnershipType: InAppOwnershipType?
    public var revoked: Bool?

    public init(
        startDate: Timestamp? = nil, endDate: Timestamp? = nil, productIds: [String]? = nil,
        productTypes: [ProductType]? = nil, sort: Order? = nil,
        subscriptionGroupIdentifiers: [String]? = nil,
        inAppOwnershipType: InAppOwnershipType? = nil, revoked: Bool? = nil
    ) {
        self.startDate = startDate
        self.endDate = endDate
        self.productIds = productIds
        self.productTypes = productTypes
        self.sort = sort
        self.subscriptionGroupIdentifiers = subscriptionGroupIdentifiers
        self.inAppOwnershipType = inAppOwnershipType
        self.revoked = revoked
    }

    /// The query parameters in Apple's spelling, repeated names for lists, `revision` first when
    /// given. Apple requires the same filters on every page, so callers rebuild this per page.
    public func queryItems(revision: String? = nil) -> [(name: String, value: String)] {
        var items: [(name: String, value: String)] = []
        if let revision { items.append(("revision", revision)) }
        if let startDate { items.append(("startDate", String(startDate.millisecondsSince1970))) }
        if let endDate { items.append(("endDate", String(endDate.millisecondsSince1970))) }
        for id in productIds ?? [] { items.append(("productId", id)) }
        for type in productTypes ?? [] { items.append(("productType", type.rawValue)) }
        if let sort { items.append(("sort", sort.rawValue)) }
        for group in subscriptionGroupIdentifiers ?? [] {
            items.append(("subscriptionGroupIdentifier", group))
        }
        if let inAppOwnershipType { items.append(("inAppOwnershipType", inAppOwnershipType.rawValue)) }
        if let revoked { items.append(("revoked", revoked ? "true" : "false")) }
        return items
    }
}
