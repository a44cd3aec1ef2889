/// The body of `purchases.subscriptions.acknowledge`.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionPurchasesAcknowledgeRequest: Sendable, Hashable, Codable {
    public var developerPayload: String?
    public var externalAccountIds: ExternalAccountIds?

    public init(developerPayload: String? = nil, externalAccountIds: ExternalAccountIds? = nil) {
        self.developerPayload = developerPayload
        self.externalAccountIds = externalAccountIds
    }
}

/// Account ids an acknowledgement may attach to a purchase made outside the app.
/// - Note: Immutable value; `Sendable`.
public struct ExternalAccountIds: Sendable, Hashable, Codable {
    public var obfuscatedAccountId: String?
    public var obfuscatedProfileId: String?

    public init(obfuscatedAccountId: String? = nil, obfuscatedProfileId: String? = nil) {
        self.obfuscatedAccountId = obfuscatedAccountId
        self.obfuscatedProfileId = obfuscatedProfileId
    }
}

/// The body of `purchases.products.acknowledge`.
/// - Note: Immutable value; `Sendable`.
public struct ProductPurchasesAcknowledgeRequest: Sendable, Hashable, Codable {
    public var developerPayload: String?

    public init(developerPayload: String? = nil) { self.developerPayload = developerPayload }
}
