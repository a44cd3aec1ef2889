import AppStoreModels

/// Which commission Apple took on one purchase: the storefront's rates (or the app's
/// default), reduced while the app is in the Small Business Program on the purchase day or
/// once an auto-renewable subscriber has one year of paid service in the group
/// (`PaidServiceAccrual`), standard otherwise.
/// - Note: Immutable value; `Sendable`.
public struct CommissionRule: Sendable, Hashable, Codable {
    /// Why a rate was chosen.
    public enum Reason: String, Sendable, Hashable, Codable {
        case standard = "STANDARD"
        case smallBusinessProgram = "SMALL_BUSINESS_PROGRAM"
        case oneYearOfPaidService = "ONE_YEAR_OF_PAID_SERVICE"
        /// Nothing was paid (trial, family sharing): no commission.
        case nothingPaid = "NOTHING_PAID"
    }

    /// The rate of one purchase and why.
    public struct Decision: Sendable, Hashable, Codable {
        public var basisPoints: Int
        public var reason: Reason
    }

    /// 365 days: Apple's "one year of paid service".
    public static let oneYearOfPaidService: Int64 = 365 * CivilCalendar.millisecondsPerDay

    public var defaultRates: CommissionRates
    /// Rates of storefronts that differ from the default, by Apple's alpha-3 code (`KOR`).
    public var ratesByStorefront: [String: CommissionRates]
    public var smallBusinessProgram: [SmallBusinessProgramPeriod]
    /// Google Play's service fee, for Play purchases (`PlayCommissionRule`).
    public var play: PlayCommissionRule

    public init(
        defaultRates: CommissionRates = .apple, ratesByStorefront: [String: CommissionRates] = [:],
        smallBusinessProgram: [SmallBusinessProgramPeriod] = [], play: PlayCommissionRule = PlayCommissionRule()
    ) {
        self.defaultRates = defaultRates
        self.ratesByStorefront = ratesByStorefront
        self.smallBusinessProgram = smallBusinessProgram
        self.play = play
    }

    public func rates(storefront: String?) -> CommissionRates {
        storefront.flatMap { ratesByStorefront[$0] } ?? defaultRates
    }

    /// - Parameter paidServiceBefore: milliseconds of paid service in the subscription group
    ///   before this purchase; `nil` for anything but an auto-renewable subscription.
    public func decision(storefront: String?, purchaseDate: Timestamp, paidServiceBefore: Int64?) -> Decision {
        let rates = rates(storefront: storefront)
        let day = CalendarDay(containing: purchaseDate)
        if smallBusinessProgram.contains(where: { $0.contains(day) }) {
            return Decision(basisPoints: rates.reduced, reason: .smallBusinessProgram)
        }
        if let paidServiceBefore, paidServiceBefore >= Self.oneYearOfPaidService {
            return Decision(basisPoints: rates.reduced, reason: .oneYearOfPaidService)
        }
        return Decision(basisPoints: rates.standard, reason: .standard)
    }
}
