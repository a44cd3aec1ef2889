/// An item that renews automatically, with its price and what is changing about it.
/// - Note: Immutable value; `Sendable`.
public struct AutoRenewingPlan: Sendable, Hashable, Codable {
    /// False once the user canceled: the item lapses at `expiryTime`.
    public var autoRenewEnabled: Bool?
    public var recurringPrice: Money?
    public var priceChangeDetails: SubscriptionItemPriceChangeDetails?
    public var installmentDetails: InstallmentPlan?
    public var priceStepUpConsentDetails: PriceStepUpConsentDetails?

    public init(
        autoRenewEnabled: Bool? = nil, recurringPrice: Money? = nil,
        priceChangeDetails: SubscriptionItemPriceChangeDetails? = nil, installmentDetails: InstallmentPlan? = nil,
        priceStepUpConsentDetails: PriceStepUpConsentDetails? = nil
    ) {
        self.autoRenewEnabled = autoRenewEnabled
        self.recurringPrice = recurringPrice
        self.priceChangeDetails = priceChangeDetails
        self.installmentDetails = installmentDetails
        self.priceStepUpConsentDetails = priceStepUpConsentDetails
    }
}

/// Google's `Money`: `units` (a decimal string of whole units) plus `nanos` (billionths, same
/// sign as `units`) in `currencyCode`.
/// - Note: Immutable value; `Sendable`.
public struct Money: Sendable, Hashable, Codable {
    public var currencyCode: String?
    public var units: String?
    public var nanos: Int32?

    public init(currencyCode: String? = nil, units: String? = nil, nanos: Int32? = nil) {
        self.currencyCode = currencyCode
        self.units = units
        self.nanos = nanos
    }

    /// The amount in millionths of the currency unit (the App Store's milliunits are
    /// thousandths), nil when `units` is not an integer or the value overflows.
    public var micros: Int64? {
        guard let whole = Int64(units ?? "0") else { return nil }
        let (scaled, overflow) = whole.multipliedReportingOverflow(by: 1_000_000)
        guard !overflow else { return nil }
        return scaled + Int64(nanos ?? 0) / 1000
    }
}

/// A price change of an item: the new price, when it will be charged, and its state.
/// - Note: Immutable value; `Sendable`.
public struct SubscriptionItemPriceChangeDetails: Sendable, Hashable, Codable {
    public var newPrice: Money?
    public var priceChangeMode: PlayRawEnum<PriceChangeMode>?
    public var priceChangeState: PlayRawEnum<PriceChangeState>?
    public var expectedNewPriceChargeTime: GoogleDateTime?

    public init(
        newPrice: Money? = nil, priceChangeMode: PlayRawEnum<PriceChangeMode>? = nil,
        priceChangeState: PlayRawEnum<PriceChangeState>? = nil, expectedNewPriceChargeTime: GoogleDateTime? = nil
    ) {
        self.newPrice = newPrice
        self.priceChangeMode = priceChangeMode
        self.priceChangeState = priceChangeState
        self.expectedNewPriceChargeTime = expectedNewPriceChargeTime
    }
}

/// `SubscriptionItemPriceChangeDetails.priceChangeMode`.
public enum PriceChangeMode: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "PRICE_CHANGE_MODE_UNSPECIFIED"
    case priceDecrease = "PRICE_DECREASE"
    case priceIncrease = "PRICE_INCREASE"
    case optOutPriceIncrease = "OPT_OUT_PRICE_INCREASE"
}

/// `SubscriptionItemPriceChangeDetails.priceChangeState`.
public enum PriceChangeState: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "PRICE_CHANGE_STATE_UNSPECIFIED"
    case outstanding = "OUTSTANDING"
    case confirmed = "CONFIRMED"
    case applied = "APPLIED"
    case canceled = "CANCELED"
}

/// An installment plan: a commitment to a number of payments.
/// - Note: Immutable value; `Sendable`.
public struct InstallmentPlan: Sendable, Hashable, Codable {
    public var initialCommittedPaymentsCount: Int32?
    public var subsequentCommittedPaymentsCount: Int32?
    public var remainingCommittedPaymentsCount: Int32?
    /// Present (as `{}`) when the user canceled and the plan ends after the committed payments.
    public var pendingCancellation: PendingCancellation?

    public init(
        initialCommittedPaymentsCount: Int32? = nil, subsequentCommittedPaymentsCount: Int32? = nil,
        remainingCommittedPaymentsCount: Int32? = nil, pendingCancellation: PendingCancellation? = nil
    ) {
        self.initialCommittedPaymentsCount = initialCommittedPaymentsCount
        self.subsequentCommittedPaymentsCount = subsequentCommittedPaymentsCount
        self.remainingCommittedPaymentsCount = remainingCommittedPaymentsCount
        self.pendingCancellation = pendingCancellation
    }
}

public struct PendingCancellation: Sendable, Hashable, Codable { public init() {} }

/// A price step-up that needs the user's consent before `consentDeadlineTime`.
/// - Note: Immutable value; `Sendable`.
public struct PriceStepUpConsentDetails: Sendable, Hashable, Codable {
    public var state: PlayRawEnum<PriceStepUpConsentState>?
    public var newPrice: Money?
    public var consentDeadlineTime: GoogleDateTime?

    public init(
        state: PlayRawEnum<PriceStepUpConsentState>? = nil, newPrice: Money? = nil,
        consentDeadlineTime: GoogleDateTime? = nil
    ) {
        self.state = state
        self.newPrice = newPrice
        self.consentDeadlineTime = consentDeadlineTime
    }
}

/// `PriceStepUpConsentDetails.state`.
public enum PriceStepUpConsentState: String, Sendable, Hashable, Codable, CaseIterable {
    case unspecified = "CONSENT_STATE_UNSPECIFIED"
    case pending = "PENDING"
    case confirmed = "CONFIRMED"
    case completed = "COMPLETED"
}
