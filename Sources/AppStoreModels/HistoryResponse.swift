/// One page of Get Transaction History: up to 20 signed transactions and the token for the next page.
///
/// Decoding fails (with the field path) only when a present field has the wrong JSON type; an
/// unknown `environment` decodes with its raw value kept.
/// - Note: Immutable value; `Sendable`.
public struct HistoryResponse: Sendable, Hashable, Codable {
    // Declared (and therefore decoded) identity fields first: when Apple's body is malformed in
    // several places, the error names the app identifier, as Apple's libraries report it.
    public var appAppleId: Int64?
    public var bundleId: String?
    public var environment: RawEnum<AppStoreEnvironment>?
    /// Opaque token to pass as `revision` for the next page.
    public var revision: String?
    public var hasMore: Bool?
    public var signedTransactions: [String]?

    public init(
        revision: String? = nil, hasMore: Bool? = nil, bundleId: String? = nil,
        appAppleId: Int64? = nil,
        environment: RawEnum<AppStoreEnvironment>? = nil, signedTransactions: [String]? = nil
    ) {
        self.revision = revision
        self.hasMore = hasMore
        self.bundleId = bundleId
        self.appAppleId = appAppleId
        self.environment = environment
        self.signedTransactions = signedTransactions
    }
}
