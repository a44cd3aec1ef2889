import AppStoreModels

/// Google Play's service fee on one purchase.
///
/// Auto-renewing subscriptions (installment plans included) pay 15 % from the first day.
/// Everything else (one-time products, prepaid plans) pays 15 % on the developer's first
/// 1M USD of earnings in a calendar year (developers enrolled in Google's 15 % tier,
/// `isEnrolled`) and 30 % above it; a developer not enrolled pays 30 % on them throughout.
///
/// The simplification: the threshold is reached by the developer's earnings across all
/// customers and apps, which no single customer's facts can tell, so the operator names the
/// day each year crossed it (`thresholdCrossings`); purchases from that day to the end of
/// that year pay 30 %. Without a crossing, 15 %. Exact figures from the orders API replace
/// this estimate order by order where the app reads them (`readOrderRevenue`; `PlayRevenue`).
/// - Note: Immutable value; `Sendable`.
public struct PlayCommissionRule: Sendable, Hashable, Codable {
    /// Why a rate was chosen.
    public enum Reason: String, Sendable, Hashable, Codable {
        case autoRenewingSubscription = "AUTO_RENEWING_SUBSCRIPTION"
        case firstMillionOfTheYear = "FIRST_MILLION_OF_THE_YEAR"
        case aboveMillionOfTheYear = "ABOVE_MILLION_OF_THE_YEAR"
        case notEnrolled = "NOT_ENROLLED"
        case nothingPaid = "NOTHING_PAID"
    }

    /// The rate of one purchase and why.
    public struct Decision: Sendable, Hashable, Codable {
        public var basisPoints: Int
        public var reason: Reason
    }

    public static let reducedBasisPoints = 1500
    public static let standardBasisPoints = 3000

    public static let maximumThresholdCrossings = 100

    /// Whether the developer enrolled in Google's 15 % service-fee tier (the default, as
    /// nearly every developer is).
    public var isEnrolled: Bool
    /// The day each year's earnings passed 1M USD; at most one per year.
    public var thresholdCrossings: [CalendarDay]

    public init(isEnrolled: Bool = true, thresholdCrossings: [CalendarDay] = []) {
        self.isEnrolled = isEnrolled
        self.thresholdCrossings = thresholdCrossings
    }

    private enum CodingKeys: String, CodingKey { case isEnrolled, thresholdCrossings }

    /// The admin API's shape (`googlePlay` in the analytics settings): absent members take
    /// their defaults.
    public init(from decoder: any Decoder) throws {
        let container = try decoder.container(keyedBy: CodingKeys.self)
        isEnrolled = try container.decodeIfPresent(Bool.self, forKey: .isEnrolled) ?? true
        thresholdCrossings = try container.decodeIfPresent([CalendarDay].self, forKey: .thresholdCrossings) ?? []
    }

    /// The first field out of bounds, `nil` when valid.
    public var validationFailure: String? {
        if thresholdCrossings.count > Self.maximumThresholdCrossings {
            return "googlePlay.thresholdCrossings has too many days"
        }
        if Set(thresholdCrossings.map(\.year)).count != thresholdCrossings.count {
            return "googlePlay.thresholdCrossings has two days in one year"
        }
        return nil
    }

    public func decision(isAutoRenewing: Bool, purchaseDate: Timestamp, isPaid: Bool) -> Decision {
        guard isPaid else { return Decision(basisPoints: 0, reason: .nothingPaid) }
        if isAutoRenewing { return Decision(basisPoints: Self.reducedBasisPoints, reason: .autoRenewingSubscription) }
        guard isEnrolled else { return Decision(basisPoints: Self.standardBasisPoints, reason: .notEnrolled) }
        let day = CalendarDay(containing: purchaseDate)
        if thresholdCrossings.contains(where: { $0.year == day.year && $0 <= day }) {
            return Decision(basisPoints: Self.standardBasisPoints, reason: .aboveMillionOfTheYear)
        }
        return Decision(basisPoints: Self.reducedBasisPoints, reason: .firstMillionOfTheYear)
    }
}
