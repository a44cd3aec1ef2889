/// Why a paid subscription churned, in the four groups analytics reports.
/// - Note: Immutable value; `Sendable`.
public enum ChurnReason: String, Sendable, Hashable, Codable, CaseIterable {
    /// The customer chose to leave: auto-renew off, or no consent to a price increase.
    case voluntary = "VOLUNTARY"
    /// Billing failed and was never recovered.
    case involuntary = "INVOLUNTARY"
    /// The developer took the product off sale.
    case productUnavailable = "PRODUCT_UNAVAILABLE"
    /// Any other or unknown reason.
    case other = "OTHER"

    public init(_ reason: ExpirationReason?) {
        switch reason {
        case .customerCancelled?, .priceIncreaseNotConsented?, .paused?: self = .voluntary
        case .billingError?: self = .involuntary
        case .productNotAvailable?: self = .productUnavailable
        case .other?, .unknown?, nil: self = .other
        }
    }
}
