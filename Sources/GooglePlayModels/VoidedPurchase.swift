/// One voided purchase of `purchases.voidedpurchases.list`: refunded, charged back or revoked.
/// - Note: Immutable value; `Sendable`.
public struct VoidedPurchase: Sendable, Hashable, Codable {
    /// `androidpublisher#voidedPurchase`.
    public var kind: String?
    public var purchaseToken: String?
    public var purchaseTimeMillis: EpochMillisString?
    public var voidedTimeMillis: EpochMillisString?
    /// Unique per order; renewals of one subscription share a purchase token but not an order id.
    public var orderId: String?
    public var voidedSource: PlayRawEnum<VoidedSource>?
    public var voidedReason: PlayRawEnum<VoidedReason>?
    /// Set for a quantity-based partial refund: how many units were refunded.
    public var voidedQuantity: Int32?

    public init(
        kind: String? = "androidpublisher#voidedPurchase", purchaseToken: String? = nil,
        purchaseTimeMillis: EpochMillisString? = nil, voidedTimeMillis: EpochMillisString? = nil,
        orderId: String? = nil, voidedSource: PlayRawEnum<VoidedSource>? = nil,
        voidedReason: PlayRawEnum<VoidedReason>? = nil, voidedQuantity: Int32? = nil
    ) {
        self.kind = kind
        self.purchaseToken = purchaseToken
        self.purchaseTimeMillis = purchaseTimeMillis
        self.voidedTimeMillis = voidedTimeMillis
        self.orderId = orderId
        self.voidedSource = voidedSource
        self.voidedReason = voidedReason
        self.voidedQuantity = voidedQuantity
    }
}

/// `VoidedPurchase.voidedSource`: who voided it.
public enum VoidedSource: Int32, Sendable, Hashable, Codable, CaseIterable {
    case user = 0
    case developer = 1
    case google = 2
}

/// `VoidedPurchase.voidedReason`.
public enum VoidedReason: Int32, Sendable, Hashable, Codable, CaseIterable {
    case other = 0
    case remorse = 1
    case notReceived = 2
    case defective = 3
    case accidentalPurchase = 4
    case fraud = 5
    case friendlyFraud = 6
    case chargeback = 7
    /// Google refunded it because it was not acknowledged within three days.
    case unacknowledgedPurchase = 8
}

/// A page of `purchases.voidedpurchases.list`; `tokenPagination.nextPageToken` asks for the
/// next one.
/// - Note: Immutable value; `Sendable`.
public struct VoidedPurchasesListResponse: Sendable, Hashable, Codable {
    public var voidedPurchases: [VoidedPurchase]?
    public var pageInfo: PageInfo?
    public var tokenPagination: TokenPagination?

    public init(
        voidedPurchases: [VoidedPurchase]? = nil, pageInfo: PageInfo? = nil, tokenPagination: TokenPagination? = nil
    ) {
        self.voidedPurchases = voidedPurchases
        self.pageInfo = pageInfo
        self.tokenPagination = tokenPagination
    }
}

/// Indexed paging information of a list response.
/// - Note: Immutable value; `Sendable`.
public struct PageInfo: Sendable, Hashable, Codable {
    public var totalResults: Int32?
    public var resultPerPage: Int32?
    public var startIndex: Int32?

    public init(totalResults: Int32? = nil, resultPerPage: Int32? = nil, startIndex: Int32? = nil) {
        self.totalResults = totalResults
        self.resultPerPage = resultPerPage
        self.startIndex = startIndex
    }
}

/// Token paging information of a list response.
/// - Note: Immutable value; `Sendable`.
public struct TokenPagination: Sendable, Hashable, Codable {
    public var nextPageToken: String?
    public var previousPageToken: String?

    public init(nextPageToken: String? = nil, previousPageToken: String? = nil) {
        self.nextPageToken = nextPageToken
        self.previousPageToken = previousPageToken
    }
}
