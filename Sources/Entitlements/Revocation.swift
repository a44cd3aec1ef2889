import AppStoreModels

/// Why Apple refunded a transaction (`revocationReason` / legacy `cancellation_reason`).
/// - Note: Immutable value; `Sendable`.
public enum RefundReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// `1`: the customer reported an issue with the app (developer issue).
    case developerIssue = "DEVELOPER_ISSUE"
    /// `0`: any other reason (accidental purchase, …).
    case other = "OTHER"
    /// A reason Apple has not documented yet, or none given.
    case unknown = "UNKNOWN"

    init(appleCode: Int32?) {
        switch appleCode {
        case 1?: self = .developerIssue
        case 0?: self = .other
        default: self = .unknown
        }
    }

    var text: String {
        switch self {
        case .developerIssue: return "developer issue"
        case .other: return "other reason"
        case .unknown: return "reason not given"
        }
    }
}

/// How access to a transaction was taken away before its natural end.
///
/// A refund and a Family Sharing revocation both carry a `revocationDate`, but only a refund
/// takes money back: the family member never paid. Upgrades also revoke the old transaction
/// (`isUpgraded`); those are product changes and never appear here.
/// - Note: Immutable value; `Sendable`.
public struct Revocation: Sendable, Hashable, Codable {
    /// The two kinds of revocation.
    public enum Kind: String, Sendable, Hashable, Codable {
        case refund = "REFUND"
        case familySharingRevoked = "FAMILY_SHARING_REVOKED"
    }

    public var kind: Kind
    public var revokedAt: Timestamp
    /// Refunds only.
    public var refundReason: RefundReason?
    /// Refunded share in thousandths of a percent (100000 = full); `nil` = full.
    public var refundPercentage: Int32?

    public init(kind: Kind, revokedAt: Timestamp, refundReason: RefundReason?, refundPercentage: Int32?) {
        self.kind = kind
        self.revokedAt = revokedAt
        self.refundReason = refundReason
        self.refundPercentage = refundPercentage
    }

    var text: String {
        switch kind {
        case .refund:
            let share = refundPercentage.map { $0 < 100_000 ? " (\(Double($0) / 1000) %)" : "" } ?? ""
            return "refunded \(revokedAt.humanReadable)\(share): \((refundReason ?? .unknown).text)"
        case .familySharingRevoked:
            return "family sharing revoked \(revokedAt.humanReadable): no longer shared with this customer"
        }
    }
}

/// Why a subscription ended, from Apple's `expirationIntent` or the `EXPIRED` subtype.
/// - Note: Immutable value; `Sendable`.
public enum ExpirationReason: String, Sendable, Hashable, Codable, CaseIterable {
    case customerCancelled = "CUSTOMER_CANCELLED"
    case billingError = "BILLING_ERROR"
    case priceIncreaseNotConsented = "PRICE_INCREASE_NOT_CONSENTED"
    case productNotAvailable = "PRODUCT_NOT_AVAILABLE"
    /// Google Play: the customer paused the subscription.
    case paused = "PAUSED"
    case other = "OTHER"
    case unknown = "UNKNOWN"

    init?(intent: Int32?) {
        switch intent {
        case 1?: self = .customerCancelled
        case 2?: self = .billingError
        case 3?: self = .priceIncreaseNotConsented
        case 4?: self = .productNotAvailable
        case 5?: self = .other
        default: return nil
        }
    }

    init?(expiredSubtype: String?) {
        switch expiredSubtype {
        case Subtype.voluntary.rawValue?: self = .customerCancelled
        case Subtype.billingRetry.rawValue?: self = .billingError
        case Subtype.priceIncrease.rawValue?: self = .priceIncreaseNotConsented
        case Subtype.productNotForSale.rawValue?: self = .productNotAvailable
        default: return nil
        }
    }

    var text: String {
        switch self {
        case .customerCancelled: return "auto-renew off by customer"
        case .billingError: return "billing error, payment never recovered"
        case .priceIncreaseNotConsented: return "customer did not consent to the price increase"
        case .productNotAvailable: return "product no longer for sale"
        case .paused: return "paused by the customer"
        case .other: return "other reason"
        case .unknown: return "reason unknown"
        }
    }
}
