import AppStoreModels

/// Google Play's service fee on one purchase.
///
/// Auto-renewing subscriptions (installment plans included) pay 15 % from the first day.
/// Everything else (one-time products, prepaid plans) pays 15 % on the developer's first
/// 1M USD of earnings in a calendar year (enrolled developers) and 30 % above it.
///
/// The simplification: the threshold is reached by the developer's earnings across all
/// customers and apps, which no single customer's facts can tell, so the operator names the
/// day each year crossed it (`thresholdCrossings`); purchases from that day to the end of
/// that year pay 30 %. Without a crossing, 15 %. Exact figures from the orders API, when the
/// wiring provides them, replace this estimate.
/// - Note: Immutable value; `Sendable`.
public struct PlayCommissionRule: Sendable, Hashable, Codable {
    /// Why a rate was chosen.
    public enum Reason: String, Sendable, Hashable, Codable {
        case autoRenewingSubscription = "AUTO_RENEWING_SUBSCRIPTION"
        case firstMillionOfTheYear = "FIRST_MILLION_OF_THE_YEAR"
        case aboveMillionOfTheYear = "ABOVE_MILLION_OF_THE_YEAR"
        case nothingPaid = "NOTHING_PAID"
    }

    /// The rate of one purchase and why.
    public struct Decision: Sendable, Hashable, Codable {
        public var basisPoints: Int
        public var reason: Reason
    }

    public static let reducedBasisPoints = 1500
    public static let standardBasisPoints = 3000

    /// The day each year's earnings passed 1M USD; at most one per year.
    public var thresholdCrossings: [CalendarDay]

    public init(thresholdCrossings: [CalendarDay] = []) {
        self.thresholdCrossings = thresholdCrossings
    }

    public func decision(isAutoRenewing: Bool, purchaseDate: Timestamp, isPaid: Bool) -> Decision {
        guard isPaid else { return Decision(basisPoints: 0, reason: .nothingPaid) }
        if isAutoRenewing { return Decision(basisPoints: Self.reducedBasisPoints, reason: .autoRenewingSubscription) }
        let day = CalendarDay(containing: purchaseDate)
        if thresholdCrossings.contains(where: { $0.year == day.year && $0 <= day }) {
            return Decision(basisPoints: Self.standardBasisPoints, reason: .aboveMillionOfTheYear)
        }
        return Decision(basisPoints: Self.reducedBasisPoints, reason: .firstMillionOfTheYear)
    }
}
